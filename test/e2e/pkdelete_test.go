package e2e

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/ebbdb/ebb/internal/clock/clocktest"
)

// TestDeletePartitionREST: POST …/operations/partitionkeydelete (signed
// as the container, as the JS SDK signs it; the Go SDK has no call for
// it) hides the partition from the Go SDK at once, and the status
// endpoint shows the delete until the background deletion is done.
func TestDeletePartitionREST(t *testing.T) {
	e := start(t)
	rc := newRest(t, e)
	c := ttlContainer(t, e, "pkdelete", nil)
	for _, body := range []string{`{"id":"a1","pk":"p"}`, `{"id":"a2","pk":"p"}`} {
		createTs(t, e, c, body)
	}
	other := `{"id":"b1","pk":"q"}`
	if _, err := c.CreateItem(e.ctx, azcosmos.NewPartitionKeyString("q"), []byte(other), nil); err != nil {
		t.Fatal(err)
	}
	r := rc.do(t, "POST", "/dbs/db-pkdelete/colls/pkdelete/operations/partitionkeydelete", map[string]string{"x-ms-documentdb-partitionkey": `["p"]`}, nil)
	if r.status != http.StatusOK {
		t.Fatalf("partition key delete: %d %s", r.status, r.body)
	}
	if visibleEverywhere(t, e, c, "a1") || visibleEverywhere(t, e, c, "a2") {
		t.Fatal("an item of the deleted partition is visible")
	}
	if _, err := c.ReadItem(e.ctx, azcosmos.NewPartitionKeyString("q"), "b1", nil); err != nil {
		t.Fatalf("the other partition's item: %v", err)
	}
	clocktest.WaitUntil(t, "the background deletion", func() bool {
		r := rc.do(t, "GET", "/_ebb/containers/db-pkdelete/pkdelete/partitiondeletes", nil, nil)
		var st struct {
			Deletes []json.RawMessage `json:"partitionKeyDeletes"`
		}
		if r.status != http.StatusOK || json.Unmarshal(r.body, &st) != nil || st.Deletes == nil {
			t.Fatalf("status: %d %s", r.status, r.body)
		}
		return len(st.Deletes) == 0
	})
	r = rc.do(t, "POST", "/dbs/db-pkdelete/colls/pkdelete/operations/partitionkeydelete", nil, nil)
	if r.status != http.StatusBadRequest {
		t.Fatalf("a partition key delete without a partition key: %d %s, want 400", r.status, r.body)
	}
}
