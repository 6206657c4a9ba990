package index

import (
	"bytes"
	"encoding/json"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/ebbdb/ebb/internal/engine/dberr"
	"github.com/ebbdb/ebb/internal/engine/document"
	"github.com/ebbdb/ebb/internal/keys"
	"github.com/ebbdb/ebb/internal/query"
)

// Policy is a container's indexing policy, compiled: which value
// paths get index entries. It is immutable once built.
type Policy struct {
	// none: nothing is indexed (indexingMode none).
	none bool
	// all: every path is indexed (no rule excludes anything but system
	// properties, which are never indexed); the walker skips matching.
	all        bool
	rules      []rule
	composites []compositeIndex
	// computed, when the container has computed properties, maps each
	// name to the rules that decide the paths under it (computed.go);
	// cpEval evaluates those some rule or composite index includes (nil:
	// none is indexed). spatial are the paths of spatialIndexes, which
	// are not built but may not name a computed property.
	computed map[string][]rule
	cpEval   *query.Computed
	spatial  [][]pathSeg
	// mode, included and excluded are the canonical mode and sorted
	// paths, from which seal writes canon.
	mode               string
	included, excluded []string
	// canon is the canonical JSON of what decides the entries (mode,
	// paths, composite indexes and computed properties), and fp its
	// hash: two policies with the same fp index the same entries.
	canon []byte
	fp    uint64
}

// None reports that p indexes nothing (indexingMode none).
func (p *Policy) None() bool { return p.none }

// compositeIndex is one composite index: every document gets one entry
// holding its values at all the paths, in order (undefined where a
// document lacks one), each descending component stored complemented so
// that the entries' key order is the index's sort order.
type compositeIndex struct {
	paths [][]pathSeg
	desc  []bool
	// name is the <path> element of its entries: "(/a,/b desc)", which
	// no value path (always starting with "/") can be; prefix is its
	// encoding, how its entries start.
	name, prefix []byte
	// itemXor is what the <pk> <id> of its entries is XORed with: 0xFF
	// when the first component is descending, so that the documents of a
	// tie come in descending key order when the entries are walked
	// forwards, as they would from any other plan (query.OrderedSource).
	itemXor byte
}

// itemXor returns what the <pk> <id> after entry e (<path> <value>...)
// is XORed with in its key.
func (p *Policy) itemXor(e []byte) byte {
	if len(e) == 0 || e[0] != '(' {
		return 0
	}
	for i := range p.composites {
		if bytes.HasPrefix(e, p.composites[i].prefix) {
			return p.composites[i].itemXor
		}
	}
	return 0
}

// appendEntryKey appends the index key of entry e of the item at <item>
// (<pk> <id>) under policy p, after the index prefix.
func (p *Policy) appendEntryKey(dst, e, item []byte) []byte {
	dst = append(dst, e...)
	n := len(dst)
	dst = append(dst, item...)
	if x := p.itemXor(e); x != 0 {
		for i := n; i < len(dst); i++ {
			dst[i] ^= x
		}
	}
	return dst
}

// rule is one included or excluded path.
type rule struct {
	segs []pathSeg
	// wild: "/*", the path and everything below it; otherwise "/?", the
	// value at exactly the path.
	wild    bool
	include bool
}

// pathSeg is one step of a value path: a property name, or (elem) any
// element of an array, written "[]".
type pathSeg struct {
	name string
	elem bool
}

// specificity orders rules that match the same path: a longer path wins,
// and at equal length "/?" beats "/*".
func (r rule) specificity() int {
	s := 2 * len(r.segs)
	if !r.wild {
		s++
	}
	return s
}

func (r rule) matches(path []pathSeg) bool {
	if r.wild {
		return len(path) >= len(r.segs) && slices.Equal(path[:len(r.segs)], r.segs)
	}
	return slices.Equal(path, r.segs)
}

// indexes reports whether the value at path gets an index entry: the most
// specific matching rule decides, an exclusion winning a tie. A path
// under a computed property is decided by the rules that name it alone
// (computed.go).
func (p *Policy) indexes(path []pathSeg) bool {
	switch {
	case p.none || len(path) == 0:
		return false
	case p.computed != nil && !path[0].elem:
		if rs, ok := p.computed[path[0].name]; ok {
			return decide(rs, path)
		}
	}
	switch {
	case isUnindexedSystemProperty(path):
		return false
	case p.all:
		return true
	}
	return decide(p.rules, path)
}

