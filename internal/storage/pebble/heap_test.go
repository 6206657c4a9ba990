package pebble

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/ebbdb/ebb/internal/storage"
)

func TestGCPercent(t *testing.T) {
	const mb = 1 << 20
	for _, tc := range []struct {
		base         int
		live, manual uint64
		want         int
	}{
		{base: 100, live: 40 * mb, manual: 0, want: 100},
		{base: 100, live: 40 * mb, manual: 20 * mb, want: 50},
		{base: 200, live: 40 * mb, manual: 30 * mb, want: 50},
		// The own part never counts below minOwnHeap.
		{base: 100, live: 40 * mb, manual: 39 * mb, want: 10},
		{base: 100, live: 40 * mb, manual: 50 * mb, want: 10},
		{base: 100, live: 2 * mb, manual: 1 * mb, want: 100},
		// Never 0, which would collect continuously.
		{base: 100, live: 1 << 40, manual: 1<<40 - 1, want: 1},
		// Nothing to correct: no heap yet, or collection off.
		{base: 100, live: 0, manual: 0, want: 100},
		{base: -1, live: 40 * mb, manual: 20 * mb, want: -1},
	} {
		if got := gcPercent(tc.base, tc.live, tc.manual); got != tc.want {
			t.Errorf("gcPercent(%d, %d MB, %d MB) = %d, want %d", tc.base, tc.live/mb, tc.manual/mb, got, tc.want)
		}
	}
}

// releaseMark is s's mark of the last release of free pages.
func releaseMark(s *Store) uint64 {
	heapTuner.mu.Lock()
	defer heapTuner.mu.Unlock()
	return s.releaseMark
}

// TestHeapTuner checks, in a build without cgo, that a store's memtables
// do not let the heap grow by their own size again before a collection,
// that while they grow the heap's free pages go back to the system, and
// that closing the last store gives GOGC back.
func TestHeapTuner(t *testing.T) {
	if !manualOnGoHeap {
		t.Skip("built with cgo, Pebble's memory is not on the Go heap; scripts/test runs this test with CGO_ENABLED=0")
	}
	base := gogc()
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// 24 MB of 1 KB values: the memtables grow to 16 MB and more.
	value := make([]byte, 1<<10)
	for i := range 24 {
		err := s.Update(context.Background(), func(w storage.Writer) error {
			for j := range 1 << 10 {
				if err := w.Set(fmt.Appendf(nil, "k%02d%04d", i, j), value); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// The tuner runs on the cleanup goroutine after a collection.
	for i := 0; i < 1000 && gogc() == base; i++ {
		runtime.GC()
		runtime.Gosched()
	}
	// The memtables are still growing (the next is 32 MB), so the tuner
	// returns free pages to the system after a collection.
	for i := 0; i < 1000 && releaseMark(s) == 0; i++ {
		runtime.GC()
		runtime.Gosched()
	}
	if releaseMark(s) == 0 {
		t.Error("the heap's free pages were never returned to the system while the memtables grew")
	}
	manual, _ := s.manualMemory()
	live, goal := liveHeap(), runtimeMetric("/gc/heap/goal:bytes", 0)
	t.Logf("GOGC %d → %d; live heap %d MB, of it Pebble's %d MB; goal %d MB", base, gogc(), live>>20, manual>>20, goal>>20)
	if manual < 16<<20 {
		t.Fatalf("Pebble holds %d MB, want 16 MB or more for the test to mean anything", manual>>20)
	}
	if allowed := live + max(live-min(manual, live), minOwnHeap)*uint64(base)/100; goal > allowed+allowed/20 {
		t.Errorf("heap goal %d MB, want at most %d MB: Pebble's memory counts as garbage to come", goal>>20, allowed>>20)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if got := gogc(); got != base {
		t.Errorf("GOGC after the last store closed = %d, want %d", got, base)
	}
}
