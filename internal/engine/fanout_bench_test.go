package engine

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	"github.com/ebbdb/ebb/internal/storage/pebble"
	"github.com/ebbdb/ebb/internal/storage/postgres"
	"github.com/ebbdb/ebb/internal/storage/postgres/pgtest"
)

// BenchmarkRangeFanOut reads a whole container of eight physical
// partitions with SELECT * FROM c, once unscoped ("whole") and once as
// an SDK that fans out does, one range at a time ("fan-out"), with
// every item in its own logical partition ("pk-per-item") or 100 items
// to a logical partition ("pk-per-100"): 10,000 items in memory, 2,000
// on PostgreSQL (with EBB_TEST_POSTGRES_URL).
func BenchmarkRangeFanOut(b *testing.B) {
	b.Run("memory", func(b *testing.B) {
		store, err := pebble.OpenMemory()
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { store.Close() })
		e, _ := openEngine(b, store, Options{})
		benchmarkRangeFanOut(b, e, 10000)
	})
	b.Run("postgres", func(b *testing.B) {
		store, err := postgres.Open(context.Background(), pgtest.FreshSchema(b), postgres.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { store.Close() })
		e, _ := openEngine(b, store, Options{})
		benchmarkRangeFanOut(b, e, 2000)
	})
}

func benchmarkRangeFanOut(b *testing.B, e *Engine, items int) {
	ctx := context.Background()
	for _, perPK := range []int{1, 100} {
		coll := fmt.Sprintf("c%d", perPK)
		mustCreateWith(b, e, "db", `{"id":"`+coll+`","partitionKey":{"paths":["/pk"],"kind":"Hash","version":2}}`, ThroughputHeaders{Partitions: "8"})
		for i := range items {
			pk := "k" + strconv.Itoa(i/perPK)
			ref := ItemRef{DB: "db", Coll: coll, PK: `["` + pk + `"]`, HasPK: true}
			if _, err := e.WriteItem(ctx, ref, Create, fmt.Appendf(nil, `{"id":"i%d","pk":"%s","n":%d}`, i, pk, i), ""); err != nil {
				b.Fatal(err)
			}
		}
		ranges := rangeIDs(b, e, coll)
		read := func(b *testing.B, rangeID string) int {
			req := QueryRequest{Ref: ItemRef{DB: "db", Coll: coll}, Body: queryBody("SELECT * FROM c"), RangeID: rangeID, CrossPartition: true, MaxItemCount: 1000}
			return len(queryPages(b, e, req))
		}
		name := "pk-per-item"
		if perPK > 1 {
			name = fmt.Sprintf("pk-per-%d", perPK)
		}
		b.Run(name+"/whole", func(b *testing.B) {
			for b.Loop() {
				if n := read(b, ""); n != items {
					b.Fatalf("%d rows", n)
				}
			}
		})
		b.Run(name+"/fan-out", func(b *testing.B) {
			for b.Loop() {
				n := 0
				for _, r := range ranges {
					n += read(b, r)
				}
				if n != items {
					b.Fatalf("%d rows", n)
				}
			}
		})
	}
}