// decide applies rules to path: the most specific matching rule
// decides, an exclusion winning a tie; no rule, no entry.
func decide(rules []rule, path []pathSeg) bool {
	best, found := rule{}, false
	for _, r := range rules {
		if !r.matches(path) {
			continue
		}
		if !found || r.specificity() > best.specificity() || (r.specificity() == best.specificity() && !r.include) {
			best, found = r, true
		}
	}
	return found && best.include
}

// prunes reports whether nothing at or below prefix can be indexed, so
// the walker need not descend.
func (p *Policy) prunes(prefix []pathSeg) bool {
	if p.none {
		return true
	}
	if p.computed != nil && len(prefix) > 0 && !prefix[0].elem {
		if rs, ok := p.computed[prefix[0].name]; ok {
			return prunesBy(rs, prefix, true)
		}
	}
	if p.all {
		return false
	}
	return prunesBy(p.rules, prefix, false)
}

// prunesBy is prunes under rules; uncoveredPruned says what a subtree no
// wildcard rule covers is: pruned for a computed property (nothing names
// it), kept elsewhere (the root is always included or excluded).
func prunesBy(rules []rule, prefix []pathSeg, uncoveredPruned bool) bool {
	// The rule deciding the subtree as a whole: the most specific "/*"
	// covering prefix.
	best, found := rule{}, false
	for _, r := range rules {
		if r.wild && r.matches(prefix) && (!found || r.specificity() > best.specificity() || (r.specificity() == best.specificity() && !r.include)) {
			best, found = r, true
		}
	}
	if (found && best.include) || (!found && !uncoveredPruned) {
		return false
	}
	// An inclusion more specific than that exclusion may still reach
	// into the subtree.
	for _, r := range rules {
		if !r.include || (found && r.specificity() <= best.specificity()) {
			continue
		}
		n := min(len(r.segs), len(prefix))
		if slices.Equal(r.segs[:n], prefix[:n]) {
			return false
		}
	}
	return true
}

// unindexedSystemProperties are the top-level properties the server owns
// and never indexes (_ts is indexed: ORDER BY c._ts is common).
func isUnindexedSystemProperty(path []pathSeg) bool {
	if path[0].elem {
		return false
	}
	switch path[0].name {
	case "_rid", "_self", "_etag", "_attachments", "_lsn":
		return true
	}
	return false
}

// defaultPolicy is what a container without an indexingPolicy gets:
// every path but _etag.
var defaultPolicy = mustPolicy(`{"indexingMode":"consistent","automatic":true,"includedPaths":[{"path":"/*"}],"excludedPaths":[{"path":"/\"_etag\"/?"}]}`)

func mustPolicy(s string) *Policy {
	p, err := compilePolicy([]byte(s))
	if err != nil {
		panic(err)
	}
	return p
}

// ParsePolicy validates and compiles a container's
// indexingPolicy; raw is nil or "null" when the body has none.
//
// Decisions: "lazy" is accepted and treated as consistent (Ebb always
// indexes in the write's transaction). "automatic": false is accepted and
// kept but indexes anyway: Ebb has no per-request indexing directive, and
// the index only decides how fast a query runs, never what it returns.
// When neither path list names the root "/*", the root is included (the
// service insists on it; an SDK leaving it out still means "the rest").
// compositeIndexes are built (composite entries, see the package doc);
// spatialIndexes and the other index kinds are kept in the container
// body but not built.
func ParsePolicy(raw []byte) (*Policy, error) {
	if raw == nil || string(raw) == "null" {
		return defaultPolicy, nil
	}
	return compilePolicy(raw)
}

