package engine

import (
	"context"
	"strings"
	"testing"
)

// TestPatchDepth: a patch may not nest the document beyond the limit a
// write's body has, though each value it sends is within it; one that
// writes deep and then removes what it wrote stays within it.
func TestPatchDepth(t *testing.T) {
	e, _ := newTestEngine(t)
	mustCreate(t, e, "db", "c", `{"id":"c","partitionKey":{"paths":["/pk"]}}`)
	ctx := context.Background()
	ref := ItemRef{DB: "db", Coll: "c", ID: "a", PK: `["p"]`, HasPK: true}
	if _, err := e.WriteItem(ctx, ref, Create, []byte(`{"id":"a","pk":"p","a":{"b":{}}}`), ""); err != nil {
		t.Fatal(err)
	}
	deep := strings.Repeat(`[`, 126) + strings.Repeat(`]`, 126)
	for _, tc := range []struct{ name, ops, want string }{
		{"within the limit", `[{"op":"set","path":"/x","value":` + deep + `}]`, ""},
		{"beyond it", `[{"op":"set","path":"/a/b/x","value":` + deep + `}]`, "The document nests objects and arrays more than 128 levels deep."},
		{"moved beyond it", `[{"op":"set","path":"/x","value":` + deep + `},{"op":"move","from":"/x","path":"/a/b/y"}]`, "The document nests objects and arrays more than 128 levels deep."},
		{"beyond it, then removed", `[{"op":"set","path":"/a/b/x","value":` + deep + `},{"op":"remove","path":"/a/b/x"}]`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.PatchItem(ctx, ref, []byte(tc.ops), "")
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || err.Error() != tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
}
