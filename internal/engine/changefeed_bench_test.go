package engine

import (
	"context"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkWriteItem measures the engine's upsert of a 1 KB item over
// in-memory Pebble, on a container without and with the all-versions
// change log, so the cost of the latest-version index and of the log
// shows apart from HTTP and the SDK.
func BenchmarkWriteItem(b *testing.B) {
	pad := strings.Repeat("x", 1000)
	for _, tc := range []struct{ name, policy string }{
		{"plain", ""},
		{"avad", `,"changeFeedPolicy":{"retentionDuration":60}`},
	} {
		b.Run(tc.name, func(b *testing.B) {
			e, _ := newTestEngine(b)
			mustCreate(b, e, "db", "c", `{"id":"c","partitionKey":{"paths":["/pk"]}`+tc.policy+`}`)
			ref := ItemRef{DB: "db", Coll: "c", PK: `["p"]`, HasPK: true}
			ctx := context.Background()
			i := 0
			for b.Loop() {
				body := `{"id":"` + strconv.Itoa(i%1000) + `","pk":"p","pad":"` + pad + `"}`
				if _, err := e.WriteItem(ctx, ref, Upsert, []byte(body), ""); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// loadBatches writes n 1 KB items to container c of db in transactional
// batches of 100 (distinct ids, one partition key per batch).
func loadBatches(b *testing.B, e *Engine, coll string, n int) {
	b.Helper()
	pad := strings.Repeat("x", 1000)
	ctx := context.Background()
	for i := 0; i < n; i += MaxBatchOperations {
		pk := "p" + strconv.Itoa(i/MaxBatchOperations%50)
		var body strings.Builder
		body.WriteByte('[')
		for j := i; j < min(n, i+MaxBatchOperations); j++ {
			if j > i {
				body.WriteByte(',')
			}
			body.WriteString(`{"operationType":"Create","resourceBody":{"id":"` + strconv.Itoa(j) + `","pk":"` + pk + `","pad":"` + pad + `"}}`)
		}
		body.WriteByte(']')
		res, err := e.ExecuteBatch(ctx, ItemRef{DB: "db", Coll: coll, PK: `["` + pk + `"]`, HasPK: true}, []byte(body.String()), BatchOptions{Atomic: true})
		if err != nil || res.Failed {
			b.Fatalf("load: %v %+v", err, res.Ops[0])
		}
	}
}

// BenchmarkChangeFeedDrain reads 100,000 changes (1 KB items) from the
// beginning in pages of 1,000, in both modes, and reports items/s.
func BenchmarkChangeFeedDrain(b *testing.B) {
	const changes = 100_000
	e, _ := newTestEngine(b)
	mustCreate(b, e, "db", "c", `{"id":"c","partitionKey":{"paths":["/pk"]},"changeFeedPolicy":{"retentionDuration":60}}`)
	loadBatches(b, e, "c", changes)
	for _, mode := range []struct {
		name string
		mode ChangeFeedMode
		from string
	}{{"latest", LatestVersion, ""}, {"all-versions", AllVersionsAndDeletes, `"1"`}} {
		b.Run(mode.name, func(b *testing.B) {
			ctx := context.Background()
			for b.Loop() {
				etag, n := mode.from, 0
				for {
					res, err := e.ChangeFeed(ctx, ChangeFeedRequest{Ref: ItemRef{DB: "db", Coll: "c"}, Mode: mode.mode, IfNoneMatch: etag, MaxItemCount: 1000})
					if err != nil {
						b.Fatal(err)
					}
					if res.NotModified {
						break
					}
					n += len(res.Rows)
					etag = res.ETag
				}
				if n != changes {
					b.Fatalf("drained %d changes, want %d", n, changes)
				}
			}
			b.ReportMetric(float64(changes)*float64(b.N)/b.Elapsed().Seconds(), "items/s")
		})
	}
}

// BenchmarkBatchVsSingle writes 100 1 KB items as one transactional
// batch and as 100 single creates (in-memory Pebble: the difference is
// transactions, not fsyncs).
func BenchmarkBatchVsSingle(b *testing.B) {
	pad := strings.Repeat("x", 1000)
	ctx := context.Background()
	e, _ := newTestEngine(b)
	mustCreate(b, e, "db", "c", `{"id":"c","partitionKey":{"paths":["/pk"]}}`)
	ref := ItemRef{DB: "db", Coll: "c", PK: `["p"]`, HasPK: true}
	next := 0
	b.Run("batch-100", func(b *testing.B) {
		for b.Loop() {
			var body strings.Builder
			body.WriteByte('[')
			for j := range MaxBatchOperations {
				if j > 0 {
					body.WriteByte(',')
				}
				next++
				body.WriteString(`{"operationType":"Create","resourceBody":{"id":"` + strconv.Itoa(next) + `","pk":"p","pad":"` + pad + `"}}`)
			}
			body.WriteByte(']')
			if res, err := e.ExecuteBatch(ctx, ref, []byte(body.String()), BatchOptions{Atomic: true}); err != nil || res.Failed {
				b.Fatal(err)
			}
		}
	})
	b.Run("single-100", func(b *testing.B) {
		for b.Loop() {
			for range MaxBatchOperations {
				next++
				body := `{"id":"` + strconv.Itoa(next) + `","pk":"p","pad":"` + pad + `"}`
				if _, err := e.WriteItem(ctx, ref, Create, []byte(body), ""); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
