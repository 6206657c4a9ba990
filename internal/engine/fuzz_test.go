package engine

import (
	"context"
	"testing"

	"github.com/ebbdb/ebb/internal/clock"
)

// newTestEngine is an engine over a fresh strict in-memory store
// (memStore) on a manual clock.
func newTestEngine(t testing.TB) (*Engine, *clock.Manual) {
	t.Helper()
	return openEngine(t, memStore(t), Options{})
}

func mustCreate(t testing.TB, e *Engine, db, coll, body string) {
	t.Helper()
	mustCreateWith(t, e, db, body, ThroughputHeaders{})
	_ = coll
}

// mustCreateWith creates the container body in database db (created
// when missing) with the create request's headers th.
func mustCreateWith(t testing.TB, e *Engine, db, body string, th ThroughputHeaders) {
	t.Helper()
	ctx := context.Background()
	if _, err := e.ReadDatabase(ctx, db); err != nil {
		if _, err := e.CreateDatabase(ctx, []byte(`{"id":"`+db+`"}`), ThroughputHeaders{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.CreateContainer(ctx, db, []byte(body), th); err != nil {
		t.Fatal(err)
	}
}

// FuzzWriteItem sends arbitrary bodies and partition key headers through
// every document write and read: any input may be refused, none may
// panic, and an accepted document must read back.
func FuzzWriteItem(f *testing.F) {
	for _, seed := range []struct{ body, pk string }{
		{`{"id":"a","pk":"x"}`, `["x"]`},
		{`{"id":"a","pk":{"n":[1,2]}}`, `[{}]`},
		{`{"id":"a","pk":1e400}`, `[1]`},
		{`{"id":"a","pk":null,"ttl":-1}`, `[null]`},
		{`{"id":"\u0000","pk":"\ud800"}`, `["\ud800"]`},
		{`[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]`, `[]`},
		{"{\"id\":\"\xff\",\"pk\":\"x\"}", `["x"]`},
		{`{"id":"a","pk":"x","ttl":10.5}`, `["x",1]`},
	} {
		f.Add(seed.body, seed.pk)
	}
	e, _ := newTestEngine(f)
	mustCreate(f, e, "db", "c", `{"id":"c","partitionKey":{"paths":["/pk"],"kind":"Hash"},"defaultTtl":-1}`)
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, body, pkHeader string) {
		ref := ItemRef{DB: "db", Coll: "c", PK: pkHeader, HasPK: true}
		for _, kind := range []WriteKind{Create, Upsert} {
			res, err := e.WriteItem(ctx, ref, kind, []byte(body), "")
			if err != nil {
				if _, ok := err.(*Error); !ok {
					t.Fatalf("internal error for %q: %v", body, err)
				}
				continue
			}
			if len(res.Body) == 0 {
				t.Fatalf("accepted %q but returned no document", body)
			}
		}
		_, _ = e.ReadItem(ctx, ItemRef{DB: "db", Coll: "c", ID: "a", PK: pkHeader, HasPK: true}, "")
		_, _ = e.ReadFeed(ctx, QueryRequest{Ref: ItemRef{DB: "db", Coll: "c"}})
		_, _ = e.PatchItem(ctx, ItemRef{DB: "db", Coll: "c", ID: "a", PK: pkHeader, HasPK: true}, []byte(body), "")
	})
}
