package engine

import (
	"fmt"
	"testing"
)

// TestItemEtag holds itemEtag to the format it replaced.
func TestItemEtag(t *testing.T) {
	for _, lsn := range []uint64{0, 1, 0xabc, 1<<48 - 1, 1 << 48, 0xfedcba9876543210, 1<<64 - 1} {
		want := fmt.Sprintf("\"%08x-0000-0000-0000-%012x\"", lsn>>48, lsn&0xffffffffffff)
		if got := itemEtag(lsn); got != want || len(got) != etagLen {
			t.Errorf("itemEtag(%#x) = %s, want %s", lsn, got, want)
		}
	}
}
