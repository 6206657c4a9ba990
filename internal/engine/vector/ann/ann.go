// Package ann owns an approximate nearest-neighbour index in memory: a
// hierarchical navigable small-world graph (HNSW; Malkov & Yashunin,
// https://arxiv.org/abs/1603.09320) over float32 vectors, which answers
// a top-k search by measuring a few thousand vectors rather than all of
// them. It backs the diskANN vector index type.
//
// The caller keeps everything else: it names vectors by dense ids of
// its own choosing and maps them to items, and since nothing here is
// persisted, it rebuilds the graph from its store when it opens one.
//
// # Concurrency
//
// Adds, Deletes and Searches run at once. Each node's neighbour lists
// have their own lock, held only to copy or rewrite them, so two Adds
// contend only where their neighbourhoods meet. The one global lock is
// held through an insertion only by the first few Adds and the rare
// one that lifts the graph's top level. Vectors live in fixed-size
// chunks that never move, so growing the index never disturbs a search
// reading it.
package ann

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
)

// Metric orders vectors by a distance to minimise.
type Metric int

const (
	// Cosine is 1 - cos(a, b). Vectors and queries are normalised on the
	// way in, which makes it one inner product; a zero vector is at
	// distance 1 from everything.
	Cosine Metric = iota
	// DotProduct is -dot(a, b).
	DotProduct
	// Euclidean is the squared L2 distance, which orders as L2 does
	// without a square root.
	Euclidean
)

// Config tunes the graph; the zero Config is a good default.
type Config struct {
	// M is the number of neighbours a node keeps on the upper layers;
	// layer 0, which every search ends on, keeps 2*M. 0 means 24:
	// vectors of hundreds of dimensions want more links than the usual
	// 16, which at 100,000 vectors of 768 found under 0.95 of the
	// true top 10 at ef 100 when the vectors spread in all dimensions.
	M int
	// EfConstruction is the candidate list size of an insertion's
	// searches: larger builds slower and finds better neighbours.
	// 0 means 100.
	EfConstruction int
	// Seed seeds the level generator, so that a build whose Adds are
	// sequential is reproducible.
	Seed uint64
}

// Neighbor is one search result: an id and its distance from the
// query, in the index's Metric.
type Neighbor struct {
	ID       uint32
	Distance float32
}

const (
	// chunkShift sizes the chunks vectors and nodes are stored in: 256
	// vectors, 768 KiB at 768 dimensions, so an index grows in steps
	// small next to it and a small index stays small.
	chunkShift = 8
	chunkSize  = 1 << chunkShift
	chunkMask  = chunkSize - 1

	// maxLevel caps the level generator, harmlessly: at the default M a
	// node is above it once in 24^16 (about 2^73).
	maxLevel = 16
)

// Node states.
const (
	absent uint32 = iota
	live
	deleted
)

// Index is an HNSW graph over vectors of a fixed number of dimensions.
type Index struct {
	dims           int
	metric         Metric
	m              int // neighbours chosen for a new node, and kept on upper layers
	m0             int // neighbours kept on layer 0
	efConstruction int
	levelScale     float64 // the paper's mL, 1/ln(M)

	chunks atomic.Pointer[[]*chunk]
	growMu sync.Mutex

	// entry is the entry point: (level+1)<<32 | id, or 0 while the index
	// is empty. entryMu serialises the Adds that may replace it.
	entry   atomic.Uint64
	entryMu sync.Mutex

	levelMu sync.Mutex
	levels  *rand.Rand

	added, deleted atomic.Int64
	linked         atomic.Int64 // Adds done

	scratch sync.Pool
}

// chunk holds chunkSize consecutive ids: their vectors, contiguous, and
// their nodes.
type chunk struct {
	vectors []float32
	nodes   [chunkSize]node
}

// node is one id's place in the graph.
type node struct {
	mu    sync.Mutex // guards the neighbour lists' contents
	state atomic.Uint32
	// bottom is the layer 0 list, in storage the chunk allocates for all
	// its nodes at once; upper holds layers 1 and up. Both are sized
	// before the node is linked and never grow past their capacity.
	bottom neighbours
	upper  []neighbours
}

// neighbours is a node's neighbour list on one layer, with each
// neighbour's distance from the node, which spares recomputing them
// when the list overflows and has to be pruned.
type neighbours struct {
	ids   []uint32
	dists []float32
}

