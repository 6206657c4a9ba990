package engine

import (
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/ebbdb/ebb/internal/clock"
	"github.com/ebbdb/ebb/internal/engine/keyspace"
	"github.com/ebbdb/ebb/internal/storage"
)

// The time guard's start on stored data. The latest _ts written is the
// guard's floor, so a step back of the clock across a restart makes no
// expired item visible again, within the limits clock.NewTimeGuard sets:
// a floor further ahead than the grace does not pin the future.
//
// Data written under a manual clock (--clock-control) is another matter:
// the user moved that clock on purpose, often far ahead, and the real
// clock is right. When such data is opened on the real clock, its _ts
// are not a floor at all: Ebb says so loudly and resumes on the real
// clock, so every item live by the real clock is visible. The ClockMark
// key remembers which _ts were written under a manual clock: MaxInt64
// while one runs, and the latest of them once the real clock took over.

// startGuard returns the engine's time guard over opts.Clock, floored by
// the data in store, and records a manual clock in the store's ClockMark.
func startGuard(ctx context.Context, store storage.Store, opts Options, log *slog.Logger) (*clock.TimeGuard, error) {
	lastTs, err := latestTs(ctx, store)
	if err != nil {
		return nil, err
	}
	var mark int64
	err = store.Update(ctx, func(w storage.Writer) error {
		v, err := w.Get([]byte{keyspace.ClockMark})
		switch {
		case err == nil && len(v) == 8:
			mark = int64(binary.BigEndian.Uint64(v))
		case err != nil && err != storage.ErrNotFound:
			return err
		}
		next := mark
		switch {
		case opts.ClockControl:
			next = math.MaxInt64
		case mark == math.MaxInt64:
			next = lastTs
		}
		if next == mark {
			return nil
		}
		return w.Set([]byte{keyspace.ClockMark}, binary.BigEndian.AppendUint64(nil, uint64(next)))
	})
	if err != nil {
		return nil, err
	}
	floor := time.Unix(lastTs, 0)
	if mark != 0 && lastTs <= mark {
		if ahead := floor.Sub(opts.Clock.Now()); ahead > time.Second {
			log.Error("clock: the data's latest _ts ("+floor.UTC().Format(time.RFC3339)+") was written under a manual clock and is ahead of this clock; resuming on this clock. "+
				"Items live by this clock are visible, and new writes get a _ts behind the latest stored one until this clock passes it",
				"ahead", ahead.Round(time.Second))
		}
		floor = time.Time{}
	}
	g, r := clock.NewTimeGuard(opts.Clock, opts.ClockGrace, floor)
	reportResume(log, r, opts.ClockGrace)
	return g, nil
}

// reportResume says loudly when the data was last written ahead of this
// clock: after a step back across a restart, or after a fault that an
// earlier version of Ebb wrote into _ts.
func reportResume(log *slog.Logger, r clock.Resume, grace time.Duration) {
	if r.Ahead <= time.Second {
		return
	}
	floor := r.Floor.UTC().Format(time.RFC3339)
	if r.Held {
		log.Warn("clock: the data was last written at "+floor+", ahead of this clock; Ebb's time holds still there until the clock catches up",
			"ahead", r.Ahead.Round(time.Second), "grace", grace)
		return
	}
	log.Error("clock: the data was last written at "+floor+", further ahead of this clock than --ttl-clock-grace; resuming on this clock. "+
		"Items that had expired by then but not by this clock are visible again until they expire by this clock, and new writes get a _ts behind the latest stored one",
		"ahead", r.Ahead.Round(time.Second), "grace", grace)
}

// latestTs is the latest _ts any container has written.
func latestTs(ctx context.Context, store storage.Store) (int64, error) {
	var latest int64
	err := store.View(ctx, func(r storage.Reader) error {
		it := r.Scan([]byte{keyspace.CollMeta}, []byte{keyspace.CollMeta + 1}, false)
		defer it.Close()
		for it.Next() {
			st, err := decodeCollState(it.Value())
			if err != nil {
				return fmt.Errorf("container state %x: %w", it.Key(), err)
			}
			latest = max(latest, st.lastTs)
		}
		return it.Err()
	})
	return latest, err
}
