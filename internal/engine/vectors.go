package engine

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/ebbdb/ebb/internal/engine/document"
	"github.com/ebbdb/ebb/internal/engine/index"
	"github.com/ebbdb/ebb/internal/engine/keyspace"
	"github.com/ebbdb/ebb/internal/engine/vector"
	"github.com/ebbdb/ebb/internal/engine/vector/ann"
	"github.com/ebbdb/ebb/internal/keys"
	"github.com/ebbdb/ebb/internal/query"
	"github.com/ebbdb/ebb/internal/storage"
)

// The vectors of a container with a vectorEmbeddingPolicy are kept
// apart from their items too, as float32s (the Vec keyspace), written
// and removed in the item's transaction. A vector search (ORDER BY
// VectorDistance of an embedding path and a constant vector) then ranks
// every item of its scope from those, without parsing a document, and
// hands the executor the items most similar first (vectorSource); the
// executor reads only as many as the page needs and computes each
// one's distance exactly, from its JSON. The policy is fixed when the
// container is created, so the keyspace never needs a backfill.

// vectorAt is the vector at a path ("/a/b") of a document: the array of
// dims numbers there, as float32s; nil when there is none.
func vectorAt(doc []byte, path string, dims int) []float32 {
	v := doc
	for _, name := range strings.Split(strings.TrimPrefix(path, "/"), "/") {
		ms, ok := document.ObjectMembers(v)
		if !ok {
			return nil
		}
		if v = document.Lookup(ms, name); v == nil {
			return nil
		}
	}
	return parseVector(v, dims)
}

// parseVector reads a JSON array of exactly dims numbers (a stored
// document's, so valid JSON) as float32s; nil when it is anything else.
func parseVector(v []byte, dims int) []float32 {
	v = bytes.TrimSpace(v)
	if len(v) < 2 || v[0] != '[' || v[len(v)-1] != ']' {
		return nil
	}
	out := make([]float32, 0, dims)
	for rest := v[1 : len(v)-1]; len(bytes.TrimSpace(rest)) > 0; {
		elem := rest
		if i := bytes.IndexByte(rest, ','); i >= 0 {
			elem, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil
		}
		f, err := strconv.ParseFloat(string(bytes.TrimSpace(elem)), 32)
		if err != nil || len(out) == dims {
			return nil // not a number (a nested value has commas too), or too many
		}
		out = append(out, float32(f))
	}
	if len(out) != dims {
		return nil
	}
	return out
}

// writeVectors stores the vectors of the item doc at key, replacing the
// item's earlier ones.
func writeVectors(w storage.Writer, c *container, key, doc []byte) error {
	if c.vectors == nil {
		return nil
	}
	for i, e := range c.vectors.Embeddings {
		vk := keyspace.VecKey(c.rid, byte(i), key)
		v := vectorAt(doc, e.Path, e.Dimensions)
		if v == nil {
			if err := w.Delete(vk); err != nil {
				return err
			}
			continue
		}
		b := make([]byte, 0, 4*len(v))
		for _, x := range v {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
		}
		if err := w.Set(vk, b); err != nil {
			return err
		}
	}
	return nil
}

// deleteVectors removes the vectors of the item at key.
func deleteVectors(w storage.Writer, c *container, key []byte) error {
	if c.vectors == nil {
		return nil
	}
	for i := range c.vectors.Embeddings {
		if err := w.Delete(keyspace.VecKey(c.rid, byte(i), key)); err != nil {
			return err
		}
	}
	return nil
}

// vectorSource is a query.OrderedSource for a vector search over src's
// scope: its items ranked by the stored vectors, most similar first,
// then those without a vector (or whose distance is undefined).
type vectorSource struct {
	*docSource
	plan  *query.Plan
	path  byte
	order query.VectorOrder
	fn    string
}

