package ann

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ebbdb/ebb/internal/race"
)

// dataset is a seeded set of clustered vectors and of queries drawn
// near the same clusters (not from the set).
type dataset struct {
	vectors, queries [][]float32
}

// shape is how a generated vector set clusters: around clusters
// centres (each coordinate N(0, 1)), each cluster varying along rank
// directions of its own, the r-th (from 1) weighted spread/sqrt(r),
// plus noise (a standard deviation) in every dimension.
type shape struct {
	clusters, rank int
	spread, noise  float64
}

var (
	// embeddings is shaped like text embeddings: clusters of low
	// intrinsic dimension (16) in however many dimensions.
	embeddings = shape{clusters: 50, rank: 16, spread: 0.4, noise: 0.05}
	// gaussian is 50 Gaussian balls, which spread in every dimension:
	// in hundreds of them, a point's nearest neighbours are barely
	// nearer than the rest of its cluster, the hard case for a graph.
	gaussian = shape{clusters: 50, noise: 1}
	// fewGaussian is 5 Gaussian balls: clusters of 2,000 in the recall
	// tests' 10,000 vectors, too many for a search to measure all of
	// one, as it nearly does among 50 clusters of 200.
	fewGaussian = shape{clusters: 5, noise: 1}
)

// generate makes n vectors and queries queries (drawn like the
// vectors, not among them) of dims dimensions, from seed.
func (sh shape) generate(seed uint64, n, queries, dims int) dataset {
	rng := rand.New(rand.NewPCG(seed, 1))
	type cluster struct{ centre, basis []float32 }
	cs := make([]cluster, sh.clusters)
	for i := range cs {
		c := cluster{centre: make([]float32, dims), basis: make([]float32, sh.rank*dims)}
		for d := range c.centre {
			c.centre[d] = float32(rng.NormFloat64())
		}
		for r := range sh.rank {
			weight := sh.spread / math.Sqrt(float64(r+1))
			for d := range dims {
				c.basis[r*dims+d] = float32(rng.NormFloat64() * weight)
			}
		}
		cs[i] = c
	}
	point := func() []float32 {
		c := cs[rng.IntN(sh.clusters)]
		v := make([]float32, dims)
		for d := range v {
			v[d] = c.centre[d] + float32(rng.NormFloat64()*sh.noise)
		}
		for r := range sh.rank {
			z := float32(rng.NormFloat64())
			row := c.basis[r*dims : (r+1)*dims]
			for d := range v {
				v[d] += z * row[d]
			}
		}
		return v
	}
	ds := dataset{vectors: make([][]float32, n), queries: make([][]float32, queries)}
	for i := range ds.vectors {
		ds.vectors[i] = point()
	}
	for i := range ds.queries {
		ds.queries[i] = point()
	}
	return ds
}

// exactDistance is metric's distance in float64, computed apart from
// the index's code so that it checks it.
func exactDistance(metric Metric, a, b []float32) float64 {
	var dot, na, nb, l2 float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		dot += x * y
		na += x * x
		nb += y * y
		l2 += (x - y) * (x - y)
	}
	switch metric {
	case Cosine:
		if na == 0 || nb == 0 {
			return 1
		}
		return 1 - dot/math.Sqrt(na*nb)
	case DotProduct:
		return -dot
	default:
		return l2
	}
}

// exactTop is the brute-force top k of q among vectors whose ids pass
// keep (nil: all).
func exactTop(metric Metric, vectors [][]float32, q []float32, k int, keep func(uint32) bool) []uint32 {
	type hit struct {
		id   uint32
		dist float64
	}
	hits := make([]hit, 0, len(vectors))
	for i, v := range vectors {
		if keep == nil || keep(uint32(i)) {
			hits = append(hits, hit{uint32(i), exactDistance(metric, q, v)})
		}
	}
	slices.SortFunc(hits, func(a, b hit) int { return cmp.Compare(a.dist, b.dist) })
	top := make([]uint32, 0, k)
	for _, h := range hits[:min(k, len(hits))] {
		top = append(top, h.id)
	}
	return top
}