func compilePolicy(raw []byte) (*Policy, error) {
	type pathSpec struct {
		Path *string `json:"path"`
	}
	var in struct {
		IndexingMode     string            `json:"indexingMode"`
		IncludedPaths    []pathSpec        `json:"includedPaths"`
		ExcludedPaths    []pathSpec        `json:"excludedPaths"`
		CompositeIndexes [][]compositePath `json:"compositeIndexes"`
		SpatialIndexes   json.RawMessage   `json:"spatialIndexes"`
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, dberr.BadRequest("The indexingPolicy is invalid: %v.", err)
	}
	p := &Policy{}
	mode := strings.ToLower(in.IndexingMode)
	switch mode {
	case "", "consistent", "lazy":
		mode = "consistent"
	case "none":
		p.none = true
	default:
		return nil, dberr.BadRequest("The indexing mode '%s' is invalid; use 'consistent' or 'none'.", in.IndexingMode)
	}
	rootNamed := false
	var inc, exc []string
	for _, list := range []struct {
		specs   []pathSpec
		include bool
		canon   *[]string
	}{{in.IncludedPaths, true, &inc}, {in.ExcludedPaths, false, &exc}} {
		for _, ps := range list.specs {
			if ps.Path == nil {
				return nil, dberr.BadRequest("An indexing path is missing its \"path\" property.")
			}
			r, err := parsePath(*ps.Path)
			if err != nil {
				return nil, err
			}
			r.include = list.include
			if r.wild && len(r.segs) == 0 {
				rootNamed = true
			}
			p.rules = append(p.rules, r)
			*list.canon = append(*list.canon, formatRule(r))
		}
	}
	for _, spec := range in.CompositeIndexes {
		ci, err := compileComposite(spec)
		if err != nil {
			return nil, err
		}
		p.composites = append(p.composites, ci)
	}
	slices.SortFunc(p.composites, func(a, b compositeIndex) int { return bytes.Compare(a.name, b.name) })
	p.composites = slices.CompactFunc(p.composites, func(a, b compositeIndex) bool { return bytes.Equal(a.name, b.name) })
	if !rootNamed {
		p.rules = append(p.rules, rule{wild: true, include: true})
		inc = append(inc, "/*")
	}
	// Everything is indexed when the root is included and no exclusion
	// reaches beyond the system properties (never indexed anyway).
	for _, r := range p.rules {
		if r.include && r.wild && len(r.segs) == 0 {
			p.all = !p.none
		}
	}
	for _, r := range p.rules {
		if !r.include && (len(r.segs) == 0 || !isUnindexedSystemProperty(r.segs)) {
			p.all = false
		}
	}
	slices.Sort(inc)
	slices.Sort(exc)
	inc, exc = slices.Compact(inc), slices.Compact(exc)
	if p.none {
		inc, exc = nil, nil
		p.rules, p.composites = nil, nil
	}
	// Spatial indexes are kept in the body, not built; their paths only
	// matter to computed properties (WithComputed), so a path that does
	// not parse names none.
	var spatial []struct{ Path string }
	_ = json.Unmarshal(in.SpatialIndexes, &spatial)
	for _, sp := range spatial {
		if r, err := parsePath(sp.Path); err == nil {
			p.spatial = append(p.spatial, r.segs)
		}
	}
	p.mode, p.included, p.excluded = mode, inc, exc
	p.seal()
	return p, nil
}

// seal writes p's canonical form and fingerprint from what decides its
// entries. A policy without computed properties has the canonical form
// it had before Ebb had them, so its fingerprint did not change.
func (p *Policy) seal() {
	canon := struct {
		Mode       string            `json:"indexingMode"`
		Included   []pathText        `json:"includedPaths"`
		Excluded   []pathText        `json:"excludedPaths"`
		Composites [][]compositePath `json:"compositeIndexes,omitempty"`
		Computed   []computedText    `json:"computedProperties,omitempty"`
	}{Mode: p.mode, Included: []pathText{}, Excluded: []pathText{}, Computed: p.computedCanon()}
	for _, ci := range p.composites {
		canon.Composites = append(canon.Composites, ci.canonical())
	}
	for _, s := range p.included {
		canon.Included = append(canon.Included, pathText{s})
	}
	for _, s := range p.excluded {
		canon.Excluded = append(canon.Excluded, pathText{s})
	}
	p.canon, _ = json.Marshal(canon)
	h := fnv.New64a()
	h.Write(p.canon)
	p.fp = h.Sum64()
}

// etagExclusion is the system exclusion the service adds to every
// consistent policy.
var etagExclusion = []byte(`{"path":"/\"_etag\"/?"}`)

