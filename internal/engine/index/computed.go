package index

import (
	"encoding/json"
	"slices"

	"github.com/ebbdb/ebb/internal/engine/dberr"
	"github.com/ebbdb/ebb/internal/query"
)

// Computed properties in the index (see "Computed properties" in the
// package doc). The service's rules, from "Computed properties in Azure
// Cosmos DB for NoSQL" (learn.microsoft.com/azure/cosmos-db/nosql/query/
// computed-properties, "Index computed properties" and "Name
// constraints"):
//
//   - "Computed properties aren't indexed by default and aren't covered by
//     wildcard paths in the indexing policy": only a rule whose path starts
//     with the property's name (/cp/?, /cp/*, /cp/a/?), or a composite
//     index with such a path, indexes it; "/*" does not.
//   - "When computed properties are indexed, actual values are evaluated
//     during item write operations": the walker evaluates them and indexes
//     their values under /<name>, as a stored member's.
//   - "Regardless of whether the computed property is indexed, values from
//     persisted properties that share a name with a computed property
//     won't be included in the index": the walker skips such members.
//   - "Computed properties can't have a spatial index defined on them".

// computedText is a computed property in a policy's canonical form: its
// name, and its query when the policy indexes it (the query of one it
// does not index decides no entry).
type computedText struct {
	Name  string `json:"name"`
	Query string `json:"query,omitempty"`
}

// WithComputed returns p for a container whose computed properties are
// cs: the rules that name a computed property decide its paths, stored
// members of those names are not indexed, and the definitions of the
// computed properties the policy indexes are part of its fingerprint, so
// a change to them rebuilds the index. It refuses a spatial index on a
// computed property.
func (p *Policy) WithComputed(cs *query.Computed) (*Policy, error) {
	if cs.Len() == 0 || p.none {
		return p, nil
	}
	for _, segs := range p.spatial {
		if len(segs) > 0 && !segs[0].elem && cs.Has(segs[0].name) {
			return nil, dberr.BadRequest("The spatial index on %s names the computed property '%s'; computed properties cannot have a spatial index.", formatRule(rule{segs: segs, wild: true}), segs[0].name)
		}
	}
	return p.attach(cs.Names(), cs)
}

// attach returns p with computed properties names, of which cs defines
// at least those p indexes.
func (p *Policy) attach(names []string, cs *query.Computed) (*Policy, error) {
	n := *p
	n.computed = make(map[string][]rule, len(names))
	for _, name := range names {
		n.computed[name] = nil
	}
	for _, r := range p.rules {
		if len(r.segs) > 0 && !r.segs[0].elem {
			if rs, ok := n.computed[r.segs[0].name]; ok {
				n.computed[r.segs[0].name] = append(rs, r)
			}
		}
	}
	var indexed []string
	for _, name := range names {
		if n.indexesComputed(name) {
			indexed = append(indexed, name)
		}
	}
	slices.Sort(indexed)
	n.cpEval = cs.Subset(indexed)
	if n.cpEval.Len() != len(indexed) {
		return nil, dberr.BadRequest("The indexing policy indexes a computed property that has no definition.")
	}
	n.seal()
	return &n, nil
}

// indexesComputed reports whether some entry can come from computed
// property name: a rule includes a path under it, or a composite index
// has one.
func (p *Policy) indexesComputed(name string) bool {
	for _, r := range p.computed[name] {
		if r.include {
			return true
		}
	}
	for _, ci := range p.composites {
		for _, segs := range ci.paths {
			if segs[0].name == name {
				return true
			}
		}
	}
	return false
}

// isComputed reports whether the top-level member name is a computed
// property.
func (p *Policy) isComputed(name string) bool {
	_, ok := p.computed[name]
	return ok
}