// recall is the share of the exact top k that the results hold.
func recall(exact []uint32, got []Neighbor) float64 {
	if len(exact) == 0 {
		return 1
	}
	hits := 0
	for _, n := range got {
		if slices.Contains(exact, n.ID) {
			hits++
		}
	}
	return float64(hits) / float64(len(exact))
}

func build(metric Metric, vectors [][]float32) *Index {
	x := New(len(vectors[0]), metric, Config{Seed: 1})
	for i, v := range vectors {
		x.Add(uint32(i), v)
	}
	return x
}

// recallSize is the recall tests' set: 10,000 vectors of 96
// dimensions, fewer under the race detector, which slows them tenfold.
func recallSize() int {
	if race.Enabled {
		return 1000
	}
	return 10000
}

var metrics = []struct {
	name   string
	metric Metric
}{{"cosine", Cosine}, {"dotproduct", DotProduct}, {"euclidean", Euclidean}}

func TestRecall(t *testing.T) {
	ds := fewGaussian.generate(7, recallSize(), 200, 96)
	for _, m := range metrics {
		t.Run(m.name, func(t *testing.T) {
			x := build(m.metric, ds.vectors)
			var sum float64
			for _, q := range ds.queries {
				got := x.Search(q, 10, 100)
				if len(got) != 10 {
					t.Fatalf("%d results, want 10", len(got))
				}
				if !slices.IsSortedFunc(got, func(a, b Neighbor) int { return cmp.Compare(a.Distance, b.Distance) }) {
					t.Fatalf("results not nearest first: %v", got)
				}
				sum += recall(exactTop(m.metric, ds.vectors, q, 10, nil), got)
			}
			r := sum / float64(len(ds.queries))
			t.Logf("recall@10 = %.4f", r)
			if r < 0.95 {
				t.Errorf("recall@10 = %.4f, want >= 0.95", r)
			}
		})
	}
}

