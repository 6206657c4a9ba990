package engine

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/ebbdb/ebb/internal/storage"
	"github.com/ebbdb/ebb/internal/storage/storagetest"
)

// strictStore holds the engine to the storage contract where Pebble
// alone would let it slip: every transaction runs twice, the first run
// rolled back (storagetest.Replaying), and every slice the store lends is
// overwritten when the loan ends (storagetest.Scribbling). The engine's
// tests run over it unless they need the store itself.
func strictStore(s storage.Store) storage.Store {
	return storagetest.Replaying(storagetest.Scribbling(s))
}

// TestPatchRunTwice: a patch's transaction may run again after a
// conflict (PostgreSQL), and the second run must write what one run
// would, even where one operation writes into a value another put in the
// document, or moves it.
func TestPatchRunTwice(t *testing.T) {
	e, _ := newTestEngine(t)
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

// TestBatchReadOutlivesTransaction: a batch's read answers with the item
// as it was read, though the transaction that read it has ended.
func TestBatchReadOutlivesTransaction(t *testing.T) {
	e, _ := newTestEngine(t)
	mustCreate(t, e, "db", "c", `{"id":"c","partitionKey":{"paths":["/pk"]}}`)
	ctx := context.Background()
	ref := ItemRef{DB: "db", Coll: "c", PK: `["p"]`, HasPK: true}
	res, err := e.ExecuteBatch(ctx, ref, []byte(`[{"operationType":"Create","resourceBody":{"id":"a","pk":"p","n":1}},{"operationType":"Read","id":"a"}]`), BatchOptions{Atomic: true})
	if err != nil || res.Failed {
		t.Fatalf("batch: %v %+v", err, res)
	}
	for i, op := range res.Ops {
		if !strings.HasPrefix(string(op.Resource.Body), `{"id":"a","pk":"p","n":1,`) {
			t.Errorf("operation %d answered %q", i+1, op.Resource.Body)
		}
	}
}