// NormalizePolicy returns an indexingPolicy as the service stores and
// echoes it: indexingMode lower-cased, automatic filled in (true unless
// the mode is none), includedPaths defaulting to the root "/*" (and the
// legacy root "/" written as "/*"), and the system exclusion of _etag
// added to a consistent policy. Members it does not know are kept, in
// order, after these. REQUIRES: raw passed ParsePolicy.
func NormalizePolicy(raw []byte) []byte {
	ms, ok := document.ObjectMembers(raw)
	if !ok {
		return raw
	}
	mode := "consistent"
	if v := document.Lookup(ms, "indexingMode"); v != nil && v[0] == '"' {
		if m := strings.ToLower(document.Unquote(v)); m != "" {
			mode = m
		}
	}
	none := mode == "none"
	automatic := document.Lookup(ms, "automatic")
	if automatic == nil || string(automatic) == "null" {
		automatic = []byte(strconv.FormatBool(!none))
	}
	included := normalizePaths(document.Lookup(ms, "includedPaths"))
	if !none && included == "[]" {
		included = `[{"path":"/*"}]`
	}
	excluded := normalizePaths(document.Lookup(ms, "excludedPaths"))
	if !none && !bytes.Contains([]byte(excluded), []byte(`"/\"_etag\"/?"`)) {
		if excluded == "[]" {
			excluded = "[" + string(etagExclusion) + "]"
		} else {
			excluded = excluded[:len(excluded)-1] + "," + string(etagExclusion) + "]"
		}
	}
	pairs := []document.Pair{
		{Key: "indexingMode", Val: document.AppendQuoted(nil, mode)},
		{Key: "automatic", Val: automatic},
		{Key: "includedPaths", Val: []byte(included)},
		{Key: "excludedPaths", Val: []byte(excluded)},
	}
	for _, m := range ms {
		switch m.Key {
		case "indexingMode", "automatic", "includedPaths", "excludedPaths":
		default:
			pairs = append(pairs, document.Pair{Key: m.Key, Val: m.Val})
		}
	}
	return document.Rebuild(pairs)
}

// normalizePaths returns a path list as JSON ("[]" for none), with the
// legacy root "/" written "/*".
func normalizePaths(raw []byte) string {
	if raw == nil || string(raw) == "null" {
		return "[]"
	}
	var specs []map[string]json.RawMessage
	if json.Unmarshal(raw, &specs) != nil {
		return string(raw)
	}
	changed := false
	for _, sp := range specs {
		if string(sp["path"]) == `"`+legacyRoot+`"` {
			sp["path"], changed = json.RawMessage(`"/*"`), true
		}
	}
	if !changed {
		return string(raw)
	}
	out, _ := json.Marshal(specs)
	return string(out)
}

// pathText is an included or excluded path in the canonical policy.
type pathText struct {
	Path string `json:"path"`
}

// compositePath is one member of a composite index.
type compositePath struct {
	Path  string `json:"path"`
	Order string `json:"order"`
}

// compileComposite checks one composite index of a policy and compiles it.
func compileComposite(spec []compositePath) (compositeIndex, error) {
	if len(spec) < 2 {
		return compositeIndex{}, dberr.BadRequest("A composite index must have at least two paths; this one has %d. For one path the range index of includedPaths serves ORDER BY.", len(spec))
	}
	ci := compositeIndex{name: []byte{'('}}
	for i, cp := range spec {
		segs, desc, err := cp.compile()
		if err != nil {
			return compositeIndex{}, err
		}
		ci.paths = append(ci.paths, segs)
		ci.desc = append(ci.desc, desc)
		if i > 0 {
			ci.name = append(ci.name, ',')
		}
		ci.name = appendPath(ci.name, segs)
		if desc {
			ci.name = append(ci.name, " desc"...)
		}
	}
	ci.name = append(ci.name, ')')
	ci.prefix = keys.AppendBytes(nil, ci.name)
	if ci.desc[0] {
		ci.itemXor = 0xFF
	}
	return ci, nil
}

// compile parses a composite path: a property path without wildcards
// ("/a", "/a/b", "/\"x y\"") and its order.
func (c compositePath) compile() (segs []pathSeg, desc bool, err error) {
	switch strings.ToLower(c.Order) {
	case "", "ascending":
	case "descending":
		desc = true
	default:
		return nil, false, dberr.BadRequest("The composite index order '%s' is invalid; use 'ascending' or 'descending'.", c.Order)
	}
	bad := dberr.BadRequest("The composite index path '%s' is invalid; a composite path names one property, without wildcards or array steps, like /name or /address/city.", c.Path)
	if !strings.HasPrefix(c.Path, "/") || strings.HasSuffix(c.Path, "/?") || strings.HasSuffix(c.Path, "/*") {
		return nil, false, bad
	}
	r, err := parsePath(c.Path + "/?")
	if err != nil || slices.ContainsFunc(r.segs, func(s pathSeg) bool { return s.elem }) {
		return nil, false, bad
	}
	return r.segs, desc, nil
}

