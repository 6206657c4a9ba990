package engine

import (
	"context"
	"strings"
	"testing"
)

// BenchmarkPatchItem measures patches of a 1 KB item over in-memory
// Pebble: reading the stored item, applying the operations and storing
// the result. "add to array" also removes an element, so the item keeps
// its size from one iteration to the next.
func BenchmarkPatchItem(b *testing.B) {
	pad := strings.Repeat("x", 900)
	for _, tc := range []struct{ name, ops string }{
		{"set", `[{"op":"set","path":"/status","value":"open"}]`},
		{"incr", `[{"op":"incr","path":"/n","value":1}]`},
		{"add to array", `[{"op":"add","path":"/tags/0","value":"t"},{"op":"remove","path":"/tags/5"}]`},
		{"set if", `{"condition":"from c where c.n >= 0","operations":[{"op":"set","path":"/status","value":"open"}]}`},
	} {
		b.Run(tc.name, func(b *testing.B) {
			e, _ := newTestEngine(b)
			mustCreate(b, e, "db", "c", `{"id":"c","partitionKey":{"paths":["/pk"]}}`)
			ref := ItemRef{DB: "db", Coll: "c", ID: "a", PK: `["p"]`, HasPK: true}
			ctx := context.Background()
			doc := `{"id":"a","pk":"p","n":0,"status":"new","tags":["a","b","c","d","e"],"nested":{"x":[1,2,{"y":true}]},"pad":"` + pad + `"}`
			if _, err := e.WriteItem(ctx, ref, Create, []byte(doc), ""); err != nil {
				b.Fatal(err)
			}
			ops := []byte(tc.ops)
			for b.Loop() {
				if _, err := e.PatchItem(ctx, ref, ops, ""); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