// computedCanon is the computedProperties of p's canonical form, by
// name; nil when it has none.
func (p *Policy) computedCanon() []computedText {
	if len(p.computed) == 0 {
		return nil
	}
	out := make([]computedText, 0, len(p.computed))
	for name := range p.computed {
		q, _ := p.cpEval.Query(name)
		out = append(out, computedText{Name: name, Query: q})
	}
	slices.SortFunc(out, func(a, b computedText) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	return out
}

// compileCanonical compiles a policy's canonical form (Policy.canon), as
// an index state stores it: the indexing policy and, if any, its
// computed properties. Only the canonical form carries them: a client's
// indexingPolicy that held a computedProperties member would not define
// any.
func compileCanonical(canon []byte) (*Policy, error) {
	p, err := compilePolicy(canon)
	if err != nil {
		return nil, err
	}
	var in struct {
		Computed []computedText `json:"computedProperties"`
	}
	if err := json.Unmarshal(canon, &in); err != nil || len(in.Computed) == 0 {
		return p, err
	}
	names := make([]string, len(in.Computed))
	var defs []query.ComputedDef
	for i, c := range in.Computed {
		names[i] = c.Name
		if c.Query != "" {
			defs = append(defs, query.ComputedDef{Name: c.Name, Query: c.Query})
		}
	}
	cs, err := query.CompileComputed(defs)
	if err != nil {
		return nil, err
	}
	return p.attach(names, cs)
}

// ServesComputed reports whether p's entries are those of a container
// whose computed properties are cs: the same names (stored members of
// those names are not indexed), and the same definition for each that p
// indexes. A query plan bound with other computed properties (a catalog
// snapshot older or newer than the index) must not use the index.
func (p *Policy) ServesComputed(cs *query.Computed) bool {
	if cs.Len() != len(p.computed) {
		return false
	}
	for name := range p.computed {
		if !cs.Has(name) {
			return false
		}
	}
	for _, name := range p.cpEval.Names() {
		a, _ := p.cpEval.Query(name)
		b, _ := cs.Query(name)
		if a != b {
			return false
		}
	}
	return true
}

// NamesProperty reports whether the policy names a path under the
// top-level property name in any of its included or excluded paths,
// composite indexes or spatial indexes: the paths the service means by
// "a computed property name can't match a property path that is already
// indexed".
func (p *Policy) NamesProperty(name string) bool {
	for _, r := range p.rules {
		if len(r.segs) > 0 && !r.segs[0].elem && r.segs[0].name == name {
			return true
		}
	}
	for _, ci := range p.composites {
		for _, segs := range ci.paths {
			if segs[0].name == name {
				return true
			}
		}
	}
	for _, segs := range p.spatial {
		if len(segs) > 0 && !segs[0].elem && segs[0].name == name {
			return true
		}
	}
	return false
}

// cpValue is the value of an indexed computed property of the document
// being walked, as JSON (an undefined one has none).
type cpValue struct {
	name string
	raw  []byte
}

// computeValues evaluates the indexed computed properties of doc into
// w.cps. A document they cannot be evaluated over (it was validated when
// written, so this does not happen) gets none; Check walks documents the
// same way, so entries and check agree.
func (w *entryWalker) computeValues(doc []byte) {
	w.cps, w.cpBuf = w.cps[:0], w.cpBuf[:0]
	vals, err := w.pol.cpEval.Values(doc)
	if err != nil {
		return
	}
	for i, name := range w.pol.cpEval.Names() {
		if !vals[i].IsDefined() {
			continue
		}
		// Should the buffer grow, the earlier values stay in the old
		// array, which nothing writes to any more.
		start := len(w.cpBuf)
		w.cpBuf = vals[i].AppendJSON(w.cpBuf)
		w.cps = append(w.cps, cpValue{name: name, raw: w.cpBuf[start:len(w.cpBuf):len(w.cpBuf)]})
	}
}

// valueAt returns the raw JSON value at path in doc as the index sees
// the document: through the computed property when path starts with
// one. nil if there is none.
func (w *entryWalker) valueAt(doc []byte, path []pathSeg) []byte {
	if w.pol.computed != nil && !path[0].elem && w.pol.isComputed(path[0].name) {
		for _, cv := range w.cps {
			if cv.name == path[0].name {
				return valueAt(cv.raw, path[1:])
			}
		}
		return nil
	}
	return valueAt(doc, path)
}

// defined reports whether doc has a value at path as the index sees the
// document (through a computed property when path starts with one).
func (p *Policy) defined(doc []byte, path []pathSeg) bool {
	if p.computed == nil || len(path) == 0 || path[0].elem || !p.isComputed(path[0].name) {
		return valueAt(doc, path) != nil
	}
	w := getWalker()
	defer putWalker(w)
	w.pol = p
	w.computeValues(doc)
	return w.valueAt(doc, path) != nil
}
