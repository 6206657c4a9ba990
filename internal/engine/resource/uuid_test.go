package resource

import (
	"regexp"
	"testing"

	"github.com/ebbdb/ebb/internal/race"
)

// TestNewUUID: a version 4 UUID in its text form, different each time,
// for one allocation.
func TestNewUUID(t *testing.T) {
	form := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	seen := map[string]bool{}
	for range 1000 {
		u := NewUUID()
		if !form.MatchString(u) || seen[u] {
			t.Fatalf("NewUUID() = %q (seen before: %v)", u, seen[u])
		}
		seen[u] = true
	}
	if race.Enabled {
		return // the race detector moves the bytes to the heap
	}
	if n := testing.AllocsPerRun(100, func() { _ = NewUUID() }); n != 1 {
		t.Errorf("NewUUID allocates %v times", n)
	}
}
