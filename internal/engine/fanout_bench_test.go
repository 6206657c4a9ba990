package engine

import (
	"context"
	"fmt"
	"strconv"
	"testing"
)

// BenchmarkRangeFanOut reads a whole container of eight physical
// partitions with SELECT * FROM c, once unscoped ("whole") and once as
// an SDK that fans out does, one range at a time ("fan-out"), with
// every item in its own logical partition ("pk-per-item") or 100 items
// to a logical partition ("pk-per-100").
func BenchmarkRangeFanOut(b *testing.B) {
	const items = 10000
	for _, perPK := range []int{1, 100} {
		e, _ := newTestEngine(b)
		ctx := context.Background()
		mustCreateWith(b, e, "db", `{"id":"c","partitionKey":{"paths":["/pk"],"kind":"Hash","version":2}}`, ThroughputHeaders{Partitions: "8"})
		for i := range items {
			pk := "k" + strconv.Itoa(i/perPK)
			ref := ItemRef{DB: "db", Coll: "c", PK: `["` + pk + `"]`, HasPK: true}
			if _, err := e.WriteItem(ctx, ref, Create, fmt.Appendf(nil, `{"id":"i%d","pk":"%s","n":%d}`, i, pk, i), ""); err != nil {
				b.Fatal(err)
			}
		}
		ranges := rangeIDs(b, e, "c")
		name := "pk-per-item"
		if perPK > 1 {
			name = fmt.Sprintf("pk-per-%d", perPK)
		}
		read := func(b *testing.B, rangeID string) int {
			req := QueryRequest{Ref: ItemRef{DB: "db", Coll: "c"}, Body: queryBody("SELECT * FROM c"), RangeID: rangeID, CrossPartition: true, MaxItemCount: 1000}
			return len(queryPages(b, e, req))
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