// vectorSourceFor returns the vector source serving plan over src, or
// nil when the plan is not a vector search the container's vectors can
// rank.
func vectorSourceFor(plan *query.Plan, src *docSource) *vectorSource {
	vs := src.c.vectors
	if vs == nil {
		return nil
	}
	vo, ok := plan.VectorOrder()
	if !ok {
		return nil
	}
	for i, e := range vs.Embeddings {
		if e.Path == vo.Path {
			fn := vo.Function
			if fn == "" {
				fn = e.DistanceFunction
			}
			return &vectorSource{docSource: src, plan: plan, path: byte(i), order: vo, fn: fn}
		}
	}
	return nil
}

func (s *vectorSource) Descending() bool { return false }

// rankTolerance is how close two ranks may be and still share a run:
// the executor sorts a run itself, by the exact distance from each
// item's JSON, which float32 storage may differ from in the last digits.
const rankTolerance = 1e-4

type rankedVector struct {
	key  []byte // the item's
	rank float64
}

// ScanOrdered implements query.OrderedSource: the ranked items in rank
// order, a run per group within rankTolerance of each other, then a last
// run of the items without a rank. The ranking is a heap: a page that
// wants ten items sorts only what it reads.
//
// Over a diskANN index (annindex.go) the items come first from the
// graph's candidate list; a page that reads past them goes on with the
// exact ranking, from where the candidates ended, so the order stays
// monotonic and an item is never yielded twice.
func (s *vectorSource) ScanOrdered(after []byte, yield func(run []byte, sorted bool, key, doc []byte) bool) error {
	return s.store.View(s.ctx, func(r storage.Reader) error {
		set, err := s.e.vectorSet(r, s.c, s.path, s.meter("reading the container's vectors"))
		if err != nil {
			return err
		}
		ranker := newVectorRanker(s.fn, s.order.Query)
		items := s.items(r)
		// Items ranked well before after's are before it: skip them.
		skipBelow := math.Inf(-1)
		if after != nil {
			if v := set.lookup(after); v != nil {
				if rank, ok := ranker.Rank(v); ok {
					skipBelow = rank - 2*rankTolerance*(1+math.Abs(rank))
				}
			}
		}
		run, prev := uint64(0), math.Inf(-1)
		yielded := map[string]bool{}
		// emit yields ranked in rank order from where the items yielded
		// so far end; stop is true when the page has what it wants.
		emit := func(ranked []rankedVector) (stop bool, err error) {
			h := newOrderedHeap(ranked, func(a, b rankedVector) bool {
				if a.rank != b.rank {
					return a.rank < b.rank
				}
				return bytes.Compare(a.key, b.key) < 0
			})
			for v, ok := h.next(); ok; v, ok = h.next() {
				if v.rank < skipBelow || v.rank < prev || yielded[string(v.key)] {
					continue
				}
				if v.rank-prev > rankTolerance*(1+math.Abs(prev)) {
					run++
				}
				prev = v.rank
				yielded[string(v.key)] = true
				err := items.lend(v.key, func(it storedItem, visible bool) error {
					if visible {
						stop = !yield(binary.BigEndian.AppendUint64(nil, run), false, v.key, it.doc)
					}
					return nil
				})
				if err != nil && !errors.Is(err, storage.ErrNotFound) {
					return true, err
				}
				if stop {
					return true, nil
				}
			}
			return false, nil
		}
		named, unranked, ok, err := s.filtered(set, ranker)
		if err != nil {
			return err
		}
		if ok {
			// Only these items can pass the WHERE: the ranked ones, then
			// those without a rank.
			if stop, err := emit(named); stop || err != nil {
				return err
			}
			last := binary.BigEndian.AppendUint64(nil, run+1)
			for _, key := range unranked {
				stop := false
				err := items.lend(key, func(it storedItem, visible bool) error {
					stop = visible && !yield(last, false, key, it.doc)
					return nil
				})
				if err != nil && !errors.Is(err, storage.ErrNotFound) {
					return err
				}
				if stop {
					break
				}
			}
			return nil
		}
		if candidates, ok := s.approximate(set, ranker); ok {
			if stop, err := emit(candidates); stop || err != nil {
				return err
			}
		}
		ranked, err := s.rank(set, ranker)
		if err != nil {
			return err
		}
		if stop, err := emit(ranked); stop || err != nil {
			return err
		}
		// Read this far, the page wants the items without a rank too.
		for _, v := range ranked {
			yielded[string(v.key)] = true
		}
		last := binary.BigEndian.AppendUint64(nil, run+1)
		return items.scan(s.prefix, keys.PrefixEnd(s.prefix), false, func(key []byte, it storedItem) bool {
			return yielded[string(key)] || yield(last, false, key, it.doc)
		})
	})
}

