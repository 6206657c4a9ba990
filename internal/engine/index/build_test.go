package index

import (
	"bytes"
	"context"
	"encoding/binary"
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
		if want := uint64(3 * (batches + 1)); more && st.Indexed() != want || !more && st.Indexed() != 0 {
			t.Fatalf("batch %d: indexed %d, want %d while building, 0 after", batches, st.Indexed(), want)
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

// TestStateV1 reads an index state written before Ebb counted indexed
// items (version 1) and writes it back as version 2.
func TestStateV1(t *testing.T) {
	pol, err := ParsePolicy(nil)
	if err != nil {
		t.Fatal(err)
	}
	v1 := []byte{stateV1, 1}
	v1 = binary.BigEndian.AppendUint64(v1, pol.fp)
	v1 = binary.AppendUvarint(v1, 3)
	v1 = append(append(v1, "abc"...), pol.canon...)
	st, err := decodeState(v1)
	if err != nil || !st.Building() || string(st.Cursor()) != "abc" || st.Indexed() != 0 || st.fp != pol.fp || !bytes.Equal(st.policy, pol.canon) {
		t.Fatalf("version 1 state read as %+v, %v", st, err)
	}
	st.indexed = 7
	again, err := decodeState(st.encode())
	if err != nil || again.Indexed() != 7 || string(again.Cursor()) != "abc" || !bytes.Equal(again.policy, pol.canon) {
		t.Fatalf("version 2 round trip: %+v, %v", again, err)
	}
	for _, bad := range [][]byte{nil, {stateVersion, 0}, append([]byte{9, 0}, make([]byte, 12)...)} {
		if _, err := decodeState(bad); err == nil {
			t.Errorf("decodeState(%x) succeeded", bad)
		}
	}
}
