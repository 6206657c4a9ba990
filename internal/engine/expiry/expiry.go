// Package expiry reads a container's expiry index: the two keyspaces
// every item write keeps in step with the item (keyspace.ExpOwn, items
// with their own ttl by expiry instant; keyspace.ExpTs, items without
// one by _ts), from which it answers what the TTL purger and the TTL
// status ask: the next deadline, the entries due by an instant, and how
// many expire in the windows ahead.
//
// It decides nothing about visibility (the engine's visible-items reader
// does, at each request's instant) and deletes nothing (the engine's
// delete path does, re-checking each item); it only reads keys, decoded
// with keyspace's one expiry codec.
//
// # Why two keyspaces
//
// Items without their own ttl are kept in _ts order, so under a
// defaultTtl of n the due ones are exactly those with _ts <= now-n, and
// changing defaultTtl needs no rewrite: an Index is told the current
// default and shifts the bound. Items with ttl = -1 are in neither
// keyspace.
package expiry

import (
	"bytes"

	"github.com/ebbdb/ebb/internal/engine/keyspace"
	"github.com/ebbdb/ebb/internal/keys"
	"github.com/ebbdb/ebb/internal/storage"
	"github.com/ebbdb/ebb/internal/ttl"
)

// Index is one container's expiry index.
type Index struct {
	RID [8]byte
	// PKLen is the number of components of the container's partition key.
	PKLen int
	// Default is the container's defaultTtl now.
	Default ttl.Default
}

// Cursor marks where a container's expiry keyspaces still hold entries:
// every entry before Own (in ExpOwn) or Ts (in ExpTs) is purged; nil
// means the start of its keyspace. Keys, not times: a storm of items
// expiring in the same second shares one time, and resuming at that time
// would walk every tombstone the storm left so far, once per batch.
type Cursor struct{ Own, Ts []byte }

// Due is an entry of an item due for purging.
type Due struct {
	Key []byte // the expiry-index entry
	PK  []byte // the item's encoded partition key
	ID  string
}

// defaultShift is what turns an ExpTs entry's time (_ts) into an expiry
// instant, and whether ExpTs entries expire at all.
func (x Index) defaultShift() (int64, bool) {
	if x.Default > 0 {
		return int64(x.Default), true
	}
	return 0, false
}

// NextDeadline is the earliest expiry of the items from cursor from on:
// one seek in each keyspace.
func (x Index) NextDeadline(r storage.Reader, from Cursor) (at int64, ok bool, err error) {
	if t, found, err := x.firstTime(r, keyspace.ExpOwn, from.Own); err != nil {
		return 0, false, err
	} else if found {
		at, ok = t, true
	}
	if shift, on := x.defaultShift(); on {
		t, found, err := x.firstTime(r, keyspace.ExpTs, from.Ts)
		if err != nil {
			return 0, false, err
		}
		if found && (!ok || t+shift < at) {
			at, ok = t+shift, true
		}
	}
	return at, ok, nil
}

// firstTime returns the time element of the first key at or after from
// (nil: the start) in keyspace space.
func (x Index) firstTime(r storage.Reader, space byte, from []byte) (int64, bool, error) {
	prefix := keyspace.CollPrefix(space, x.RID)
	start := prefix
	if from != nil {
		start = from
	}
	it := r.Scan(start, keys.PrefixEnd(prefix), false)
	defer it.Close()
	if !it.Next() {
		return 0, false, it.Err()
	}
	e, err := keyspace.DecodeExpiry(it.Key(), 0)
	return e.Time, err == nil, err
}

