package engine

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ebbdb/ebb/internal/clock"
)

// BenchmarkDeletePartition deletes a logical partition of 100,000 small
// items on a container provisioned with 1,000,000 RU/s (the deleter
// spends a tenth of it) while one client reads items of another
// partition, and reports the time until the partition is invisible (the
// request), the time until every item is deleted, and the other client's
// point-read p99 before and during the deletion:
//
//	go test -bench DeletePartition -benchtime 1x -run '^$' ./internal/engine/
func BenchmarkDeletePartition(b *testing.B) {
	const items = 100_000
	ctx := context.Background()
	real := clock.NewSystem()
	b.StopTimer()
	for range b.N {
		e := newBenchEngine(b)
		if _, err := e.CreateDatabase(ctx, []byte(`{"id":"db"}`), ThroughputHeaders{}); err != nil {
			b.Fatal(err)
		}
		if _, err := e.CreateContainer(ctx, "db", []byte(`{"id":"c","partitionKey":{"paths":["/pk"]}}`), ThroughputHeaders{Offer: "1000000"}); err != nil {
			b.Fatal(err)
		}
		loadPartition(b, e, "gone", items)
		loadPartition(b, e, "kept", 1000)
		readP99 := func(d time.Duration) time.Duration {
			var lat []time.Duration
			for start := real.Elapsed(); real.Elapsed()-start < d; {
				id := "kept-" + strconv.Itoa(len(lat)%1000)
				t0 := real.Elapsed()
				if _, err := e.ReadItem(ctx, ItemRef{DB: "db", Coll: "c", ID: id, PK: `["kept"]`, HasPK: true}, ""); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, real.Elapsed()-t0)
			}
			slices.Sort(lat)
			return lat[len(lat)*99/100]
		}
		idle := readP99(2 * time.Second)
		b.StartTimer()

		t0 := real.Elapsed()
		if _, err := e.DeletePartition(ctx, ItemRef{DB: "db", Coll: "c", PK: `["gone"]`, HasPK: true}); err != nil {
			b.Fatal(err)
		}
		invisible := real.Elapsed() - t0
		var during time.Duration
		var wg sync.WaitGroup
		done := make(chan struct{})
		wg.Add(1)
		go func() {
			defer wg.Done()
			during = readP99(time.Second)
			for {
				select {
				case <-done:
					return
				default:
				}
				if d := readP99(time.Second); d > during {
					during = d
				}
			}
		}()
		for e.StoredItems() > 1000 {
			ch, cancel := real.After(10 * time.Millisecond)
			<-ch
			cancel()
		}
		purged := real.Elapsed() - t0
		close(done)
		wg.Wait()
		b.StopTimer()
		b.ReportMetric(float64(invisible.Microseconds())/1000, "ms-to-invisible")
		b.ReportMetric(purged.Seconds(), "s-to-purged")
		b.ReportMetric(float64(idle.Microseconds())/1000, "ms-read-p99-idle")
		b.ReportMetric(float64(during.Microseconds())/1000, "ms-read-p99-during")
		e.Close()
	}
}

// loadPartition writes n items of about 100 bytes to partition pk of
// db/c in transactional batches.
func loadPartition(b *testing.B, e *Engine, pk string, n int) {
	ctx := context.Background()
	for i := 0; i < n; i += MaxBatchOperations {
		var body strings.Builder
		body.WriteByte('[')
		for j := i; j < min(n, i+MaxBatchOperations); j++ {
			if j > i {
				body.WriteByte(',')
			}
			body.WriteString(`{"operationType":"Create","resourceBody":{"id":"` + pk + `-` + strconv.Itoa(j) + `","pk":"` + pk + `","n":` + strconv.Itoa(j) + `,"pad":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}}`)
		}
		body.WriteByte(']')
		res, err := e.ExecuteBatch(ctx, ItemRef{DB: "db", Coll: "c", PK: `["` + pk + `"]`, HasPK: true}, []byte(body.String()), BatchOptions{Atomic: true})
		if err != nil || res.Failed {
			b.Fatalf("load: %v %+v", err, res.Ops[0])
		}
	}
}