func TestDistances(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, dims := range []int{1, 7, 8, 9, 96, 101} {
		a, b := make([]float32, dims), make([]float32, dims)
		for i := range a {
			a[i], b[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
		}
		for _, m := range metrics {
			x := New(dims, m.metric, Config{})
			x.Add(0, a)
			got := x.Search(b, 1, 1)
			want := exactDistance(m.metric, a, b)
			if len(got) != 1 || math.Abs(float64(got[0].Distance)-want) > 1e-4*max(1, math.Abs(want)) {
				t.Errorf("%s, %d dims: got %v, want distance %g", m.name, dims, got, want)
			}
		}
	}
}

func TestDelete(t *testing.T) {
	ds := fewGaussian.generate(11, recallSize(), 200, 96)
	for _, m := range metrics {
		t.Run(m.name, func(t *testing.T) {
			x := build(m.metric, ds.vectors)
			gone := func(id uint32) bool { return id%3 == 0 }
			for i := range ds.vectors {
				if gone(uint32(i)) {
					x.Delete(uint32(i))
				}
			}
			x.Delete(0)                            // again
			x.Delete(uint32(len(ds.vectors)))      // never added, in a chunk
			x.Delete(uint32(len(ds.vectors)) << 4) // beyond storage
			if want := (len(ds.vectors) + 2) / 3; x.Deleted() != want || x.Len() != len(ds.vectors) {
				t.Fatalf("Deleted() = %d, Len() = %d; want %d, %d", x.Deleted(), x.Len(), want, len(ds.vectors))
			}
			var sum float64
			for _, q := range ds.queries {
				got := x.Search(q, 10, 100)
				if len(got) != 10 {
					t.Fatalf("%d results, want 10", len(got))
				}
				for _, n := range got {
					if gone(n.ID) {
						t.Fatalf("deleted id %d returned", n.ID)
					}
				}
				sum += recall(exactTop(m.metric, ds.vectors, q, 10, func(id uint32) bool { return !gone(id) }), got)
			}
			r := sum / float64(len(ds.queries))
			t.Logf("recall@10 among live ids = %.4f", r)
			if r < 0.9 {
				t.Errorf("recall@10 among live ids = %.4f, want >= 0.9", r)
			}
		})
	}
}

// TestDeleteMost deletes all but a few ids: the search has to route
// through deleted nodes well past its ef to find k live ones.
func TestDeleteMost(t *testing.T) {
	ds := embeddings.generate(13, 2000, 10, 32)
	x := build(Euclidean, ds.vectors)
	for i := range ds.vectors {
		if i%100 != 0 {
			x.Delete(uint32(i))
		}
	}
	for _, q := range ds.queries {
		got := x.Search(q, 10, 10)
		if len(got) != 10 {
			t.Fatalf("%d results, want 10", len(got))
		}
		for _, n := range got {
			if n.ID%100 != 0 {
				t.Fatalf("deleted id %d returned", n.ID)
			}
		}
	}
	for i := range ds.vectors {
		x.Delete(uint32(i))
	}
	if got := x.Search(ds.queries[0], 10, 10); len(got) != 0 {
		t.Errorf("all deleted: got %v", got)
	}
}

func TestConcurrent(t *testing.T) {
	const (
		n        = 2000
		dims     = 32
		adders   = 3
		searches = 2
	)
	ds := embeddings.generate(17, n, 50, dims)
	x := New(dims, Euclidean, Config{Seed: 2})
	var next atomic.Int64
	var adding, searching sync.WaitGroup
	for range adders {
		adding.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= n {
					return
				}
				x.Add(uint32(i), ds.vectors[i])
				if i%10 == 0 {
					// Its own add has returned: deleting an id that
					// another goroutine is still adding would be a
					// no-op, as Delete documents.
					x.Delete(uint32(i))
				}
			}
		})
	}
	var done atomic.Bool
	for g := range searches {
		searching.Go(func() {
			for i := g; !done.Load(); i++ {
				got := x.Search(ds.queries[i%len(ds.queries)], 10, 40)
				if len(got) > 10 {
					t.Errorf("%d results", len(got))
					return
				}
			}
		})
	}
	adding.Wait()
	done.Store(true)
	searching.Wait()
	if x.Len() != n {
		t.Fatalf("Len() = %d, want %d", x.Len(), n)
	}
	if want := n / 10; x.Deleted() != want {
		t.Fatalf("Deleted() = %d, want %d", x.Deleted(), want)
	}
	missed := 0
	for i, v := range ds.vectors {
		got := x.Search(v, 1, 50)
		if i%10 == 0 {
			if len(got) > 0 && got[0].ID == uint32(i) {
				t.Fatalf("deleted id %d returned", i)
			}
			continue
		}
		if len(got) == 0 || got[0].ID != uint32(i) || got[0].Distance != 0 {
			missed++
			t.Errorf("id %d: searching with its own vector found %v", i, got)
			if missed > 10 {
				t.FailNow()
			}
		}
	}
}