// layer is the node's neighbour list on layer l, which the node has.
func (n *node) layer(l int) *neighbours {
	if l == 0 {
		return &n.bottom
	}
	return &n.upper[l-1]
}

// New returns an empty index of vectors of dims dimensions.
func New(dims int, metric Metric, cfg Config) *Index {
	if dims <= 0 {
		panic(fmt.Sprintf("ann: %d dimensions", dims))
	}
	m := cfg.M
	if m == 0 {
		m = 24
	}
	m = max(m, 2) // M = 1 would make mL infinite
	ef := cfg.EfConstruction
	if ef == 0 {
		ef = 100
	}
	x := &Index{
		dims:           dims,
		metric:         metric,
		m:              m,
		m0:             2 * m,
		efConstruction: max(ef, m),
		levelScale:     1 / math.Log(float64(m)),
		levels:         rand.New(rand.NewPCG(cfg.Seed, 0x9e3779b97f4a7c15)),
	}
	x.chunks.Store(new([]*chunk))
	x.scratch.New = func() any { return new(scratch) }
	return x
}

// Len is the number of ids added.
func (x *Index) Len() int { return int(x.added.Load()) }

// Deleted is the number of ids deleted.
func (x *Index) Deleted() int { return int(x.deleted.Load()) }

// Add inserts v (of the index's dimensions; copied) under id. Ids are
// the caller's: dense small integers (0, 1, 2, ...), since storage is
// indexed by them, each added once. Adding an id again, deleted or
// not, does nothing: a vector that changes takes a new id, its old one
// deleted. Add may run concurrently with itself, Search and Delete. It
// panics when v has the wrong number of dimensions, which is the
// caller's mistake to check for.
func (x *Index) Add(id uint32, v []float32) {
	if len(v) != x.dims {
		panic(fmt.Sprintf("ann: vector of %d dimensions added to an index of %d", len(v), x.dims))
	}
	x.grow(id)
	n := x.node(id)
	if !n.state.CompareAndSwap(absent, live) {
		return
	}
	x.added.Add(1)
	vec := x.vector(id)
	copy(vec, v)
	if x.metric == Cosine {
		normalize(vec)
	}
	level := x.randomLevel()
	if level > 0 {
		n.upper = make([]neighbours, level)
		for i := range n.upper {
			n.upper[i] = neighbours{ids: make([]uint32, 0, x.m), dists: make([]float32, 0, x.m)}
		}
	}

	// An Add that may become the entry point holds entryMu throughout,
	// so that no other Add raises the top level meanwhile and leaves
	// the two of them unlinked on the layers above the old top. So do
	// the first efConstruction Adds: run at once on a graph of a few
	// nodes, they would see only those and not each other, and link
	// to them alone; a node that starts so poorly linked can lose
	// every link to it as its neighbours' lists fill, and never be
	// found again.
	ep := x.entry.Load()
	exclusive := ep == 0 || level > entryLevel(ep) || x.linked.Load() < int64(x.efConstruction)
	if exclusive {
		x.entryMu.Lock()
		ep = x.entry.Load()
		exclusive = ep == 0 || level > entryLevel(ep) || x.linked.Load() < int64(x.efConstruction)
		if !exclusive {
			x.entryMu.Unlock()
		}
	}
	if ep != 0 {
		s := x.getScratch()
		x.insert(s, id, vec, level, ep)
		x.scratch.Put(s)
	}
	x.linked.Add(1)
	if exclusive {
		if ep == 0 || level > entryLevel(ep) {
			x.entry.Store(packEntry(id, level))
		}
		x.entryMu.Unlock()
	}
}

