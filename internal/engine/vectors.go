package engine

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/ebbdb/ebb/internal/engine/document"
	"github.com/ebbdb/ebb/internal/engine/keyspace"
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
			return &vectorSource{docSource: src, path: byte(i), order: vo, fn: fn}
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

// ScanOrdered implements query.OrderedSource: a run per group of items
// within rankTolerance of each other, in rank order, then a last run of
// the items without a rank.
func (s *vectorSource) ScanOrdered(after []byte, yield func(run []byte, sorted bool, key, doc []byte) bool) error {
	return s.store.View(s.ctx, func(r storage.Reader) error {
		ranked, err := s.rank(r)
		if err != nil {
			return err
		}
		items := s.items(r)
		// Runs: consecutive items within rankTolerance share one.
		runs := make([]int, len(ranked))
		for i := 1; i < len(ranked); i++ {
			runs[i] = runs[i-1]
			if ranked[i].rank-ranked[i-1].rank > rankTolerance*(1+math.Abs(ranked[i-1].rank)) {
				runs[i]++
			}
		}
		start, lastRun := 0, len(ranked) // the run of after; the unranked run
		if after != nil {
			i := slices.IndexFunc(ranked, func(v rankedVector) bool { return bytes.Equal(v.key, after) })
			if i >= 0 {
				start = slices.Index(runs, runs[i])
			} else {
				start = len(ranked) // after is in the last run
			}
		}
		for i := start; i < len(ranked); i++ {
			run := binary.BigEndian.AppendUint64(nil, uint64(runs[i]))
			stop := false
			err := items.lend(ranked[i].key, func(it storedItem, visible bool) error {
				if visible {
					stop = !yield(run, false, ranked[i].key, it.doc)
				}
				return nil
			})
			if err != nil && !errors.Is(err, storage.ErrNotFound) {
				return err
			}
			if stop {
				return nil
			}
		}
		seen := make(map[string]bool, len(ranked))
		for _, v := range ranked {
			seen[string(v.key)] = true
		}
		run := binary.BigEndian.AppendUint64(nil, uint64(lastRun))
		return items.scan(s.prefix, keys.PrefixEnd(s.prefix), false, func(key []byte, it storedItem) bool {
			return seen[string(key)] || yield(run, false, key, it.doc)
		})
	})
}

// rank reads the vectors of the source's scope and ranks them.
func (s *vectorSource) rank(r storage.Reader) ([]rankedVector, error) {
	prefix := keyspace.VecPrefix(s.c.rid, s.path, s.prefix)
	it := r.Scan(prefix, keys.PrefixEnd(prefix), false)
	defer it.Close()
	var out []rankedVector
	ranker := query.NewVectorRanker(s.fn, s.order.Query)
	vec := make([]float32, len(s.order.Query))
	for it.Next() {
		b := it.Value()
		if len(b) != 4*len(vec) {
			continue // another dimension: its distance is undefined
		}
		for i := range vec {
			vec[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
		rank, ok := ranker.Rank(vec)
		if !ok {
			continue
		}
		out = append(out, rankedVector{key: keyspace.DocKeyOfVec(it.Key()), rank: rank})
	}
	if err := it.Err(); err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b rankedVector) int {
		if c := cmp.Compare(a.rank, b.rank); c != 0 {
			return c
		}
		return bytes.Compare(a.key, b.key)
	})
	return out, nil
}