// DueBy returns up to limit entries whose expiry is at or before now,
// from both keyspaces, scanning from cursor from. next is the cursor once
// they are purged: the first key past each keyspace's due bound if it was
// read to the end, else just after the last entry returned.
func (x Index) DueBy(r storage.Reader, from Cursor, now int64, limit int) (due []Due, next Cursor, err error) {
	next = from
	scan := func(space byte, start []byte, through int64) ([]byte, error) {
		if start == nil {
			start = keyspace.CollPrefix(space, x.RID)
		}
		bound := keyspace.ExpiryBound(space, x.RID, through)
		if bytes.Compare(start, bound) >= 0 {
			return start, nil
		}
		it := r.Scan(start, bound, false)
		defer it.Close()
		for len(due) < limit && it.Next() {
			key := it.Key()
			e, err := keyspace.DecodeExpiry(key, x.PKLen)
			if err != nil {
				return nil, err
			}
			due = append(due, Due{Key: append([]byte(nil), key...), PK: append([]byte(nil), e.PK...), ID: string(e.ID)})
		}
		if err := it.Err(); err != nil {
			return nil, err
		}
		if len(due) == limit {
			// Stopped early: resume just after the last entry.
			return append(append([]byte(nil), due[len(due)-1].Key...), 0), nil
		}
		return bound, nil
	}
	if next.Own, err = scan(keyspace.ExpOwn, from.Own, now); err != nil {
		return nil, from, err
	}
	if shift, on := x.defaultShift(); on && len(due) < limit {
		if next.Ts, err = scan(keyspace.ExpTs, from.Ts, now-shift); err != nil {
			return nil, from, err
		}
	}
	return due, next, nil
}

// maxCount caps CountDue, which scans.
const maxCount = 1_000_000

// CountDue counts the entries due by now (up to a million), for the
// backlog gauge while purging is throttled.
func (x Index) CountDue(r storage.Reader, now int64) (int, error) {
	due, _, err := x.DueBy(r, Cursor{}, now, maxCount)
	return len(due), err
}

// Counts describe the index at an instant: what no Cosmos tool shows.
type Counts struct {
	// Backlog counts the items expired but not purged yet; Oldest is the
	// earliest of their expiry instants (0: none).
	Backlog int
	Oldest  int64
	// Next is the next expiry instant after now (0: none).
	Next int64
	// Minute, Hour, Day and Week count the items expiring within that
	// long after now; each window includes the shorter ones.
	Minute, Hour, Day, Week int
	// Capped: the counts stopped at a million entries and are lower
	// bounds (Next and Oldest are exact).
	Capped bool
}

// week is the longest window Counts looks ahead.
const week = 7 * 24 * 3600

// Counts returns the index's counts at now. It reads the entries due up
// to a week ahead, at most a million of them, so a request for it stays
// bounded however large the backlog.
func (x Index) Counts(r storage.Reader, now int64) (Counts, error) {
	var c Counts
	shift, defaults := x.defaultShift()
	// Oldest and Next are seeks: the first entries of the keyspaces, and
	// the first past each keyspace's entries due by now.
	if at, ok, err := x.NextDeadline(r, Cursor{}); err != nil {
		return Counts{}, err
	} else if ok && at <= now {
		c.Oldest = at
	}
	after := Cursor{
		Own: keyspace.ExpiryBound(keyspace.ExpOwn, x.RID, now),
		Ts:  keyspace.ExpiryBound(keyspace.ExpTs, x.RID, now-shift),
	}
	if at, ok, err := x.NextDeadline(r, after); err != nil {
		return Counts{}, err
	} else if ok {
		c.Next = at
	}
	read := 0
	// The expiry of each entry: ExpOwn entries carry it, ExpTs entries
	// carry _ts, to which the current default is added.
	visit := func(space byte, shift int64) error {
		it := r.Scan(keyspace.CollPrefix(space, x.RID), keyspace.ExpiryBound(space, x.RID, now+week-shift), false)
		defer it.Close()
		for it.Next() {
			if read == maxCount {
				c.Capped = true
				return nil
			}
			read++
			e, err := keyspace.DecodeExpiry(it.Key(), 0)
			if err != nil {
				return err
			}
			at := e.Time + shift
			if at <= now {
				c.Backlog++
				continue
			}
			in := at - now
			if in <= 60 {
				c.Minute++
			}
			if in <= 3600 {
				c.Hour++
			}
			if in <= 24*3600 {
				c.Day++
			}
			c.Week++
		}
		return it.Err()
	}
	if err := visit(keyspace.ExpOwn, 0); err != nil {
		return Counts{}, err
	}
	if defaults {
		if err := visit(keyspace.ExpTs, shift); err != nil {
			return Counts{}, err
		}
	}
	return c, nil
}