// insert links node id, of vector q, into the layers from level down,
// descending from the entry point ep (algorithm 1 of the paper).
//
// The node's own lists are all set before any node links back to it:
// a node reachable on a layer before it has links on the layers below
// would be a dead end there, and an insertion descending through it
// would link to it alone.
func (x *Index) insert(s *scratch, id uint32, q []float32, level int, ep uint64) {
	cur, top := entryID(ep), entryLevel(ep)
	curDist := x.distance(q, x.vector(cur))
	for l := top; l > level; l-- {
		cur, curDist = x.greedy(s, q, cur, curDist, l)
	}
	s.entries = append(s.entries[:0], candidate{curDist, cur})
	n := x.node(id)
	for l := min(level, top); l >= 0; l-- {
		found := x.searchLayer(s, q, s.entries, x.efConstruction, l, false)
		// The node cannot find itself yet (nothing links to it), but
		// is kept off its own list whatever happens.
		found = slices.DeleteFunc(found, func(c candidate) bool { return c.id == id })
		s.chosen[l] = x.selectNeighbours(s.chosen[l][:0], found, x.m)
		n.mu.Lock()
		own := n.layer(l)
		for _, c := range s.chosen[l] {
			own.ids = append(own.ids, c.id)
			own.dists = append(own.dists, c.dist)
		}
		n.mu.Unlock()
		s.entries = append(s.entries[:0], found...)
	}
	for l := min(level, top); l >= 0; l-- {
		for _, c := range s.chosen[l] {
			x.link(s, c.id, id, c.dist, l)
		}
	}
}

// link adds to, at distance dist, to from's neighbours on layer l,
// pruning the list with the selection heuristic when it is full.
//
// When the pruning drops to itself, the link goes instead to the kept
// neighbour nearest to, if that is nearer than from: the heuristic
// drops a node on the understanding that a kept one leads to it, and
// this makes it so. Without it, a node inserted at the same time as
// its nearest neighbour (so that neither saw the other) could be
// dropped by every list for the sake of that neighbour, which does
// not link to it, and never be found. Each step is nearer to, so the
// chain ends.
func (x *Index) link(s *scratch, from, to uint32, dist float32, l int) {
	for {
		next, nextDist, dropped := x.linkOnce(s, from, to, dist, l)
		if !dropped || nextDist >= dist {
			return
		}
		from, dist = next, nextDist
	}
}

// linkOnce is a step of link: if from's list drops to, it returns the
// kept neighbour nearest to, at its distance from to.
func (x *Index) linkOnce(s *scratch, from, to uint32, dist float32, l int) (next uint32, nextDist float32, dropped bool) {
	limit := x.m
	if l == 0 {
		limit = x.m0
	}
	n := x.node(from)
	n.mu.Lock()
	defer n.mu.Unlock()
	list := n.layer(l)
	if slices.Contains(list.ids, to) {
		return 0, 0, false
	}
	if len(list.ids) < limit {
		list.ids = append(list.ids, to)
		list.dists = append(list.dists, dist)
		return 0, 0, false
	}
	cands := s.pruning[:0]
	for i, id := range list.ids {
		cands = append(cands, candidate{list.dists[i], id})
	}
	cands = append(cands, candidate{dist, to})
	slices.SortFunc(cands, func(a, b candidate) int { return cmp.Compare(a.dist, b.dist) })
	s.pruning = cands
	s.shrink = x.selectNeighbours(s.shrink[:0], cands, limit)
	list.ids, list.dists = list.ids[:0], list.dists[:0]
	for _, c := range s.shrink {
		list.ids = append(list.ids, c.id)
		list.dists = append(list.dists, c.dist)
	}
	if slices.Contains(list.ids, to) {
		return 0, 0, false
	}
	v := x.vector(to)
	nextDist = float32(math.Inf(1))
	for _, id := range list.ids {
		if d := x.distance(v, x.vector(id)); d < nextDist {
			next, nextDist = id, d
		}
	}
	return next, nextDist, true
}

// selectNeighbours picks up to m of cands (nearest first, at their
// distances from a base node) with the paper's heuristic (algorithm
// 4): a candidate is kept only when it is nearer the base than to
// every one kept before it, which spreads the links in all directions
// instead of spending them on one cluster, and keeps the graph
// navigable between clusters. A copy of a kept vector is pruned too,
// though no nearer to it than to the base when the base is a copy
// as well: else a node among many duplicates would keep only them,
// and a vector linked from them alone would be dropped and lost.
//
// The pruned candidates are not used to fill the list up (the paper's
// keepPrunedConnections): a full list overflows again at the next
// back-link, and pruning, quadratic in the list's length, then
// dominated the build for no gain in recall. The choice is appended
// to chosen.
func (x *Index) selectNeighbours(chosen, cands []candidate, m int) []candidate {
	for _, c := range cands {
		if len(chosen) >= m {
			break
		}
		v := x.vector(c.id)
		diverse := true
		for _, r := range chosen {
			if rv := x.vector(r.id); x.distance(v, rv) < c.dist || slices.Equal(v, rv) {
				diverse = false
				break
			}
		}
		if diverse {
			chosen = append(chosen, c)
		}
	}
	return chosen
}

