package index

import (
	"context"
	"fmt"
	"testing"

	"github.com/ebbdb/ebb/internal/storage"
)

// TestBuildBatch changes the policy of a container with items and builds
// its index batch by batch: the state stays building with a cursor that
// moves until the last batch, the index agrees with the items after
// every batch (all entries up to the cursor), and writes between batches
// index under the new policy.
func TestBuildBatch(t *testing.T) {
	h := newHarness(t, "")
	for i := range 10 {
		h.put(fmt.Sprintf("%02d", i), fmt.Sprintf(`{"id":"%02d","a":%d,"b":%d}`, i, i, i))
	}
	pol, err := ParsePolicy([]byte(`{"excludedPaths":[{"path":"/a/?"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	h.target.Policy = pol
	h.update(func(w storage.Writer) error { return SetPolicy(w, h.target) })
	h.check()
	if n := len(h.entries(true)); n != 0 {
		t.Fatalf("%d entries left after the policy change", n)
	}
	batches := 0
	for more := true; more; batches++ {
		h.update(func(w storage.Writer) (err error) {
			more, err = BuildBatch(w, h.target, 3)
			return err
		})
		h.check()
		st := h.state()
		if st.Building() != more || (more && st.Cursor() == nil) {
			t.Fatalf("batch %d: building %v, cursor %q, more %v", batches, st.Building(), st.Cursor(), more)
		}
		h.put("05", `{"id":"05","a":50,"b":50}`) // before or after the cursor
	}
	if batches != 4 {
		t.Fatalf("%d batches for 10 items in batches of 3", batches)
	}
	want := []string{}
	for _, i := range []int{0, 1, 2, 3, 4, 6, 7, 8, 9} {
		want = append(want, fmt.Sprintf(`/b=%d %02d`, i, i))
	}
	want = append(want, `/b=50 05`)
	got := h.entries(false)[:10]
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("entries after the build:\n got  %v\n want %v", got, want)
	}
}

func (h *harness) state() State {
	h.t.Helper()
	var st State
	err := h.store.View(context.Background(), func(r storage.Reader) (err error) {
		st, _, err = ReadState(r, h.target.RID)
		return err
	})
	if err != nil {
		h.t.Fatal(err)
	}
	return st
}
