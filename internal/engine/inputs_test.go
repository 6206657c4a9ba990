package engine

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// wantBadRequest fails t unless err is a 400 whose message contains want.
func wantBadRequest(t *testing.T, what string, err error, want string) {
	t.Helper()
	var ee *Error
	if !errors.As(err, &ee) || ee.Kind != KindBadRequest || !strings.Contains(ee.Message, want) {
		t.Fatalf("%s: got %v, want a 400 containing %q", what, err, want)
	}
}

// TestDuplicateNamesRefused sends a name repeated in one object through
// every entry point that takes a document or a JSON object from a
// client: each must answer 400 naming it and store nothing.
func TestDuplicateNamesRefused(t *testing.T) {
	e, _ := newTestEngine(t)
	mustCreate(t, e, "db", "c", `{"id":"c","partitionKey":{"paths":["/pk"]},"defaultTtl":-1}`)
	ctx := context.Background()
	ref := ItemRef{DB: "db", Coll: "c", PK: `["p"]`, HasPK: true}
	if _, err := e.WriteItem(ctx, ref, Create, []byte(`{"id":"x","pk":"p","n":1}`), ""); err != nil {
		t.Fatal(err)
	}
	xRef := ref
	xRef.ID = "x"
	before, err := e.ReadItem(ctx, xRef, "")
	if err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name string
		kind WriteKind
		body string
		want string
	}{
		{"create", Create, `{"id":"dup1","id":"dup2","pk":"p"}`, `Duplicate property name 'id' in the top-level object (byte offset 13)`},
		{"create, escaped", Create, `{"id":"dup1","\u0069d":"dup2","pk":"p"}`, `Duplicate property name 'id' in the top-level object`},
		{"upsert, partition key", Upsert, `{"id":"dup1","pk":"p","pk":"q"}`, `Duplicate property name 'pk' in the top-level object`},
		{"replace, ttl", Replace, `{"id":"x","pk":"p","ttl":5,"ttl":-1}`, `Duplicate property name 'ttl' in the top-level object`},
		{"create, nested", Create, `{"id":"dup1","pk":"p","tenant":{"id":1,"id":2}}`, `Duplicate property name 'id' in the object at /tenant`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ref
			r.ID = "x"
			_, err := e.WriteItem(ctx, r, tc.kind, []byte(tc.body), "")
			wantBadRequest(t, tc.body, err, tc.want)
		})
	}

	t.Run("transactional batch", func(t *testing.T) {
		res, err := e.ExecuteBatch(ctx, ref, []byte(`[{"operationType":"Create","resourceBody":{"id":"b1","pk":"p"}},{"operationType":"Upsert","resourceBody":{"id":"dup1","id":"dup2","pk":"p"}}]`), BatchOptions{Atomic: true})
		if err != nil || !res.Failed {
			t.Fatalf("batch = %+v, %v; want a failed batch", res, err)
		}
		wantBadRequest(t, "batch operation 2", res.Ops[1].Err, `Duplicate property name 'id' in the top-level object`)
	})
	t.Run("bulk", func(t *testing.T) {
		res, err := e.ExecuteBatch(ctx, ItemRef{DB: "db", Coll: "c"}, []byte(`[{"operationType":"Create","partitionKey":"[\"p\"]","resourceBody":{"id":"dup1","pk":"p","pk":"q"}}]`), BatchOptions{ContinueOnError: true})
		if err != nil || len(res.Ops) != 1 {
			t.Fatalf("bulk = %+v, %v", res, err)
		}
		wantBadRequest(t, "bulk operation 1", res.Ops[0].Err, `Duplicate property name 'pk' in the top-level object`)
	})
	for _, tc := range []struct{ name, body, want string }{
		{"batch operation", `[{"operationType":"Read","id":"x","operationType":"Delete"}]`, `Duplicate property name 'operationType' in the object at /0 (byte offset 34)`},
		{"batch operation, case", `[{"operationType":"Read","id":"x"},{"OperationType":"Delete","id":"x","operationtype":"Read"}]`, `The properties 'OperationType' and 'operationtype' in the object at /1 (byte offset 70) are the same property 'operationType'; send it once.`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.ExecuteBatch(ctx, ref, []byte(tc.body), BatchOptions{Atomic: true})
			wantBadRequest(t, tc.body, err, tc.want)
		})
	}

	for _, tc := range []struct{ name, body, want string }{
		{"patch value", `{"operations":[{"op":"set","path":"/a","value":{"k":1,"k":2}}]}`, `Duplicate property name 'k' in the object at /operations/0/value`},
		{"patch value, nested", `[{"op":"add","path":"/a","value":[{"k":{"z":1,"z":2}}]}]`, `Duplicate property name 'z' in the object at /0/value/0/k`},
		{"patch operation", `[{"op":"set","path":"/n","value":2,"op":"remove"}]`, `Duplicate property name 'op' in the object at /0`},
		{"patch operation, case", `[{"op":"set","path":"/n","value":2,"Op":"remove"}]`, `The properties 'op' and 'Op' in the object at /0`},
		{"patch body", `{"operations":[{"op":"remove","path":"/n"}],"operations":[{"op":"set","path":"/n","value":2}]}`, `Duplicate property name 'operations' in the top-level object`},
		{"patch condition", `{"condition":"from c where true","Condition":"from c where false","operations":[{"op":"remove","path":"/n"}]}`, `are the same property 'condition'`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.PatchItem(ctx, xRef, []byte(tc.body), "")
			wantBadRequest(t, tc.body, err, tc.want)
		})
	}

	t.Run("database", func(t *testing.T) {
		_, err := e.CreateDatabase(ctx, []byte(`{"id":"d1","id":"d2"}`), ThroughputHeaders{})
		wantBadRequest(t, "database", err, `Duplicate property name 'id'`)
	})
	t.Run("container", func(t *testing.T) {
		_, err := e.CreateContainer(ctx, "db", []byte(`{"id":"c2","partitionKey":{"paths":["/a"],"paths":["/b"]}}`), ThroughputHeaders{})
		wantBadRequest(t, "container", err, `Duplicate property name 'paths' in the object at /partitionKey`)
	})

	// Nothing of the refused requests was stored, and x is as it was.
	for _, id := range []string{"dup1", "dup2", "b1"} {
		r := ref
		r.ID = id
		if _, err := e.ReadItem(ctx, r, ""); !IsKind(err, KindNotFound) {
			t.Errorf("read %s after refused writes = %v, want not found", id, err)
		}
	}
	after, err := e.ReadItem(ctx, xRef, "")
	if err != nil || after.ETag != before.ETag {
		t.Errorf("x changed: etag %s → %s, %v", before.ETag, after.ETag, err)
	}
	if _, err := e.ReadDatabase(ctx, "d1"); err == nil {
		t.Error("database d1 was created")
	}
}

