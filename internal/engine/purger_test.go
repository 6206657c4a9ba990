package engine

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ebbdb/ebb/internal/clock/clocktest"
)

// waitUntil waits for cond, which a background goroutine (the purger,
// the index builder) makes true.
var waitUntil = clocktest.WaitUntil

func write(t *testing.T, e *Engine, coll, body string) {
	t.Helper()
	ref := ItemRef{DB: "db", Coll: coll, PK: `["p"]`, HasPK: true}
	if _, err := e.WriteItem(context.Background(), ref, Upsert, []byte(body), ""); err != nil {
		t.Fatal(err)
	}
}

func containerBodyWith(def string) string {
	return `{"id":"c","partitionKey":{"paths":["/pk"]}` + def + `}`
}

func TestPurgerDeletesAtDeadline(t *testing.T) {
	e, clk := newTestEngine(t)
	mustCreate(t, e, "db", "c", containerBodyWith(`,"defaultTtl":10`))
	write(t, e, "c", `{"id":"default","pk":"p"}`)     // expires at +10
	write(t, e, "c", `{"id":"own","pk":"p","ttl":5}`) // expires at +5
	write(t, e, "c", `{"id":"pinned","pk":"p","ttl":-1}`)

	clk.Advance(4 * time.Second)
	// Nothing is due: the purger must not have deleted anything. (Its
	// timer is for +5; the check below cannot prove a negative in time,
	// but any early purge would show here or in the next step.)
	if n := e.StoredItems(); n != 3 {
		t.Fatalf("%d items stored at +4, want 3", n)
	}
	clk.Advance(time.Second)
	waitUntil(t, "purge of the ttl-5 item at +5", func() bool { return e.StoredItems() == 2 })
	clk.Advance(5 * time.Second)
	waitUntil(t, "purge of the default-ttl item at +10", func() bool { return e.StoredItems() == 1 })
	clk.Advance(100 * 365 * 24 * time.Hour)
	if n := e.StoredItems(); n != 1 {
		t.Fatalf("the pinned item was purged")
	}
}

func TestPurgerWokenByEarlierWrite(t *testing.T) {
	e, clk := newTestEngine(t)
	mustCreate(t, e, "db", "c", containerBodyWith(`,"defaultTtl":-1`))
	write(t, e, "c", `{"id":"late","pk":"p","ttl":1000}`)
	write(t, e, "c", `{"id":"soon","pk":"p","ttl":2}`) // brings the deadline forward
	clk.Advance(2 * time.Second)
	waitUntil(t, "purge of the item written after a later one", func() bool { return e.StoredItems() == 1 })
}

func TestPurgerLeavesTTLOffAlone(t *testing.T) {
	e, clk := newTestEngine(t)
	mustCreate(t, e, "db", "c", containerBodyWith(""))
	for i := 0; i < 10; i++ {
		write(t, e, "c", fmt.Sprintf(`{"id":"%d","pk":"p","ttl":1}`, i))
	}
	clk.Advance(time.Hour)
	// A container with TTL off is never in the purger's heap, so nothing
	// can have been purged.
	if n := e.StoredItems(); n != 10 {
		t.Fatalf("%d items stored in a container with TTL off, want 10", n)
	}
	// Turning TTL on re-plans the container: everything is overdue.
	body := containerBodyWith(`,"defaultTtl":-1`)
	if _, err := e.ReplaceContainer(context.Background(), "db", "c", []byte(body), ""); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "purge after TTL was turned on", func() bool { return e.StoredItems() == 0 })
}

// TestRewriteInTheSameSecond: rewrites of an item within one second keep
// its expiry entry when its expiry key stays the same and move it when
// its ttl changes; the expiry index agrees with the items throughout and
// the item is purged at the last version's deadline.
func TestRewriteInTheSameSecond(t *testing.T) {
	e, clk := newTestEngine(t)
	ctx := context.Background()
	mustCreate(t, e, "db", "c", containerBodyWith(`,"defaultTtl":10`))
	for _, body := range []string{
		`{"id":"a","pk":"p","n":1}`,
		`{"id":"a","pk":"p","n":2}`,          // same second, same expiry key
		`{"id":"a","pk":"p","n":3,"ttl":5}`,  // its own ttl: another keyspace
		`{"id":"a","pk":"p","n":4,"ttl":5}`,  // and the same key again
		`{"id":"b","pk":"p","n":1,"ttl":-1}`, // never expires: no entry
		`{"id":"b","pk":"p","n":2,"ttl":-1}`,
	} {
		write(t, e, "c", body)
		if err := e.CheckConsistency(ctx); err != nil {
			t.Fatalf("after %s: %v", body, err)
		}
	}
	clk.Advance(5 * time.Second)
	waitUntil(t, "purge of the ttl-5 version", func() bool { return e.StoredItems() == 1 })
	if err := e.CheckConsistency(ctx); err != nil {
		t.Fatal(err)
	}
}
