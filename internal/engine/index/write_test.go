package index

import (
	"testing"

	"github.com/ebbdb/ebb/internal/engine/document"
	"github.com/ebbdb/ebb/internal/engine/keyspace"
	"github.com/ebbdb/ebb/internal/storage"
)

// TestWriteFollowsStoredPolicy writes through a target whose catalog
// policy is older than the stored state's, as a request in flight during
// a policy change does: the entries follow the stored policy, also when
// a memo serves the second write of a transaction.
func TestWriteFollowsStoredPolicy(t *testing.T) {
	h := newHarness(t, "")
	stale := h.target
	excludeA, err := ParsePolicy([]byte(`{"excludedPaths":[{"path":"/a/?"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	h.target.Policy = excludeA
	h.update(func(w storage.Writer) error { return SetPolicy(w, h.target) })
	h.update(func(w storage.Writer) error {
		w = WithPolicyMemo(w)
		for _, id := range []string{"1", "2"} {
			doc := []byte(`{"id":"` + id + `","a":1,"b":2}`)
			if err := w.Set(keyspace.DocKey(stale.RID, pkP, id), append(document.ItemHeader{}.Append(nil), doc...)); err != nil {
				return err
			}
			if err := Replace(w, stale, pkP, id, nil, doc); err != nil {
				return err
			}
		}
		return nil
	})
	h.wantEntries(`/b=2 1`, `/b=2 2`, `/id="1" 1`, `/id="2" 2`)
}
