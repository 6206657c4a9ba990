package engine

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ebbdb/ebb/internal/clock"
	"github.com/ebbdb/ebb/internal/storage/pebble"
)

// BenchmarkPurgeStorm loads b.N small items that all expire in the same
// second into a container of durable Pebble, provisioned so that the
// purger's budget never binds, moves the manual clock past their expiry
// and times the purge while one client reads items of another container.
// It reports items purged per second and that client's point-read p99
// before and during the storm:
//
//	go test -bench PurgeStorm -benchtime 200000x -run '^$' ./internal/engine/
func BenchmarkPurgeStorm(b *testing.B) {
	ctx := context.Background()
	real := clock.NewSystem()
	b.StopTimer()
	store, err := pebble.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	m := clock.NewManual(time.Unix(1_700_000_000, 0))
	var purged atomic.Int64
	e, err := Open(ctx, store, Options{Clock: m, OnPurge: func(time.Duration) { purged.Add(1) }})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	if _, err := e.CreateDatabase(ctx, []byte(`{"id":"db"}`), ThroughputHeaders{}); err != nil {
		b.Fatal(err)
	}
	for _, body := range []string{
		`{"id":"c","partitionKey":{"paths":["/pk"]},"defaultTtl":60}`,
		`{"id":"fg","partitionKey":{"paths":["/pk"]}}`,
	} {
		if _, err := e.CreateContainer(ctx, "db", []byte(body), ThroughputHeaders{Offer: "1000000"}); err != nil {
			b.Fatal(err)
		}
	}
	loadStorm(b, e, "c", b.N)
	loadStorm(b, e, "fg", 1000)
	read := func(i int) {
		pk := "p" + strconv.Itoa(i%1000%stormPartitions)
		ref := ItemRef{DB: "db", Coll: "fg", ID: "i" + strconv.Itoa(i%1000), PK: `["` + pk + `"]`, HasPK: true}
		if _, err := e.ReadItem(ctx, ref, ""); err != nil {
			b.Fatal(err)
		}
	}
	var idle []time.Duration
	for start := real.Elapsed(); real.Elapsed()-start < time.Second; {
		t0 := real.Elapsed()
		read(len(idle))
		idle = append(idle, real.Elapsed()-t0)
	}

	b.StartTimer()
	t0 := real.Elapsed()
	m.Advance(61 * time.Second)
	var during []time.Duration
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; !stop.Load(); i++ {
			t0 := real.Elapsed()
			read(i)
			during = append(during, real.Elapsed()-t0)
		}
	}()
	for purged.Load() < int64(b.N) {
		ch, cancel := real.After(time.Millisecond)
		<-ch
		cancel()
	}
	took := real.Elapsed() - t0
	b.StopTimer()
	stop.Store(true)
	wg.Wait()
	b.ReportMetric(float64(b.N)/took.Seconds(), "items/s")
	b.ReportMetric(p99ms(idle), "ms-read-p99-idle")
	b.ReportMetric(p99ms(during), "ms-read-p99-during")
}

const stormPartitions = 256

// loadStorm writes n small items spread over stormPartitions logical
// partitions of db/coll, in transactional batches.
func loadStorm(b *testing.B, e *Engine, coll string, n int) {
	ctx := context.Background()
	for p := range stormPartitions {
		pk := "p" + strconv.Itoa(p)
		var ops []string
		flush := func() {
			if len(ops) == 0 {
				return
			}
			body := "[" + strings.Join(ops, ",") + "]"
			ops = ops[:0]
			res, err := e.ExecuteBatch(ctx, ItemRef{DB: "db", Coll: coll, PK: `["` + pk + `"]`, HasPK: true}, []byte(body), BatchOptions{Atomic: true})
			if err != nil || res.Failed {
				b.Fatalf("load: %v", err)
			}
		}
		for i := p; i < n; i += stormPartitions {
			ops = append(ops, `{"operationType":"Create","resourceBody":{"id":"i`+strconv.Itoa(i)+`","pk":"`+pk+`","v":`+strconv.Itoa(i)+`}}`)
			if len(ops) == MaxBatchOperations {
				flush()
			}
		}
		flush()
	}
}

func p99ms(lat []time.Duration) float64 {
	if len(lat) == 0 {
		return 0
	}
	slices.Sort(lat)
	return float64(lat[len(lat)*99/100].Microseconds()) / 1000
}