// Delete marks id deleted: Search no longer returns it, though the
// graph still routes through it, since unlinking a node would cut
// paths other nodes are reached by. An unknown or deleted id is left
// alone.
func (x *Index) Delete(id uint32) {
	chunks := *x.chunks.Load()
	if int(id>>chunkShift) >= len(chunks) {
		return
	}
	if chunks[id>>chunkShift].nodes[id&chunkMask].state.CompareAndSwap(live, deleted) {
		x.deleted.Add(1)
	}
}

// Search returns up to k live ids nearest q, nearest first, having
// kept a list of the ef nearest live ids found (ef is raised to k):
// larger ef finds more of the true nearest, slower. It returns nil for
// an empty index or a query of the wrong number of dimensions.
func (x *Index) Search(q []float32, k, ef int) []Neighbor {
	if len(q) != x.dims || k <= 0 {
		return nil
	}
	ep := x.entry.Load()
	if ep == 0 {
		return nil
	}
	s := x.getScratch()
	defer x.scratch.Put(s)
	if x.metric == Cosine {
		s.query = append(s.query[:0], q...)
		normalize(s.query)
		q = s.query
	}
	cur := entryID(ep)
	curDist := x.distance(q, x.vector(cur))
	for l := entryLevel(ep); l > 0; l-- {
		cur, curDist = x.greedy(s, q, cur, curDist, l)
	}
	s.entries = append(s.entries[:0], candidate{curDist, cur})
	found := x.searchLayer(s, q, s.entries, max(ef, k), 0, true)
	if len(found) == 0 {
		return nil
	}
	out := make([]Neighbor, min(k, len(found)))
	for i := range out {
		out[i] = Neighbor{ID: found[i].id, Distance: found[i].dist}
	}
	return out
}

// greedy walks layer l from cur towards q, to the nearest node it can
// reach by steps that each get nearer: how a search crosses the sparse
// upper layers.
func (x *Index) greedy(s *scratch, q []float32, cur uint32, curDist float32, l int) (uint32, float32) {
	for moved := true; moved; {
		moved = false
		for _, id := range x.neighbourIDs(s, cur, l) {
			if d := x.distance(q, x.vector(id)); d < curDist {
				cur, curDist, moved = id, d, true
			}
		}
	}
	return cur, curDist
}

// searchLayer is the paper's beam search (algorithm 2) on layer l: from
// entries, it expands the nearest unexpanded candidate until none is
// nearer than the worst of the ef best found. With liveOnly, deleted
// nodes are expanded but not counted among the ef, so that a search
// through a graph with many deletions still gathers ef live ones. The
// result, nearest first, is in s's storage.
func (x *Index) searchLayer(s *scratch, q []float32, entries []candidate, ef, l int, liveOnly bool) []candidate {
	s.startVisit(x)
	s.candidates, s.best = s.candidates[:0], farthestFirst{s.best.h[:0]}
	for _, e := range entries {
		if s.visit(e.id) {
			continue
		}
		s.candidates.push(e)
		if !liveOnly || x.live(e.id) {
			s.best.push(e)
			if s.best.len() > ef {
				s.best.pop()
			}
		}
	}
	for len(s.candidates) > 0 {
		c := s.candidates.pop()
		if s.best.len() >= ef && c.dist > s.best.worst() {
			break
		}
		for _, id := range x.neighbourIDs(s, c.id, l) {
			if s.visit(id) {
				continue
			}
			d := x.distance(q, x.vector(id))
			if s.best.len() < ef || d < s.best.worst() {
				s.candidates.push(candidate{d, id})
				if !liveOnly || x.live(id) {
					s.best.push(candidate{d, id})
					if s.best.len() > ef {
						s.best.pop()
					}
				}
			}
		}
	}
	s.found = s.best.sorted(s.found)
	return s.found
}

