package engine

import (
	"bytes"
	"context"
	"log/slog"
	"slices"
	"sync"

	"github.com/ebbdb/ebb/internal/engine/vector"
	"github.com/ebbdb/ebb/internal/engine/vector/ann"
	"github.com/ebbdb/ebb/internal/storage"
)

// A diskANN vector index is an approximate graph index (package ann)
// over the vectors of one embedding path, kept in memory and brought up
// to the vector set (vectors.go) that a search reads. It is never
// written in an item's transaction: the vector set is the truth, read
// from storage, and the graph follows it. A few changes since the
// graph's set are added inline by the search that finds them; many (the
// first search after a start, a bulk load) are added in the background
// while searches stay exact, so an answer is either exact or from a
// graph that holds exactly the set the search reads.
//
// The graph is rebuilt from the stored vectors after a restart rather
// than persisted: at 100,000 vectors of 768 dimensions the rebuild takes
// seconds in the background (logged as "vector index built" with its
// duration), and searches in the meantime are exact, so correct.

// inlineSyncFloats bounds the changes a search adds to a graph itself
// (changed vectors × dimensions: 341 vectors of 768); more are added in
// the background. A variable for tests.
var inlineSyncFloats = 1 << 18

// maxSearchList bounds an approximate search's candidate list.
const maxSearchList = 4096

// annIndex is the graph of one embedding path of one container.
//
// Its mutex serialises the searches of the graph and the inline
// changes to it; a background sync changes the graph without it, while
// syncing is set and no search uses the graph.
type annIndex struct {
	mu      sync.Mutex
	label   string // the container's, for the log
	path    string
	dims    int
	metric  ann.Metric
	cfg     ann.Config
	graph   *ann.Index
	keys    [][]byte            // item key by graph id
	live    map[string]annEntry // the graph's live entry of each item key
	synced  *vectorSet          // the set the graph holds exactly; nil before its first sync
	syncing bool
}

type annEntry struct {
	id  uint32
	vec []float32
}

// annKey names an index by container and embedding path.
type annKey = vectorSetKey

// annIndexFor returns container c's graph index of embedding path
// number path, made empty on first use.
func (e *Engine) annIndexFor(c *container, path byte, ix vector.Index) *annIndex {
	key := annKey{c.rid, path}
	e.annMu.Lock()
	defer e.annMu.Unlock()
	if a, ok := e.anns[key]; ok {
		return a
	}
	emb := c.vectors.Embeddings[path]
	cfg := ann.Config{Seed: 1}
	if ix.IndexingSearchListSize != nil {
		cfg.EfConstruction = *ix.IndexingSearchListSize
	}
	a := &annIndex{label: c.label(), path: emb.Path, dims: emb.Dimensions, metric: annMetric(emb.DistanceFunction), cfg: cfg}
	a.reset()
	if e.anns == nil {
		e.anns = map[annKey]*annIndex{}
	}
	e.anns[key] = a
	return a
}

// dropANNIndexes forgets the graph indexes of a container (deleted).
func (e *Engine) dropANNIndexes(rid [8]byte) {
	e.annMu.Lock()
	defer e.annMu.Unlock()
	for k := range e.anns {
		if k.rid == rid {
			delete(e.anns, k)
		}
	}
}

func annMetric(fn string) ann.Metric {
	switch fn {
	case vector.DotProduct:
		return ann.DotProduct
	case vector.Euclidean:
		return ann.Euclidean
	}
	return ann.Cosine
}

func (a *annIndex) reset() {
	a.graph = ann.New(a.dims, a.metric, a.cfg)
	a.keys, a.live, a.synced = nil, map[string]annEntry{}, nil
}

// annChange is one item's vector to put in the graph; vec nil removes
// the item.
type annChange struct {
	key []byte
	vec []float32
}

// search returns the items nearest to q in set, up to list of them,
// nearest first, ranked by rank; ok is false when the graph does not
// hold set (it is behind and catching up in the background, or set is
// older than the graph): the caller then ranks exactly.
func (a *annIndex) search(e *Engine, set *vectorSet, q []float32, list int, rank func([]float32) (float64, bool)) (out []rankedVector, ok bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.follow(e, set) {
		return nil, false
	}
	for _, n := range a.graph.Search(q, min(list, maxSearchList), min(list, maxSearchList)) {
		key := a.keys[n.ID]
		if r, ok := rank(a.live[string(key)].vec); ok {
			out = append(out, rankedVector{key: key, rank: r})
		}
	}
	return out, true
}

// follow brings the graph to set, with a.mu held: at once when that is
// a few changes, else in the background. It reports whether the graph
// now holds set.
func (a *annIndex) follow(e *Engine, set *vectorSet) bool {
	if a.syncing {
		return false
	}
	if a.synced == set {
		return true
	}
	changes, ok := a.changes(set)
	if !ok {
		return false
	}
	// Many changes, or a graph mostly of deleted entries (rebuilt), are
	// for the background.
	if len(changes)*a.dims > inlineSyncFloats || a.graph.Deleted() > max(a.graph.Len()/2, 1000) {
		a.syncing = true
		go a.syncInBackground(e, set, changes)
		return false
	}
	a.apply(changes, 1)
	a.synced = set
	return true
}

