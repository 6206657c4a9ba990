package feed

import (
	"context"
	"encoding/binary"
	"errors"
	"log/slog"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ebbdb/ebb/internal/clock"
	"github.com/ebbdb/ebb/internal/clock/clocktest"
	"github.com/ebbdb/ebb/internal/engine/keyspace"
	"github.com/ebbdb/ebb/internal/keys"
	"github.com/ebbdb/ebb/internal/storage"
)

// writeLog stores a record at each LSN with the crts given.
func writeLog(t *testing.T, s storage.Store, rid [8]byte, crts map[uint64]int64) {
	t.Helper()
	for lsn, ts := range crts {
		rec := Record{Op: OpCreate, LSN: lsn, Crts: ts, Current: []byte(`{}`), PKEnc: pkEnc("p")}
		update(t, s, func(w storage.Writer) error { return w.Set(keyspace.LogKey(rid, lsn), rec.Encode(c1.PK)) })
	}
}

var c1 = Container{RID: testRID, Name: "db/c"}

// logState returns the LSNs c1's log holds and its trim mark (0: none).
func logState(t *testing.T, s storage.Store) (lsns []uint64, mark uint64) {
	t.Helper()
	prefix := keyspace.CollPrefix(keyspace.Log, c1.RID)
	err := s.View(context.Background(), func(r storage.Reader) error {
		it := r.Scan(prefix, keys.PrefixEnd(prefix), false)
		defer it.Close()
		for it.Next() {
			lsn, _, err := keys.DecodeUint64(it.Key()[len(prefix):])
			if err != nil {
				return err
			}
			lsns = append(lsns, lsn)
		}
		if err := it.Err(); err != nil {
			return err
		}
		v, err := r.Get(keyspace.LogTrimKey(c1.RID, 0))
		if err == nil {
			mark = binary.BigEndian.Uint64(v)
		} else if !errors.Is(err, storage.ErrNotFound) {
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return lsns, mark
}

// lastLSN is the engine's container state as the trimmer reads it: the
// container exists with last LSN 9 unless deleted.
func lastLSN(deleted bool) func(storage.Reader, [8]byte, int) (uint64, bool, error) {
	return func(storage.Reader, [8]byte, int) (uint64, bool, error) { return 9, !deleted, nil }
}

func TestTrim(t *testing.T) {
	crts := map[uint64]int64{1: 100, 2: 100, 3: 200, 4: 300, 5: 400}
	for _, tc := range []struct {
		name      string
		retention int64
		now       int64
		deleted   bool
		wait      time.Duration
		left      []uint64
		mark      uint64
	}{
		{"nothing-due", 1, 150, false, 10 * time.Second, []uint64{1, 2, 3, 4, 5}, 0},
		{"prefix-due", 1, 260, false, 100 * time.Second, []uint64{4, 5}, 4},
		{"all-due", 1, 460, false, time.Minute, nil, 6},
		{"policy-removed", 0, 150, false, time.Minute, nil, 10},
		{"container-deleted", 0, 150, true, time.Minute, []uint64{1, 2, 3, 4, 5}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openStore(t)
			writeLog(t, s, c1.RID, crts)
			tr := newTrimmer(TrimmerConfig{Store: s, LastLSN: lastLSN(tc.deleted)})
			c := c1
			c.Retention = tc.retention
			wait, err := tr.trim(c, 0, tc.now)
			if err != nil {
				t.Fatal(err)
			}
			left, mark := logState(t, s)
			if wait != tc.wait || !slices.Equal(left, tc.left) || mark != tc.mark {
				t.Errorf("retention %d min at %d: got wait %v, log %v, mark %d; want %v, %v, %d",
					tc.retention, tc.now, wait, left, mark, tc.wait, tc.left, tc.mark)
			}
		})
	}
}

// TestTrimmerLoop runs the loop on a manual clock: it trims what is due
// at start, sleeps until the next record is due, and forgets a dropped
// policy's log when told of it.
func TestTrimmerLoop(t *testing.T) {
	s := openStore(t)
	clk := clock.NewManual(time.Unix(1000, 0))
	writeLog(t, s, c1.RID, map[uint64]int64{1: 900, 2: 950, 3: 1030})
	var retention atomic.Int64 // the catalog's, which the test changes
	retention.Store(1)
	container := func() Container {
		c := c1
		c.Retention = retention.Load()
		return c
	}
	tr := StartTrimmer(TrimmerConfig{
		Store: s, Clock: clk, Log: slog.Default(),
		Now:        func() int64 { return clk.Now().Unix() },
		Containers: func(yield func(Container) bool) { yield(container()) },
		LastLSN:    lastLSN(false),
	})
	defer tr.Stop()
	waitFor := func(what string, want []uint64, mark uint64) {
		t.Helper()
		clocktest.WaitUntil(t, what, func() bool {
			left, m := logState(t, s)
			return slices.Equal(left, want) && m == mark
		})
	}
	waitFor("the first pass", []uint64{2, 3}, 2)
	clk.Advance(10 * time.Second) // 950 falls out at 1010
	waitFor("the record due at 1010", []uint64{3}, 3)
	retention.Store(0)
	tr.Notice(container())
	waitFor("the dropped policy", nil, 10)
}
