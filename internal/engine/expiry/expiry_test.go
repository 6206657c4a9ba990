package expiry

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/ebbdb/ebb/internal/engine/document"
	"github.com/ebbdb/ebb/internal/engine/keyspace"
	"github.com/ebbdb/ebb/internal/storage"
	"github.com/ebbdb/ebb/internal/storage/pebble"
	"github.com/ebbdb/ebb/internal/ttl"
)

var rid = [8]byte{7}

// entry is an item in the index: in ExpOwn at t when own, else in ExpTs
// at its _ts t.
type entry struct {
	id  string
	own bool
	t   int64
}

func newIndex(t *testing.T, entries ...entry) storage.Store {
	t.Helper()
	s, err := pebble.OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	pk := document.PartitionKey{{Kind: document.PKString, Str: "p"}}.Encode(nil)
	err = s.Update(context.Background(), func(w storage.Writer) error {
		for _, e := range entries {
			space := byte(keyspace.ExpTs)
			if e.own {
				space = keyspace.ExpOwn
			}
			if err := w.Set(keyspace.ExpiryKey(space, rid, e.t, pk, e.id), nil); err != nil {
				return err
			}
		}
		// Another container's entry must never be seen.
		return w.Set(keyspace.ExpiryKey(keyspace.ExpOwn, [8]byte{8}, 1, pk, "other"), nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func view(t *testing.T, s storage.Store, fn func(r storage.Reader) error) {
	t.Helper()
	if err := s.View(context.Background(), fn); err != nil {
		t.Fatal(err)
	}
}

func TestNextDeadlineShiftsDefaults(t *testing.T) {
	s := newIndex(t, entry{"own", true, 150}, entry{"inherits", false, 100})
	for _, tc := range []struct {
		def    int64
		at     int64
		exists bool
	}{
		{def: 10, at: 110, exists: true},  // _ts 100 + 10 is before 150
		{def: 100, at: 150, exists: true}, // the own ttl comes first
		{def: -1, at: 150, exists: true},  // no default: ExpTs never expires
	} {
		x := Index{RID: rid, PKLen: 1, Default: ttlDefault(tc.def)}
		view(t, s, func(r storage.Reader) error {
			at, ok, err := x.NextDeadline(r, Cursor{})
			if err != nil || ok != tc.exists || at != tc.at {
				t.Errorf("default %d: NextDeadline = %d, %v, %v; want %d", tc.def, at, ok, err, tc.at)
			}
			return nil
		})
	}
}

func TestDueByPagesWithCursor(t *testing.T) {
	var entries []entry
	for i := range 5 {
		entries = append(entries, entry{id: string(rune('a' + i)), own: true, t: 100})
	}
	entries = append(entries, entry{"late", true, 200}, entry{"old", false, 50})
	s := newIndex(t, entries...)
	x := Index{RID: rid, PKLen: 1, Default: 30}
	var got []string
	var cur Cursor
	for pages := 0; ; pages++ {
		if pages > 10 {
			t.Fatal("no end of pages")
		}
		var due []Due
		view(t, s, func(r storage.Reader) (err error) {
			due, cur, err = x.DueBy(r, cur, 100, 2)
			return err
		})
		if len(due) == 0 {
			break
		}
		for _, d := range due {
			got = append(got, d.ID)
		}
	}
	if want := []string{"a", "b", "c", "d", "e", "old"}; !slices.Equal(got, want) {
		t.Fatalf("due by 100 = %v, want %v", got, want)
	}
	view(t, s, func(r storage.Reader) error {
		if n, err := x.CountDue(r, 100); n != 6 || err != nil {
			t.Errorf("CountDue = %d, %v; want 6", n, err)
		}
		return nil
	})
}

func TestCounts(t *testing.T) {
	s := newIndex(t,
		entry{"expired", true, 990},
		entry{"minute", true, 1030},
		entry{"hour", true, 1000 + 3000},
		entry{"day", false, 1000 + 80000 - 10}, // _ts; expires 10 s later
		entry{"far", true, 1000 + 30*24*3600},
	)
	x := Index{RID: rid, PKLen: 1, Default: 10}
	view(t, s, func(r storage.Reader) error {
		c, err := x.Counts(r, 1000)
		want := Counts{Backlog: 1, Oldest: 990, Next: 1030, Minute: 1, Hour: 2, Day: 3, Week: 3}
		if err != nil || c != want {
			t.Errorf("Counts = %+v, %v; want %+v", c, err, want)
		}
		c, err = x.Counts(r, 1000+80000)
		if err != nil || c.Next != 1000+30*24*3600 || c.Week != 0 || c.Backlog != 4 {
			t.Errorf("Counts with only a far deadline = %+v, %v", c, err)
		}
		return nil
	})
}

// TestCountsCapped: past a million entries the counts stop, say so, and
// still give the oldest and next deadlines exactly.
func TestCountsCapped(t *testing.T) {
	s := newIndex(t)
	pk := document.PartitionKey{{Kind: document.PKString, Str: "p"}}.Encode(nil)
	const n = maxCount + 10
	for start := 0; start < n; start += 100_000 {
		err := s.Update(context.Background(), func(w storage.Writer) error {
			for i := start; i < min(n, start+100_000); i++ {
				if err := w.Set(keyspace.ExpiryKey(keyspace.ExpOwn, rid, 500, pk, fmt.Sprint(i)), nil); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	newest := entry{"newest", false, 400} // _ts 400 + 10 = 410: older than all
	if err := s.Update(context.Background(), func(w storage.Writer) error {
		return w.Set(keyspace.ExpiryKey(keyspace.ExpTs, rid, newest.t, pk, newest.id), nil)
	}); err != nil {
		t.Fatal(err)
	}
	x := Index{RID: rid, PKLen: 1, Default: 10}
	view(t, s, func(r storage.Reader) error {
		c, err := x.Counts(r, 1000)
		if err != nil || !c.Capped || c.Backlog != maxCount || c.Oldest != 410 || c.Next != 0 {
			t.Errorf("Counts over %d entries = %+v, %v; want capped at %d, oldest 410", n+1, c, err, maxCount)
		}
		return nil
	})
}

func ttlDefault(n int64) ttl.Default { return ttl.Default(n) }