// filtered ranks only the items an index says can pass the WHERE (a
// sargable term such as c.tenant = @t), when it names few of the
// container's items: a selective filter then ranks exactly its own
// items, where the executor would read the container's most similar
// items until enough of them pass. ok is false when no index serves
// the WHERE or it names more than a twentieth of the items; unranked
// are the named items without a vector. Reading the index past the
// page budget is the error.
func (s *vectorSource) filtered(set *vectorSet, ranker *vectorRanker) (ranked []rankedVector, unranked [][]byte, ok bool, err error) {
	ix, _, err := index.SourceFor(s.ctx, s.indexQuery(), s.plan, 0)
	if err != nil || ix == nil {
		return nil, nil, false, nil // an index that cannot serve: rank them all
	}
	limit := max(len(set.keys)/20, 100)
	m := s.meter("reading the items the WHERE names from its index")
	var keys [][]byte
	var spent error
	err = ix.Scan(nil, func(key, _ []byte) bool {
		keys = append(keys, bytes.Clone(key))
		spent = m.step()
		return len(keys) <= limit && spent == nil
	})
	if spent != nil {
		return nil, nil, false, spent
	}
	if err != nil || len(keys) > limit {
		return nil, nil, false, nil
	}
	for _, key := range keys {
		if v := set.lookup(key); v != nil {
			if rank, ok := ranker.Rank(v); ok {
				ranked = append(ranked, rankedVector{key: key, rank: rank})
				continue
			}
		}
		unranked = append(unranked, key)
	}
	return ranked, unranked, true, nil
}

// approximate returns the candidates of the path's diskANN index for the
// search, ranked; ok is false when the search is to be exact: no diskANN
// index on the path, bruteForce asked, a distance function other than
// the one the graph orders by, a scope of one partition (ranked exactly
// from its own few items), a stored procedure's snapshot, or a graph
// still catching up.
func (s *vectorSource) approximate(set *vectorSet, ranker *vectorRanker) ([]rankedVector, bool) {
	ix, ok := vector.Approximate(s.c.vectorIndexes, s.order.Path)
	if !ok || s.order.BruteForce || s.fn != s.c.vectors.Embeddings[s.path].DistanceFunction ||
		!bytes.Equal(s.prefix, keyspace.CollPrefix(keyspace.Doc, s.c.rid)) || s.store != s.e.store {
		return nil, false
	}
	list := max(s.order.Want, 10) * s.order.SearchListMultiplier
	return s.e.annIndexFor(s.c, s.path, ix).search(s.e, set, ranker.q, list, ranker.Rank)
}

// rank ranks the vectors of set in the source's scope.
func (s *vectorSource) rank(set *vectorSet, ranker *vectorRanker) ([]rankedVector, error) {
	scope := s.prefix
	rankOf := func(key []byte, v []float32) (rankedVector, bool) {
		if !bytes.HasPrefix(key, scope) {
			return rankedVector{}, false
		}
		rank, ok := ranker.Rank(v)
		return rankedVector{key: key, rank: rank}, ok
	}
	out := make([]rankedVector, len(set.keys))
	// Two halves at once: the distances are most of a search's work.
	var wg sync.WaitGroup
	half := len(set.keys) / 2
	for _, part := range [][2]int{{0, half}, {half, len(set.keys)}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := part[0]; i < part[1]; i++ {
				out[i].rank = math.NaN()
				if _, changed := set.delta[string(set.keys[i])]; changed {
					continue // a later version, below
				}
				if v, ok := rankOf(set.keys[i], set.vector(i)); ok {
					out[i] = v
				}
			}
		}()
	}
	wg.Wait()
	for key, vec := range set.delta {
		if vec == nil {
			continue
		}
		if v, ok := rankOf([]byte(key), vec); ok {
			out = append(out, v)
		}
	}
	return slices.DeleteFunc(out, func(v rankedVector) bool { return math.IsNaN(v.rank) }), nil
}