// buildANNIndexes starts building the graph of every diskANN index, in
// the background, as the engine opens: a search after a restart then
// finds it built rather than starting it. Searches meanwhile are exact.
func (e *Engine) buildANNIndexes(ctx context.Context) {
	for _, db := range e.catalogSnapshot().dbs {
		for _, c := range db.colls {
			if _, err := e.VectorIndexesBuilt(ctx, db.id, c.id); err != nil && ctx.Err() == nil {
				e.log.Warn("vector indexes not built at start", slog.String("container", c.label()), slog.Any("err", err))
			}
		}
	}
}

// changes lists what makes the graph hold set. When set has the base of
// the graph's set, only its delta can differ; else every item is
// compared. ok is false when set is older than the graph's.
func (a *annIndex) changes(set *vectorSet) ([]annChange, bool) {
	var out []annChange
	if s := a.synced; s != nil {
		if set.lsn.behind(s.lsn) {
			return nil, false
		}
		if s.base.equal(set.base) {
			for key, vec := range set.delta {
				if e, ok := a.live[key]; (ok || vec != nil) && !(ok && sameVector(e.vec, vec)) {
					out = append(out, annChange{key: []byte(key), vec: vec})
				}
			}
			return out, true
		}
	}
	seen := make(map[string]bool, len(set.keys))
	set.each(func(key []byte, vec []float32) {
		seen[string(key)] = true
		e, ok := a.live[string(key)]
		switch {
		case !ok || !sameVector(e.vec, vec):
			out = append(out, annChange{key: key, vec: vec})
		case &e.vec[0] != &vec[0]:
			// The same numbers read again: hold the new set's, so the
			// old set's arrays can be freed.
			a.live[string(key)] = annEntry{id: e.id, vec: vec}
		}
	})
	for key := range a.live {
		if !seen[key] {
			out = append(out, annChange{key: []byte(key)})
		}
	}
	return out, true
}

// sameVector reports whether a and b hold the same numbers, without
// comparing them when they are one slice (unchanged since the same read).
func sameVector(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	return len(a) == 0 || &a[0] == &b[0] || slices.Equal(a, b)
}

// apply makes the changes to the graph, adding with workers goroutines.
func (a *annIndex) apply(changes []annChange, workers int) {
	var adds []annEntry
	for _, ch := range changes {
		if old, ok := a.live[string(ch.key)]; ok {
			a.graph.Delete(old.id)
			delete(a.live, string(ch.key))
		}
		if ch.vec == nil {
			continue
		}
		id := uint32(len(a.keys))
		a.keys = append(a.keys, bytes.Clone(ch.key))
		a.live[string(ch.key)] = annEntry{id: id, vec: ch.vec}
		adds = append(adds, annEntry{id: id, vec: ch.vec})
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(adds); i += workers {
				a.graph.Add(adds[i].id, adds[i].vec)
			}
		}()
	}
	wg.Wait()
}

// syncInBackground makes the graph hold set, on both cores, and lets
// searches use it again. A graph of more deleted entries than live ones
// is built afresh from set instead.
func (a *annIndex) syncInBackground(e *Engine, set *vectorSet, changes []annChange) {
	start := e.real.Elapsed()
	if a.graph.Deleted() > a.graph.Len()/2 {
		a.reset()
		changes = changes[:0]
		set.each(func(key []byte, vec []float32) { changes = append(changes, annChange{key: key, vec: vec}) })
	}
	a.apply(changes, 2)
	a.mu.Lock()
	a.synced, a.syncing = set, false
	a.mu.Unlock()
	e.log.Info("vector index built", slog.String("container", a.label), slog.String("path", a.path), slog.Int("changes", len(changes)), slog.Int("items", len(a.live)),
		slog.Duration("took", e.real.Elapsed()-start))
}

// VectorIndexesBuilt reports whether every diskANN graph of a container
// holds the container's vectors as they are now, starting the build of
// those that do not: what a benchmark waits for before it measures
// approximate searches.
func (e *Engine) VectorIndexesBuilt(ctx context.Context, dbID, collID string) (bool, error) {
	c, err := e.container(dbID, collID)
	if err != nil || c.vectors == nil {
		return err == nil, err
	}
	built := true
	for i, emb := range c.vectors.Embeddings {
		ix, ok := vector.Approximate(c.vectorIndexes, emb.Path)
		if !ok {
			continue
		}
		err := e.store.View(ctx, func(r storage.Reader) error {
			set, err := e.vectorSet(r, c, byte(i), e.workMeter(ctx, e.queryClock.Elapsed(), 0, ""))
			if err != nil {
				return err
			}
			a := e.annIndexFor(c, byte(i), ix)
			a.mu.Lock()
			defer a.mu.Unlock()
			built = a.follow(e, set) && built
			return nil
		})
		if err != nil {
			return false, err
		}
	}
	return built, nil
}
