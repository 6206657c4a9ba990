package engine

import (
	"cmp"
	"context"
	"testing"
)

// FuzzRequestTokens sends arbitrary batch bodies, continuation tokens,
// partition key range ids and EPK bounds, the request inputs that name
// places in the engine's own state, through the batch, query, read
// feed, change feed and partition key range calls of a container with
// several physical partitions: any input may be refused, and every
// refusal is the client's error (an *Error with its status), never an
// internal one or a panic.
func FuzzRequestTokens(f *testing.F) {
	for _, seed := range []struct{ batch, token, rangeID, startEPK, endEPK string }{
		{`[{"operationType":"Create","resourceBody":{"id":"a","pk":"x"}}]`, "", "0", "", ""},
		{`[{"operationType":"Upsert","id":"a","resourceBody":{"id":"a","pk":"x"}},{"operationType":"Read","id":"a"}]`, `"5"`, "1", "", "FF"},
		{`[{"operationType":"Patch","id":"a","resourceBody":{"operations":[{"op":"incr","path":"/n","value":1}]}}]`, `[{"token":"x","range":{"min":"","max":"FF"}}]`, "2", "05C1", "3F"},
		{`[{"operationType":"Delete","id":"a","ifMatch":"\"0\""}]`, "*", "3", "3F", "3F"},
		{`{}`, `"pkranges-AAAAAA==-9"`, "99", "zz", ""},
		{`[{"operationType":"Replace"}]`, "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "-1", "", "00"},
	} {
		f.Add(seed.batch, seed.token, seed.rangeID, seed.startEPK, seed.endEPK)
	}
	e, _ := newTestEngine(f)
	mustCreateWith(f, e, "db", `{"id":"c","partitionKey":{"paths":["/pk"],"kind":"Hash","version":2},"defaultTtl":-1}`, ThroughputHeaders{Partitions: "4"})
	ctx := context.Background()
	for _, pk := range []string{"x", "y", "z", "w"} {
		ref := ItemRef{DB: "db", Coll: "c", PK: `["` + pk + `"]`, HasPK: true}
		if _, err := e.WriteItem(ctx, ref, Upsert, []byte(`{"id":"a","pk":"`+pk+`","n":1}`), ""); err != nil {
			f.Fatal(err)
		}
	}
	// Tokens the engine itself handed out, for the fuzzer to mutate.
	whole := ItemRef{DB: "db", Coll: "c"}
	for _, rangeID := range []string{"", "1"} {
		q := "SELECT * FROM c ORDER BY c.n" // the SDKs' query of one range
		if rangeID == "" {
			q = "SELECT * FROM c" // what the gateway serves across ranges
		}
		page, err := e.QueryItems(ctx, QueryRequest{Ref: whole, Body: queryBody(q), CrossPartition: true, RangeID: rangeID, MaxItemCount: 1})
		if err != nil {
			f.Fatal(err)
		}
		page.Body.Release()
		f.Add("[]", page.Continuation, rangeID, "", "")
		feedPage, err := e.ChangeFeed(ctx, ChangeFeedRequest{Ref: whole, RangeID: cmp.Or(rangeID, "0"), MaxItemCount: 1})
		if err != nil {
			f.Fatal(err)
		}
		f.Add("[]", feedPage.ETag, rangeID, "", "")
	}
	clientError := func(t *testing.T, what string, err error) {
		t.Helper()
		if _, ok := err.(*Error); err != nil && !ok {
			t.Fatalf("%s: internal error %v", what, err)
		}
	}
	f.Fuzz(func(t *testing.T, batch, token, rangeID, startEPK, endEPK string) {
		ref := ItemRef{DB: "db", Coll: "c", PK: `["x"]`, HasPK: true}
		for _, atomic := range []bool{true, false} {
			_, err := e.ExecuteBatch(ctx, ref, []byte(batch), BatchOptions{Atomic: atomic, RangeID: rangeID})
			clientError(t, "batch", err)
		}
		for _, req := range []QueryRequest{
			{Ref: whole, Body: queryBody("SELECT * FROM c ORDER BY c.n"), Continuation: token, CrossPartition: true, RangeID: rangeID, StartEPK: startEPK, EndEPK: endEPK, MaxItemCount: 1},
			{Ref: ref, Body: queryBody("SELECT c.id FROM c WHERE c.n > 0"), Continuation: token, MaxItemCount: 1},
		} {
			res, err := e.QueryItems(ctx, req)
			clientError(t, "query", err)
			if err == nil {
				res.Body.Release()
			}
		}
		res, err := e.ReadFeed(ctx, QueryRequest{Ref: whole, Continuation: token, RangeID: rangeID, StartEPK: startEPK, EndEPK: endEPK, MaxItemCount: 1})
		clientError(t, "read feed", err)
		if err == nil {
			res.Body.Release()
		}
		for _, mode := range []ChangeFeedMode{0, 1} {
			_, err := e.ChangeFeed(ctx, ChangeFeedRequest{Ref: whole, Mode: mode, IfNoneMatch: token, RangeID: rangeID, StartEPK: startEPK, EndEPK: endEPK, MaxItemCount: 2})
			clientError(t, "change feed", err)
		}
		_, _, _, err = e.PartitionKeyRangesSince(ctx, "db", "c", token)
		clientError(t, "partition key ranges", err)
	})
}