// vectorRanker ranks stored vectors for one query vector by one distance
// function: the key ORDER BY VectorDistance sorts by (the similarity
// negated, the Euclidean distance as it is), most similar first. It
// computes in float32 with the graph's loops (AVX2 where the processor
// has it): a rank only decides the order the executor reads items in,
// and the executor computes each distance it shows exactly, from the
// item's JSON; float32 sums of a few thousand products differ from
// float64 ones far less than rankTolerance.
type vectorRanker struct {
	fn    string
	q     []float32
	qnorm float64
}

func newVectorRanker(fn string, query []float64) *vectorRanker {
	r := &vectorRanker{fn: fn, q: make([]float32, len(query))}
	for i, x := range query {
		r.q[i] = float32(x)
	}
	r.qnorm = math.Sqrt(float64(ann.Dot(r.q, r.q)))
	return r
}

// Rank is a stored vector's key; ok is false when its distance is
// undefined (another length, a zero vector under cosine), or when the
// query has numbers beyond float32's range: the executor then orders
// those items itself, in the last run.
func (r *vectorRanker) Rank(v []float32) (float64, bool) {
	if len(v) != len(r.q) || len(v) == 0 || math.IsInf(r.qnorm, 0) {
		return 0, false
	}
	switch r.fn {
	case vector.DotProduct:
		return -float64(ann.Dot(v, r.q)), true
	case vector.Euclidean:
		return math.Sqrt(float64(ann.SquaredL2(v, r.q))), true
	case vector.Cosine:
		norm := math.Sqrt(float64(ann.Dot(v, v)))
		if norm == 0 || r.qnorm == 0 {
			return 0, false
		}
		return -float64(ann.Dot(v, r.q)) / (norm * r.qnorm), true
	}
	return 0, false
}

// vectorSet is the vectors of one embedding path of a container, in
// memory, as stored when the container's version was lsn: every item's
// key and vector as read at base (keys, data), and the items written
// since (delta: the vector of each, nil for none). A set is never
// changed once built; a later one shares its arrays and adds to a copy
// of its delta.
type vectorSet struct {
	lsn  version
	base version
	dims int
	keys [][]byte
	data []float32
	// delta holds the items written after base, by key. An item deleted
	// since base keeps its old vector in keys and data: the search skips
	// it when it finds the item gone.
	delta map[string][]float32
	// positions finds a key in keys; the sets that share keys share it.
	positions *keyPositions
}

// keyPositions is the position of each key of a set's keys, made by
// the first lookup.
type keyPositions struct {
	once sync.Once
	m    map[string]int
}

func (v *vectorSet) vector(i int) []float32 { return v.data[i*v.dims : (i+1)*v.dims] }

// each calls f with every item of the set that has a vector, and it.
func (v *vectorSet) each(f func(key []byte, vec []float32)) {
	for i, key := range v.keys {
		if _, changed := v.delta[string(key)]; !changed {
			f(key, v.vector(i))
		}
	}
	for key, vec := range v.delta {
		if vec != nil {
			f([]byte(key), vec)
		}
	}
}

// lookup returns the vector of the item at key; nil when it has none.
// The first lookup in a set indexes its keys.
func (v *vectorSet) lookup(key []byte) []float32 {
	if vec, changed := v.delta[string(key)]; changed {
		return vec
	}
	p := v.positions
	p.once.Do(func() {
		p.m = make(map[string]int, len(v.keys))
		for i, k := range v.keys {
			p.m[string(k)] = i
		}
	})
	if i, ok := p.m[string(key)]; ok {
		return v.vector(i)
	}
	return nil
}