// neighbourIDs copies node id's neighbours on layer l into s's storage,
// so that the node's lock is held only for the copy.
func (x *Index) neighbourIDs(s *scratch, id uint32, l int) []uint32 {
	n := x.node(id)
	n.mu.Lock()
	s.ids = append(s.ids[:0], n.layer(l).ids...)
	n.mu.Unlock()
	return s.ids
}

// distance is the metric's distance between a and b, both of the
// index's dimensions (and normalised, under Cosine).
func (x *Index) distance(a, b []float32) float32 {
	switch x.metric {
	case Cosine:
		return 1 - dot(a, b)
	case DotProduct:
		return -dot(a, b)
	default:
		return squaredL2(a, b)
	}
}

// grow makes room for id, allocating the chunks up to its own. The
// chunk list is replaced, never changed, so readers holding the old one
// keep a valid view.
func (x *Index) grow(id uint32) {
	need := int(id>>chunkShift) + 1
	if len(*x.chunks.Load()) >= need {
		return
	}
	x.growMu.Lock()
	defer x.growMu.Unlock()
	old := *x.chunks.Load()
	if len(old) >= need {
		return
	}
	chunks := make([]*chunk, need)
	copy(chunks, old)
	for i := len(old); i < need; i++ {
		chunks[i] = x.newChunk()
	}
	x.chunks.Store(&chunks)
}

func (x *Index) newChunk() *chunk {
	c := &chunk{vectors: make([]float32, chunkSize*x.dims)}
	ids := make([]uint32, chunkSize*x.m0)
	dists := make([]float32, chunkSize*x.m0)
	for i := range c.nodes {
		lo, hi := i*x.m0, (i+1)*x.m0
		c.nodes[i].bottom = neighbours{ids: ids[lo:lo:hi], dists: dists[lo:lo:hi]}
	}
	return c
}

// vector is id's vector; id has been added, or is being.
func (x *Index) vector(id uint32) []float32 {
	c := (*x.chunks.Load())[id>>chunkShift]
	lo := int(id&chunkMask) * x.dims
	return c.vectors[lo : lo+x.dims : lo+x.dims]
}

// node is id's node; id's chunk exists.
func (x *Index) node(id uint32) *node {
	return &(*x.chunks.Load())[id>>chunkShift].nodes[id&chunkMask]
}

func (x *Index) live(id uint32) bool { return x.node(id).state.Load() == live }

// randomLevel draws a new node's top layer: floor(-ln(U) * mL), so
// each layer holds about 1/M of the one below.
func (x *Index) randomLevel() int {
	x.levelMu.Lock()
	u := x.levels.Float64()
	x.levelMu.Unlock()
	return min(int(-math.Log(1-u)*x.levelScale), maxLevel)
}

func packEntry(id uint32, level int) uint64 { return uint64(level+1)<<32 | uint64(id) }
func entryID(ep uint64) uint32              { return uint32(ep) }
func entryLevel(ep uint64) int              { return int(ep>>32) - 1 }

// scratch is one Add's or Search's working memory, pooled so that a
// search allocates only its result.
type scratch struct {
	// visited[id] == epoch marks id visited by the current searchLayer;
	// a new epoch forgets them all without clearing.
	visited []uint32
	epoch   uint32

	candidates nearestFirst
	best       farthestFirst
	found      []candidate
	entries    []candidate
	ids        []uint32
	query      []float32

	chosen  [maxLevel + 1][]candidate // an insertion's neighbours on each layer
	pruning []candidate               // a full list's neighbours and the one added
	shrink  []candidate               // the ones pruning keeps
}

func (x *Index) getScratch() *scratch { return x.scratch.Get().(*scratch) }

func (s *scratch) startVisit(x *Index) {
	if capacity := len(*x.chunks.Load()) * chunkSize; len(s.visited) < capacity {
		s.visited = slices.Grow(s.visited, capacity-len(s.visited))[:capacity]
	}
	s.epoch++
	if s.epoch == 0 {
		clear(s.visited[:cap(s.visited)])
		s.epoch = 1
	}
}

// visit marks id visited and reports whether it already was.
func (s *scratch) visit(id uint32) bool {
	if int(id) >= len(s.visited) {
		// A node added since the search began.
		s.visited = slices.Grow(s.visited, int(id)+1-len(s.visited))[:id+1]
	}
	if s.visited[id] == s.epoch {
		return true
	}
	s.visited[id] = s.epoch
	return false
}