// TestPatchIncrThroughEngine runs incr's edge cases as a client sends
// them: an overflow is a 400 that leaves the item unchanged, and large
// integers come back exactly.
func TestPatchIncrThroughEngine(t *testing.T) {
	e, _ := newTestEngine(t)
	mustCreate(t, e, "db", "c", `{"id":"c","partitionKey":{"paths":["/pk"]}}`)
	ctx := context.Background()
	ref := ItemRef{DB: "db", Coll: "c", PK: `["p"]`, HasPK: true, ID: "n"}
	if _, err := e.WriteItem(ctx, ref, Create, []byte(`{"id":"n","pk":"p","max":9223372036854775807,"min":-9223372036854775808,"big":9007199254740993}`), ""); err != nil {
		t.Fatal(err)
	}
	before, err := e.ReadItem(ctx, ref, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ body, want string }{
		{`{"operations":[{"op":"incr","path":"/max","value":1}]}`, "Patch operation 1 (incr /max): 9223372036854775807 + 1 is outside the range of a 64-bit integer"},
		{`{"operations":[{"op":"incr","path":"/min","value":-1}]}`, "Patch operation 1 (incr /min): -9223372036854775808 + -1 is outside the range of a 64-bit integer"},
		{`[{"op":"incr","path":"/big","value":1},{"op":"incr","path":"/big","value":0.5}]`, "Patch operation 2 (incr /big): 9007199254740994 + 0.5 would round the integer 9007199254740994"},
	} {
		_, err := e.PatchItem(ctx, ref, []byte(tc.body), "")
		wantBadRequest(t, tc.body, err, tc.want)
	}
	if after, err := e.ReadItem(ctx, ref, ""); err != nil || after.ETag != before.ETag {
		t.Fatalf("a refused incr changed the item: etag %s → %s, %v", before.ETag, after.ETag, err)
	}
	res, err := e.PatchItem(ctx, ref, []byte(`[{"op":"incr","path":"/big","value":2},{"op":"incr","path":"/max","value":-1}]`), "")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"big":9007199254740995`, `"max":9223372036854775806`} {
		if !strings.Contains(string(res.Body), want) {
			t.Errorf("patched item %s lacks %s", res.Body, want)
		}
	}
}

// TestQueryBodyNamesOnce: a query body and its parameters may not name a
// field twice, and a parameter's value may not repeat a name.
func TestQueryBodyNamesOnce(t *testing.T) {
	e, _ := newTestEngine(t)
	mustCreate(t, e, "db", "c", `{"id":"c","partitionKey":{"paths":["/pk"]}}`)
	ctx := context.Background()
	for _, tc := range []struct{ body, want string }{
		{`{"query":"SELECT * FROM c","query":"SELECT VALUE 1"}`, `Duplicate property name 'query' in the top-level object`},
		{`{"Query":"SELECT * FROM c","query":"SELECT VALUE 1"}`, `The properties 'Query' and 'query' in the top-level object (byte offset 27) are the same property 'query'`},
		{`{"query":"SELECT * FROM c WHERE c.a = @a","parameters":[{"name":"@a","value":1,"Value":2}]}`, `The properties 'value' and 'Value' in the object at /parameters/0`},
		{`{"query":"SELECT * FROM c WHERE c.a = @a","parameters":[{"name":"@a","value":{"k":1,"k":2}}]}`, `The value of query parameter @a is invalid`},
	} {
		_, err := e.QueryItems(ctx, QueryRequest{Ref: ItemRef{DB: "db", Coll: "c"}, Body: []byte(tc.body), CrossPartition: true, RangeID: "0"})
		wantBadRequest(t, tc.body, err, tc.want)
	}
	if _, err := e.QueryItems(ctx, QueryRequest{Ref: ItemRef{DB: "db", Coll: "c"}, CrossPartition: true, RangeID: "0",
		Body: []byte(`{"query":"SELECT * FROM c WHERE c.a = @a","parameters":[{"name":"@a","value":1},{"name":"@b","value":{"k":1}}]}`)}); err != nil {
		t.Fatal(err)
	}
}
