package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/ebbdb/ebb/internal/engine/document"
	"github.com/ebbdb/ebb/internal/engine/keyspace"
	"github.com/ebbdb/ebb/internal/engine/throughput"
	"github.com/ebbdb/ebb/internal/ttl"
)

// ImportMode says what an import does with an item that is already there.
type ImportMode int

const (
	// ImportUpsert replaces it.
	ImportUpsert ImportMode = iota
	// ImportCreateOnly keeps it and counts it as existing.
	ImportCreateOnly
)

// MaxImportItems caps the items of one ImportItems call, so that one
// transaction stays small enough to commit at once.
const MaxImportItems = 10_000

// ImportResult is what one ImportItems call did.
type ImportResult struct {
	Written int `json:"written"`
	// Existing counts the items a create-only import found and kept.
	Existing int `json:"existing"`
	// Expired counts the items whose time to live had run out by the
	// import's instant: they are not written, as they would be invisible.
	Expired int     `json:"expired"`
	Charge  float64 `json:"-"`
}

// ImportItems writes docs into a container in one transaction, each as a
// write would (id, partition key, ttl and size validated; unique keys,
// index, change feed and expiry kept), but keeping the item's own _ts:
// an item exported with its last-modified time and ttl expires, after
// import, when it would have where it came from. A _ts after the import's
// instant is taken as that instant, so none lies in the future. An error
// names the item by its position in docs, and nothing of the call is
// written.
func (e *Engine) ImportItems(ctx context.Context, dbID, collID string, docs [][]byte, mode ImportMode) (ImportResult, error) {
	return retrySplit(ctx, e, func() (ImportResult, error) { return e.importItems(ctx, dbID, collID, docs, mode) })
}

// importItems is ImportItems, run again by retrySplit when it finds its
// partition split.
func (e *Engine) importItems(ctx context.Context, dbID, collID string, docs [][]byte, mode ImportMode) (ImportResult, error) {
	if len(docs) > MaxImportItems {
		return ImportResult{}, &Error{Kind: KindBadRequest, Message: fmt.Sprintf("An import request holds %d items; the most is %d.", len(docs), MaxImportItems)}
	}
	c, err := e.container(dbID, collID)
	if err != nil {
		return ImportResult{}, err
	}
	at := e.now()
	now := at.Unix()
	var res ImportResult
	type item struct {
		index int
		p     prepared
	}
	items := make([]item, 0, len(docs))
	for i, doc := range docs {
		p, err := c.prepare(doc)
		if err != nil {
			return ImportResult{}, importError(i, err)
		}
		if p.ts, err = importedTs(document.Lookup(p.ms, "_ts"), now); err != nil {
			return ImportResult{}, importError(i, err)
		}
		if expiry, expires := ttl.ExpireAt(p.ts, p.ttl, c.ttl); expires && expiry <= now {
			res.Expired++
			continue
		}
		items = append(items, item{i, p})
	}
	kind := Upsert
	if mode == ImportCreateOnly {
		kind = Create
	}
	var done ImportResult
	err = e.updateItemsIn(ctx, c, at, nil, func(txFor func(p int) (*itemTx, error)) error {
		done = res // fn may run again after a conflict
		for _, it := range items {
			t, err := txFor(c.partitionOf(it.p.pk))
			if err != nil {
				return err
			}
			w, err := t.write(kind, keyspace.DocKey(c.rid, it.p.pkEnc, it.p.id), it.p, "")
			switch {
			case kind == Create && errors.Is(err, ErrConflict):
				done.Existing++
				continue
			case err != nil:
				return importError(it.index, err)
			}
			done.Written++
			done.Charge += throughput.Write(len(w.doc))
		}
		return nil
	})
	if err != nil {
		return ImportResult{}, err
	}
	return done, nil
}

// importedTs reads an imported item's _ts (raw JSON, nil when absent):
// epoch seconds, at most now; absent means now.
func importedTs(raw []byte, now int64) (int64, error) {
	if raw == nil {
		return now, nil
	}
	ts, ok := ttl.Integral(raw)
	if !ok || ts <= 0 {
		return 0, &Error{Kind: KindBadRequest, Message: fmt.Sprintf("_ts must be the item's last-modified time in epoch seconds; found %s.", document.Truncate(raw, 64))}
	}
	return min(ts, now), nil
}

// importError names the item an error is about.
func importError(index int, err error) error {
	var ee *Error
	if errors.As(err, &ee) {
		return &Error{Kind: ee.Kind, Message: fmt.Sprintf("Item %d: %s", index, ee.Message)}
	}
	return err
}
