package engine

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ebbdb/ebb/internal/clock"
	"github.com/ebbdb/ebb/internal/storage/pebble"
)

// TestFloorDrainsSaturatedContainer: foreground work keeps a container's
// offer in debt, yet the purger still deletes expired items at the floor
// rate as real time passes.
func TestFloorDrainsSaturatedContainer(t *testing.T) {
	store, err := pebble.OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	sem := clock.NewManual(time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC))
	real := clock.NewManual(time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC))
	e, err := Open(context.Background(), store, Options{Clock: sem, RealClock: real, PurgeFloor: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { e.Close(); store.Close() }()
	mustCreate(t, e, "db", "c", `{"id":"c","partitionKey":{"paths":["/pk"]},"defaultTtl":1}`)
	for i := 0; i < 40; i++ {
		write(t, e, "c", fmt.Sprintf(`{"id":"%d","pk":"p"}`, i))
	}
	e.Charge("db", "c", 1e6) // saturate: far more than the 400 RU/s offer
	c, _ := e.catalogSnapshot().container("db", "c")
	throttled := func() bool {
		_, ok := e.purger.State().Throttled[c.rid]
		return ok
	}
	sem.Advance(time.Second)
	// The floor is 5% of 400 RU/s = 20 RU/s, about 3.5 small items a
	// second: the purger spends it, then waits for real time to pass.
	waitUntil(t, "the purger to spend the initial floor", throttled)
	before := e.StoredItems()
	if before == 40 || before < 35 {
		t.Fatalf("%d items left after the initial floor, want 36 or 37", before)
	}
	for second := 1; second <= 3; second++ {
		real.Advance(time.Second)
		waitUntil(t, fmt.Sprintf("floor purge in real second %d", second), func() bool {
			return e.StoredItems() < before && throttled()
		})
		now := e.StoredItems()
		if before-now > 4 {
			t.Fatalf("second %d purged %d items; the floor allows about 3.5", second, before-now)
		}
		before = now
	}
}