func TestEdgeCases(t *testing.T) {
	t.Run("empty", func(t *testing.T) {
		x := New(4, Cosine, Config{})
		if got := x.Search([]float32{1, 2, 3, 4}, 10, 10); got != nil {
			t.Errorf("got %v, want nil", got)
		}
		if x.Len() != 0 || x.Deleted() != 0 {
			t.Errorf("Len() = %d, Deleted() = %d", x.Len(), x.Deleted())
		}
		x.Delete(3)
		if x.Deleted() != 0 {
			t.Errorf("Deleted() = %d after deleting an unknown id", x.Deleted())
		}
	})
	t.Run("one vector", func(t *testing.T) {
		x := New(3, Euclidean, Config{})
		x.Add(0, []float32{1, 2, 3})
		got := x.Search([]float32{1, 2, 4}, 10, 1)
		if len(got) != 1 || got[0] != (Neighbor{0, 1}) {
			t.Errorf("got %v", got)
		}
		x.Delete(0)
		if got := x.Search([]float32{1, 2, 4}, 10, 1); len(got) != 0 {
			t.Errorf("after delete: got %v", got)
		}
	})
	t.Run("k beyond the index", func(t *testing.T) {
		ds := embeddings.generate(19, 30, 1, 8)
		x := build(Euclidean, ds.vectors)
		got := x.Search(ds.queries[0], 100, 10)
		if len(got) != 30 {
			t.Fatalf("%d results, want 30", len(got))
		}
		want := exactTop(Euclidean, ds.vectors, ds.queries[0], 30, nil)
		for i, n := range got {
			if n.ID != want[i] {
				t.Fatalf("result %d is %d, want %d", i, n.ID, want[i])
			}
		}
	})
	t.Run("duplicates", func(t *testing.T) {
		x := New(2, Euclidean, Config{M: 4})
		for i := range 100 {
			x.Add(uint32(i), []float32{1, 1})
		}
		x.Add(100, []float32{5, 5})
		got := x.Search([]float32{1, 1}, 10, 20)
		if len(got) != 10 {
			t.Fatalf("%d results, want 10", len(got))
		}
		for _, n := range got {
			if n.ID == 100 || n.Distance != 0 {
				t.Fatalf("got %v", got)
			}
		}
		if got := x.Search([]float32{5, 5}, 1, 20); len(got) != 1 || got[0].ID != 100 {
			t.Errorf("the one apart: got %v", got)
		}
	})
	t.Run("zero vector with cosine", func(t *testing.T) {
		x := New(3, Cosine, Config{})
		x.Add(0, []float32{0, 0, 0})
		x.Add(1, []float32{1, 0, 0})
		x.Add(2, []float32{-1, 0, 0})
		got := x.Search([]float32{2, 0, 0}, 3, 10)
		want := []Neighbor{{1, 0}, {0, 1}, {2, 2}}
		if !slices.Equal(got, want) {
			t.Errorf("got %v, want %v", got, want)
		}
		for _, n := range x.Search([]float32{0, 0, 0}, 3, 10) {
			if n.Distance != 1 {
				t.Errorf("zero query: got %v, want distance 1 from everything", n)
			}
		}
	})
	t.Run("wrong query length", func(t *testing.T) {
		x := New(3, Euclidean, Config{})
		x.Add(0, []float32{1, 2, 3})
		for _, q := range [][]float32{nil, {1, 2}, {1, 2, 3, 4}} {
			if got := x.Search(q, 1, 10); got != nil {
				t.Errorf("query %v: got %v, want nil", q, got)
			}
		}
		if got := x.Search([]float32{1, 2, 3}, 0, 10); got != nil {
			t.Errorf("k = 0: got %v, want nil", got)
		}
	})
	t.Run("same id twice", func(t *testing.T) {
		x := New(1, Euclidean, Config{})
		x.Add(0, []float32{1})
		x.Add(0, []float32{2})
		if got := x.Search([]float32{1}, 2, 10); x.Len() != 1 || len(got) != 1 || got[0] != (Neighbor{0, 0}) {
			t.Errorf("Len() = %d, got %v", x.Len(), got)
		}
	})
	t.Run("sparse ids", func(t *testing.T) {
		x := New(1, Euclidean, Config{})
		x.Add(5000, []float32{1})
		x.Add(3, []float32{2})
		if got := x.Search([]float32{0}, 5, 10); len(got) != 2 || got[0].ID != 5000 || got[1].ID != 3 {
			t.Errorf("got %v", got)
		}
	})
}

// TestReproducible builds the same set twice, sequentially: the graphs,
// and so the searches, are the same.
func TestReproducible(t *testing.T) {
	ds := embeddings.generate(23, 1000, 20, 16)
	a, b := build(Cosine, ds.vectors), build(Cosine, ds.vectors)
	for _, q := range ds.queries {
		if ra, rb := a.Search(q, 10, 20), b.Search(q, 10, 20); !slices.Equal(ra, rb) {
			t.Fatalf("two builds: %v and %v", ra, rb)
		}
	}
}

// TestSearchAllocs checks that a search allocates its result and
// nothing else: its working memory is pooled.
func TestSearchAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("the race detector has sync.Pool drop what it is given")
	}
	ds := embeddings.generate(31, 2000, 2, 32)
	x := build(Cosine, ds.vectors)
	x.Search(ds.queries[0], 10, 100)
	if allocs := testing.AllocsPerRun(100, func() { x.Search(ds.queries[1], 10, 100) }); allocs > 1 {
		t.Errorf("a search allocates %v times, want 1", allocs)
	}
}
