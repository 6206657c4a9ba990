package e2e

import (
	"encoding/json"
	"net/http"
	"testing"
)

// TestConflicts: a container's conflicts answer as a single-region
// account's: an empty feed, an empty query result, 404 for a conflict by
// id, and the container's own 404 when it does not exist; a query that
// does not parse is refused, not answered empty.
func TestConflicts(t *testing.T) {
	e := start(t)
	e.container(t, pkProps("conf", "/pk"))
	rc := newRest(t, e)
	base := "/dbs/db-conf/colls/conf/conflicts"

	var feed struct {
		RID       string            `json:"_rid"`
		Conflicts []json.RawMessage `json:"Conflicts"`
		Count     int               `json:"_count"`
	}
	r := rc.do(t, http.MethodGet, base, nil, nil)
	if r.status != http.StatusOK || json.Unmarshal(r.body, &feed) != nil || feed.Conflicts == nil || len(feed.Conflicts) != 0 || feed.Count != 0 || feed.RID == "" {
		t.Fatalf("conflicts feed: %d %s", r.status, r.body)
	}
	query := map[string]string{"x-ms-documentdb-isquery": "true", "Content-Type": "application/query+json"}
	r = rc.do(t, http.MethodPost, base, query, []byte(`{"query":"SELECT * FROM c WHERE c.id = @id","parameters":[{"name":"@id","value":"x"}]}`))
	if r.status != http.StatusOK || json.Unmarshal(r.body, &feed) != nil || len(feed.Conflicts) != 0 {
		t.Fatalf("conflicts query: %d %s", r.status, r.body)
	}
	if r = rc.do(t, http.MethodPost, base, query, []byte(`{"query":"SELECT * FROM"}`)); r.status != http.StatusBadRequest {
		t.Errorf("a conflicts query that does not parse: %d %s, want 400", r.status, r.body)
	}
	for _, method := range []string{http.MethodGet, http.MethodDelete} {
		if r = rc.do(t, method, base+"/someid", nil, nil); r.status != http.StatusNotFound {
			t.Errorf("%s of a conflict: %d %s, want 404", method, r.status, r.body)
		}
	}
	if r = rc.do(t, http.MethodGet, "/dbs/db-conf/colls/nope/conflicts", nil, nil); r.status != http.StatusNotFound {
		t.Errorf("conflicts of a container that does not exist: %d, want 404", r.status)
	}
	if r = rc.do(t, http.MethodPost, base, nil, []byte(`{"id":"x"}`)); r.status != http.StatusBadRequest {
		t.Errorf("creating a conflict: %d %s, want 400", r.status, r.body)
	}
}
