package engine

import (
	"context"
	"strings"
	"testing"
)

// TestReplaceKeepsPartitionKey: a container replace must send the
// partition key the container has, its version included (a body without
// one asks for version 1), as the service requires; the version decides
// the hash every partition key is placed by.
func TestReplaceKeepsPartitionKey(t *testing.T) {
	e, _ := newTestEngine(t)
	ctx := context.Background()
	mustCreate(t, e, "db", "v2", `{"id":"v2","partitionKey":{"paths":["/pk"],"kind":"Hash","version":2}}`)
	mustCreate(t, e, "db", "v1", `{"id":"v1","partitionKey":{"paths":["/pk"]}}`)
	const refused = "Document collection partition key cannot be changed."
	for _, tc := range []struct{ coll, pk, want string }{
		{"v2", `{"paths":["/pk"],"kind":"Hash","version":2}`, ""},
		{"v2", `{"paths":["/pk"],"kind":"Hash"}`, refused},
		{"v2", `{"paths":["/pk"],"version":1}`, refused},
		{"v2", `{"paths":["/other"],"version":2}`, refused},
		{"v1", `{"paths":["/pk"]}`, ""},
		{"v1", `{"paths":["/pk"],"kind":"Hash","version":1}`, ""},
		{"v1", `{"paths":["/pk"],"version":2}`, refused},
		{"v1", `{"paths":["/pk","/b"],"kind":"MultiHash"}`, refused},
	} {
		_, err := e.ReplaceContainer(ctx, "db", tc.coll, []byte(`{"id":"`+tc.coll+`","partitionKey":`+tc.pk+`,"defaultTtl":10}`), "")
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.want)) {
			t.Errorf("replace %s with %s: %v, want %q", tc.coll, tc.pk, err, tc.want)
		}
	}
	c := mustContainer(t, e, "v2")
	if c.pk.Version() != 2 {
		t.Fatalf("v2 has version %d after the replaces", c.pk.Version())
	}
}

// TestPartitionKeyMismatchText: a write whose body's partition key is not
// the header's is refused with the service's text, which clients and
// tools quote.
func TestPartitionKeyMismatchText(t *testing.T) {
	e, _ := newTestEngine(t)
	mustCreate(t, e, "db", "c", `{"id":"c","partitionKey":{"paths":["/pk"]}}`)
	ref := ItemRef{DB: "db", Coll: "c", PK: `["q"]`, HasPK: true}
	_, err := e.WriteItem(context.Background(), ref, Create, []byte(`{"id":"a","pk":"p"}`), "")
	const want = "PartitionKey extracted from document doesn't match the one specified in the header."
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("got %v, want it to start with %q", err, want)
	}
}