// vectorSetKey names a cached vector set.
type vectorSetKey struct {
	rid  [8]byte
	path byte
}

// maxCachedFloats bounds the vectors the engine keeps in memory for
// searches (384 MB of float32s: 100,000 vectors of 768 dimensions fit);
// a container's vectors beyond it are read from storage on every search.
const maxCachedFloats = 96 << 20

// vectorSet returns container c's vectors at embedding path number path
// as of snapshot r: the cached set when c has not been written since it
// was read (every item write moves the container state's LSN), else a
// set read from r within m, cached when it fits.
func (e *Engine) vectorSet(r storage.Reader, c *container, path byte, m *workMeter) (*vectorSet, error) {
	st, err := readContainerState(r, c)
	if err != nil {
		return nil, err
	}
	key := vectorSetKey{c.rid, path}
	cached, _ := e.vecSets.get(key)
	if cached != nil && cached.lsn.equal(st.lsns) {
		return cached, nil
	}
	dims := c.vectors.Embeddings[path].Dimensions
	var set *vectorSet
	if cached != nil && cached.lsn.behind(st.lsns) && cached.base.distance(st.lsns) <= uint64(len(cached.keys)/10) {
		// Few writes since the vectors were read (each moves the LSN
		// by one): add them to what is in memory.
		if set, err = catchUp(r, c, path, cached, st.lsns, m); err != nil {
			return nil, err
		}
	} else if set, err = readVectorSet(r, c, path, dims, st, m); err != nil {
		return nil, err
	}
	e.vecSets.put(key, set, len(set.data))
	return set, nil
}

// readVectorSet reads every vector of c at embedding path number path in
// snapshot r, whose container state is st, within m.
func readVectorSet(r storage.Reader, c *container, path byte, dims int, st containerState, m *workMeter) (*vectorSet, error) {
	set := &vectorSet{lsn: st.lsns, base: st.lsns, dims: dims, positions: &keyPositions{}}
	if n := st.items; n > 0 && n*int64(dims) <= maxCachedFloats {
		set.keys = make([][]byte, 0, n)
		set.data = make([]float32, 0, n*int64(dims))
	}
	prefix := keyspace.VecPrefix(c.rid, path, keyspace.CollPrefix(keyspace.Doc, c.rid))
	it := r.Scan(prefix, keys.PrefixEnd(prefix), false)
	defer it.Close()
	for it.Next() {
		if err := m.step(); err != nil {
			return nil, err
		}
		if v := decodeVector(it.Value(), dims); v != nil {
			set.keys = append(set.keys, keyspace.DocKeyOfVec(it.Key()))
			set.data = append(set.data, v...)
		}
	}
	return set, it.Err()
}

// catchUp is set with the items written and removed after it up to
// lsn (changesSince), read within m.
func catchUp(r storage.Reader, c *container, path byte, set *vectorSet, lsn version, m *workMeter) (*vectorSet, error) {
	next := vectorSet{lsn: lsn, base: set.base, dims: set.dims, keys: set.keys, data: set.data, positions: set.positions}
	next.delta = make(map[string][]float32, len(set.delta))
	for k, v := range set.delta {
		next.delta[k] = v
	}
	err := changesBetween(r, c, set.lsn, lsn, m, func(docKey []byte, gone bool) error {
		if gone {
			next.delta[string(docKey)] = nil
			return nil
		}
		b, err := r.Get(keyspace.VecKey(c.rid, path, docKey))
		switch {
		case errors.Is(err, storage.ErrNotFound):
			next.delta[string(docKey)] = nil
		case err != nil:
			return err
		default:
			next.delta[string(docKey)] = decodeVector(b, set.dims)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &next, nil
}

// decodeVector reads a stored vector of dims float32s; nil when it has
// another length.
func decodeVector(b []byte, dims int) []float32 {
	if len(b) != 4*dims {
		return nil
	}
	v := make([]float32, dims)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}
