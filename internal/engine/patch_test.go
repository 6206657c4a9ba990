package engine

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/ebbdb/ebb/internal/storage/pebble"
	"github.com/ebbdb/ebb/internal/storage/storagetest"
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

// TestPatchRunTwice: a patch's transaction may run again after a
// conflict (PostgreSQL), and the second run must write what one run
// would, even where one operation writes into a value another put in the
// document, or moves it.
func TestPatchRunTwice(t *testing.T) {
	store, err := pebble.OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	e, _ := openEngine(t, storagetest.Replaying(store), Options{})
	mustCreate(t, e, "db", "c", `{"id":"c","partitionKey":{"paths":["/pk"]}}`)
	ctx := context.Background()
	for i, tc := range []struct{ ops, want string }{
		{`[{"op":"set","path":"/a","value":{"n":1}},{"op":"incr","path":"/a/n","value":1}]`, `"a":{"n":2}`},
		{`[{"op":"add","path":"/a","value":[1]},{"op":"add","path":"/a/-","value":2}]`, `"a":[1,2]`},
		{`[{"op":"set","path":"/a","value":{"b":{}}},{"op":"set","path":"/a/b/c","value":3},{"op":"remove","path":"/a/b/c"}]`, `"a":{"b":{}}`},
		{`[{"op":"set","path":"/x","value":{"n":1}},{"op":"move","from":"/x","path":"/a"},{"op":"incr","path":"/a/n","value":5}]`, `"a":{"n":6}`},
		{`[{"op":"incr","path":"/n","value":1},{"op":"incr","path":"/n","value":1}]`, `"n":7`},
	} {
		id := strconv.Itoa(i)
		ref := ItemRef{DB: "db", Coll: "c", ID: id, PK: `["p"]`, HasPK: true}
		if _, err := e.WriteItem(ctx, ref, Create, []byte(`{"id":"`+id+`","pk":"p","n":5}`), ""); err != nil {
			t.Fatal(err)
		}
		res, err := e.PatchItem(ctx, ref, []byte(tc.ops), "")
		if err != nil {
			t.Fatalf("%s: %v", tc.ops, err)
		}
		if !strings.Contains(string(res.Body), tc.want) {
			t.Errorf("%s: got %s, want it to hold %s", tc.ops, res.Body, tc.want)
		}
	}
}