// canonical renders ci as a policy's compositeIndexes entry.
func (ci compositeIndex) canonical() []compositePath {
	out := make([]compositePath, len(ci.paths))
	for i, segs := range ci.paths {
		out[i] = compositePath{Path: string(appendPath(nil, segs)), Order: "ascending"}
		if ci.desc[i] {
			out[i].Order = "descending"
		}
	}
	return out
}

// parsePath parses an included or excluded path: "/*", "/a/?",
// "/a/*", "/\"quoted key\"/?", "/a/[]/?".
// legacyRoot is the root path as older clients write it ("/" for "/*"),
// which the service still accepts.
const legacyRoot = "/"

func parsePath(s string) (rule, error) {
	fail := func(pos int) (rule, error) {
		return rule{}, dberr.BadRequest("The indexing path '%s' could not be accepted, failed near position %d. Please ensure that the path is a valid path. Common errors include invalid characters or absence of quotes around labels.", s, pos)
	}
	if !strings.HasPrefix(s, "/") {
		return fail(0)
	}
	if s == legacyRoot {
		return rule{wild: true}, nil
	}
	var r rule
	i := 1
	for {
		switch {
		case i >= len(s):
			return fail(i)
		case s[i:] == "?":
			if len(r.segs) == 0 {
				return fail(i)
			}
			return r, nil
		case s[i:] == "*":
			r.wild = true
			return r, nil
		case s[i] == '"':
			end := i + 1
			for end < len(s) && s[end] != '"' {
				if s[end] == '\\' {
					end++
				}
				end++
			}
			if end >= len(s) {
				return fail(i)
			}
			var name string
			if err := json.Unmarshal([]byte(s[i:end+1]), &name); err != nil {
				return fail(i)
			}
			r.segs = append(r.segs, pathSeg{name: name})
			i = end + 1
		default:
			end := strings.IndexByte(s[i:], '/')
			if end < 0 {
				return fail(len(s))
			}
			seg := s[i : i+end]
			switch {
			case seg == "[]":
				r.segs = append(r.segs, pathSeg{elem: true})
			case seg == "" || seg == "*" || seg == "?" || strings.ContainsAny(seg, "\"[]"):
				return fail(i)
			default:
				r.segs = append(r.segs, pathSeg{name: seg})
			}
			i += end
		}
		if i >= len(s) || s[i] != '/' {
			return fail(i)
		}
		i++
	}
}

// appendPath appends the canonical text of a value path, the <path>
// element of an index key: "/a/b", "/tags/[]", "/\"a/b\"". A name is
// written as is unless it could be mistaken for syntax, then quoted as a
// JSON string, so the text is unambiguous.
func appendPath(dst []byte, path []pathSeg) []byte {
	for _, s := range path {
		dst = append(dst, '/')
		if s.elem {
			dst = append(dst, "[]"...)
		} else if plainName(s.name) {
			dst = append(dst, s.name...)
		} else {
			dst = document.AppendQuoted(dst, s.name)
		}
	}
	return dst
}

func plainName(s string) bool {
	return s != "" && s != "*" && s != "?" && !strings.ContainsAny(s, "/\"[]\\")
}

func formatRule(r rule) string {
	s := string(appendPath(nil, r.segs))
	if r.wild {
		return s + "/*"
	}
	return s + "/?"
}

// policyCache holds compiled policies by fingerprint, for item writes
// that find the stored policy newer than their catalog snapshot.
var policyCache sync.Map // uint64 → *Policy

// compiledPolicy returns the compiled form of a canonical policy.
func compiledPolicy(canon []byte, fp uint64) (*Policy, error) {
	if p, ok := policyCache.Load(fp); ok {
		return p.(*Policy), nil
	}
	p, err := compileCanonical(canon)
	if err != nil {
		return nil, err
	}
	policyCache.Store(fp, p)
	return p, nil
}
