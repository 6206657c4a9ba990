package query

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"sync"
)

// Full-text search. A container's fullTextPolicy names the paths that
// hold text and their language; on those paths FullTextContains,
// FullTextContainsAll and FullTextContainsAny match, and FullTextScore
// scores, the text as the service's English analyzer sees it (Analyze):
// lower-case words without stop words, stemmed. FullTextScore is BM25
// over the container's items visible at the query's instant
// (TextStats, which the engine computes by FullTextStats): an expired
// item never counts, whether or not it was purged. It may appear only
// as ORDER BY RANK, highest score first, or in an RRF there (reciprocal
// rank fusion of several rankings, executor.fused).

// stopWords are the English analyzer's stop words (Lucene's
// EnglishAnalyzer list).
var stopWords = map[string]bool{
	"a": true, "an": true, "and": true, "are": true, "as": true, "at": true, "be": true, "but": true,
	"by": true, "for": true, "if": true, "in": true, "into": true, "is": true, "it": true, "no": true,
	"not": true, "of": true, "on": true, "or": true, "such": true, "that": true, "the": true,
	"their": true, "then": true, "there": true, "these": true, "they": true, "this": true, "to": true,
	"was": true, "will": true, "with": true,
}

// Analyze is text as the English full-text analyzer indexes it: its
// words, lower case, without stop words, stemmed.
func Analyze(text string) []string {
	words := textTokens(text)
	out := words[:0]
	for _, w := range words {
		if !stopWords[w] {
			out = append(out, stem(w))
		}
	}
	return out
}

// stems remembers the stems of the words seen, which a language repeats:
// stemming is most of what analyzing text costs. It forgets everything
// when it holds maxStems.
var stems = struct {
	sync.RWMutex
	m map[string]string
}{m: map[string]string{}}

const maxStems = 1 << 16

func stem(w string) string {
	stems.RLock()
	s, ok := stems.m[w]
	stems.RUnlock()
	if ok {
		return s
	}
	s = porterStem(w)
	stems.Lock()
	if len(stems.m) >= maxStems {
		clear(stems.m)
	}
	stems.m[w] = s
	stems.Unlock()
	return s
}

// TextStats are the full-text statistics of one path over the items a
// ranking sees: how many have text there, how many words they hold in
// all, and how many hold each term.
type TextStats struct {
	Docs, Words int
	DocFreq     map[string]int
}

// BM25's parameters, the usual ones (Lucene's defaults).
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// bm25 scores words (a document's analyzed text) for terms.
func bm25(words []string, terms []string, st *TextStats) float64 {
	tfs := make([]int, len(terms))
	for i, t := range terms {
		for _, w := range words {
			if w == t {
				tfs[i]++
			}
		}
	}
	return BM25(tfs, len(words), terms, st)
}

// BM25 scores a document of docWords words in which terms[i] occurs
// tfs[i] times: the one computation of a score, so that a full-text
// index ranks its items with exactly the scores the query computes.
func BM25(tfs []int, docWords int, terms []string, st *TextStats) float64 {
	if st == nil || st.Docs == 0 || docWords == 0 {
		return 0
	}
	avg := float64(st.Words) / float64(st.Docs)
	var score float64
	for i, t := range terms {
		if tfs[i] == 0 {
			continue
		}
		n := float64(st.DocFreq[t])
		idf := math.Log(1 + (float64(st.Docs)-n+0.5)/(n+0.5))
		f := float64(tfs[i])
		score += idf * f * (bm25K1 + 1) / (f + bm25K1*(1-bm25B+bm25B*float64(docWords)/avg))
	}
	return score
}

// scoreTerms are FullTextScore's terms, analyzed, each once: given as
// strings or as one array of strings.
func scoreTerms(args []Value) []string {
	var raw []Value
	if len(args) == 1 && args[0].kind == Array {
		raw = args[0].Elems()
	} else {
		raw = args
	}
	var out []string
	for _, a := range raw {
		if a.kind != String {
			continue
		}
		for _, t := range Analyze(a.str) {
			if !containsString(out, t) {
				out = append(out, t)
			}
		}
	}
	return out
}

// searchCall is what the checker found in a full-text call: the path of
// the item its first argument reads.
type searchCall struct{ path string }

func registerFullTextFunctions() {
	fullText := func(all bool) func(*evalCtx, *CallExpr, []Value) Value {
		return func(c *evalCtx, x *CallExpr, a []Value) Value {
			if a[0].kind != String {
				return undefinedValue
			}
			tokens := textTokens
			if sc, ok := x.cache.(searchCall); ok && c.env.fullText != nil && c.env.fullText(sc.path) {
				tokens = Analyze
			}
			words := tokens(a[0].str)
			for _, t := range a[1:] {
				if t.kind != String {
					return undefinedValue
				}
				hit := containsPhrase(words, tokens(t.str))
				if hit && !all {
					return trueValue
				}
				if !hit && all {
					return falseValue
				}
			}
			return BoolValue(all)
		}
	}
	register("FullTextContains", 2, 2, fullText(true))
	register("FullTextContainsAll", 2, -1, fullText(true))
	register("FullTextContainsAny", 2, -1, fullText(false))
	// RRF ranks the rows as a whole (executor.fused); as a value it is
	// nothing.
	register("RRF", 1, -1, func(*evalCtx, *CallExpr, []Value) Value { return undefinedValue })
	// The internal functions of hybrid search's component queries
	// (hybrid.go): a text's analyzed length, and BM25 with the
	// statistics given (the whole container's, summed by the SDK).
	register("_FullTextWordCount", 1, 1, func(c *evalCtx, x *CallExpr, a []Value) Value {
		if a[0].kind != String {
			return undefinedValue
		}
		return NumberValue(float64(len(Analyze(a[0].str))))
	})
	register("_FullTextScore", 5, 5, func(c *evalCtx, x *CallExpr, a []Value) Value {
		if a[0].kind != String || a[2].kind != Number || a[3].kind != Number {
			return NumberValue(0)
		}
		st := &TextStats{Docs: int(a[2].num), Words: int(a[3].num), DocFreq: map[string]int{}}
		hits := a[4].Elems()
		for i, t := range a[1].Elems() {
			if t.kind != String || i >= len(hits) || hits[i].kind != Number {
				continue
			}
			for _, w := range Analyze(t.str) {
				st.DocFreq[w] = int(hits[i].num)
			}
		}
		return NumberValue(bm25(Analyze(a[0].str), scoreTerms(a[1:2]), st))
	})
	register("FullTextScore", 2, -1, func(c *evalCtx, x *CallExpr, a []Value) Value {
		if a[0].kind != String {
			return NumberValue(0)
		}
		var st *TextStats
		if sc, ok := x.cache.(searchCall); ok && c.env.textStats != nil {
			st = c.env.textStats(sc.path)
		}
		return NumberValue(bm25(Analyze(a[0].str), scoreTerms(a[1:]), st))
	})
}

// isFullTextCall reports whether x calls one of the full-text functions,
// whose first argument is a path of the item.
func isFullTextCall(x *CallExpr) bool {
	return x.fn != nil && strings.HasPrefix(x.fn.name, "FullText")
}

// FullTextQuery is a path a query scores with FullTextScore and the
// analyzed terms it scores: what its TextStats must count.
type FullTextQuery struct {
	Path  string
	Terms []string
}

// FullTextQueries returns what the plan's FullTextScore calls score: one
// entry per path, terms merged. Terms given by parameters are resolved.
func (p *Plan) FullTextQueries() []FullTextQuery {
	var out []FullTextQuery
	c := &evalCtx{params: p.params}
	walkStmt(p.q.stmt, func(e Expr) bool {
		x, ok := e.(*CallExpr)
		if !ok || x.fn == nil || x.fn.name != "FullTextScore" {
			return true
		}
		sc, _ := x.cache.(searchCall)
		args := make([]Value, 0, len(x.Args)-1)
		for _, a := range x.Args[1:] {
			args = append(args, c.eval(a))
		}
		terms := scoreTerms(args)
		for i := range out {
			if out[i].Path == sc.path {
				for _, t := range terms {
					if !containsString(out[i].Terms, t) {
						out[i].Terms = append(out[i].Terms, t)
					}
				}
				return true
			}
		}
		out = append(out, FullTextQuery{Path: sc.path, Terms: terms})
		return true
	})
	return out
}

// FullTextStats counts, over the items of src, the statistics the
// queries need, by path.
func FullTextStats(src Source, queries []FullTextQuery) (map[string]*TextStats, error) {
	stats := make(map[string]*TextStats, len(queries))
	fields := make([]string, 0, len(queries))
	for _, q := range queries {
		stats[q.Path] = &TextStats{DocFreq: map[string]int{}}
		if top := strings.SplitN(strings.TrimPrefix(q.Path, "/"), "/", 2)[0]; !containsString(fields, top) {
			fields = append(fields, top)
		}
	}
	var parseErr error
	err := src.Scan(nil, func(_, doc []byte) bool {
		v, err := parseDocFields(doc, fields)
		if err != nil {
			parseErr = err
			return false
		}
		for _, q := range queries {
			text := valueAt(v, q.Path)
			if text.kind != String {
				continue
			}
			words := Analyze(text.str)
			st := stats[q.Path]
			st.Docs++
			st.Words += len(words)
			for _, t := range q.Terms {
				if containsString(words, t) {
					st.DocFreq[t]++
				}
			}
		}
		return true
	})
	if parseErr != nil {
		return nil, parseErr
	}
	return stats, err
}

// valueAt is the value at path ("/a/b") in v.
func valueAt(v Value, path string) Value {
	for _, name := range strings.Split(strings.TrimPrefix(path, "/"), "/") {
		v = v.Get(name)
	}
	return v
}

// checkSearchFunctions applies the service's rules on where the ranking
// functions may appear: FullTextScore only as ORDER BY RANK or in its
// RRF, which must be the query's only ordering; RRF only as ORDER BY
// RANK, over FullTextScore and VectorDistance calls with an optional
// array of weights last.
func (c *checker) checkSearchFunctions(s *SelectStmt) {
	ranked := map[*CallExpr]bool{}
	for _, o := range s.OrderBy {
		if !o.Rank {
			continue
		}
		if len(s.OrderBy) > 1 {
			c.error(o.Expr.Pos(), "ORDER BY RANK must be the only ORDER BY item")
		}
		call, ok := o.Expr.(*CallExpr)
		if !ok || call.fn == nil || (call.fn.name != "FullTextScore" && call.fn.name != "RRF") {
			c.error(o.Expr.Pos(), "ORDER BY RANK takes a FullTextScore(...) or RRF(...) call")
			continue
		}
		ranked[call] = true
		if call.fn.name == "RRF" {
			c.checkRRF(call, ranked)
		}
	}
	walkDeep(s, func(e Expr) bool {
		if x, ok := e.(*CallExpr); ok {
			switch {
			case x.fn == nil || ranked[x]:
			case x.fn.name == "RRF":
				c.error(x.At, "RRF can only be used in ORDER BY RANK")
			case x.fn.name == "FullTextScore":
				c.error(x.At, "FullTextScore can only be used in ORDER BY RANK")
			}
		}
		return true
	})
}

// checkRRF checks the arguments of an RRF: its components, at least two
// FullTextScore or VectorDistance calls, and optionally an array of one
// weight per component.
func (c *checker) checkRRF(call *CallExpr, ranked map[*CallExpr]bool) {
	comps, weights := rrfParts(call)
	if len(comps) < 2 {
		c.error(call.At, "RRF fuses two or more FullTextScore or VectorDistance scores")
	}
	for _, a := range comps {
		x, ok := a.(*CallExpr)
		if !ok || x.fn == nil || (x.fn.name != "FullTextScore" && x.fn.name != "VectorDistance") {
			c.error(a.Pos(), "RRF takes FullTextScore(...) and VectorDistance(...) calls, and an array of weights last")
			continue
		}
		ranked[x] = true
		if x.fn.name == "VectorDistance" {
			x.vectorRank = true // ranked most similar first
		}
	}
	if w, ok := weights.(*ArrayExpr); ok && len(w.Elems) != len(comps) {
		c.error(w.Pos(), "RRF's weights array needs one weight per score")
	}
}

// isRRF reports whether e is an RRF call.
func isRRF(e Expr) bool {
	x, ok := e.(*CallExpr)
	return ok && x.fn != nil && x.fn.name == "RRF"
}

// rrfParts splits an RRF call's arguments into its scores and its
// weights (nil for none).
func rrfParts(call *CallExpr) (comps []Expr, weights Expr) {
	comps = call.Args
	if n := len(comps); n > 0 {
		if _, ok := comps[n-1].(*ArrayExpr); ok {
			return comps[:n-1], comps[n-1]
		}
		if _, ok := comps[n-1].(*ParamExpr); ok {
			return comps[:n-1], comps[n-1]
		}
	}
	return comps, nil
}

// rrfK is reciprocal rank fusion's constant: a row's fused score is the
// sum over the scores of weight / (rrfK + its rank by that score).
const rrfK = 60

// fused computes the whole result of ORDER BY RANK RRF(…): each row's
// rank by each score (FullTextScore highest first, VectorDistance most
// similar first), fused, highest first; then OFFSET, TOP and the page at
// the cursor's offset, as a materialized result.
func (ex *executor) fused(src Source, cur *cursor, pageSize int) (*cursor, error) {
	s := ex.s
	comps, weightsExpr := rrfParts(s.OrderBy[0].Expr.(*CallExpr))
	type row struct {
		scores []Value
		value  Value
		key    []byte
		fused  float64
	}
	var rows []*row
	// A SELECT * row is the document itself, which the plan's fields
	// (those the scores read) would leave partial.
	ex.wholeDoc = s.rawStar
	err := ex.scanAllRows(src, func(key []byte) bool {
		r := &row{scores: make([]Value, len(comps)), key: append([]byte(nil), key...)}
		for i, e := range comps {
			r.scores[i] = ex.c.eval(e)
		}
		if v, ok := ex.projectRow(); ok {
			r.value = v.Clone()
			rows = append(rows, r)
		}
		return !ex.c.m.halted()
	})
	if err != nil {
		return nil, err
	}
	weights := make([]float64, len(comps))
	for i := range weights {
		weights[i] = 1
	}
	if weightsExpr != nil {
		for i, w := range ex.c.eval(weightsExpr).Elems() {
			if i < len(weights) && w.kind == Number {
				weights[i] = w.num
			}
		}
	}
	order := make([]*row, len(rows))
	for i, call := range comps {
		copy(order, rows)
		// A ranked VectorDistance is a key, smallest first; a
		// FullTextScore a score, greatest first.
		vector := call.(*CallExpr).fn.name == "VectorDistance"
		slices.SortStableFunc(order, func(a, b *row) int {
			x, y := a.scores[i], b.scores[i]
			if vector {
				return compareNumbers(x, y)
			}
			return compareNumbers(y, x)
		})
		// Rows of one score share a rank, and the next score takes the
		// next rank (1, 1, 2): as the SDKs rank a hybrid search's
		// components.
		rank := 0
		for j, r := range order {
			if j == 0 || compareNumbers(r.scores[i], order[j-1].scores[i]) != 0 {
				rank++
			}
			r.fused += weights[i] / float64(rrfK+rank)
		}
	}
	slices.SortStableFunc(rows, func(a, b *row) int {
		switch {
		case a.fused > b.fused:
			return -1
		case a.fused < b.fused:
			return 1
		}
		return bytes.Compare(a.key, b.key)
	})
	values := make([]Value, len(rows))
	for i, r := range rows {
		values[i] = r.value
	}
	return ex.emitResult(values, cur, pageSize), nil
}

// compareNumbers orders numbers ascending, anything else after them.
func compareNumbers(x, y Value) int {
	switch {
	case x.kind != Number && y.kind != Number:
		return 0
	case x.kind != Number:
		return 1
	case y.kind != Number:
		return -1
	case x.num < y.num:
		return -1
	case x.num > y.num:
		return 1
	}
	return 0
}

// FullTextOrder reports whether the plan ranks by one FullTextScore of
// an item path and constant terms (ORDER BY RANK FullTextScore(c.<path>,
// terms…)): what a full-text index of the path can order.
func (p *Plan) FullTextOrder() (FullTextQuery, bool) {
	s := p.q.stmt
	if p.mode != modeOrderBy || len(s.OrderBy) != 1 || !s.OrderBy[0].Rank {
		return FullTextQuery{}, false
	}
	call, ok := s.OrderBy[0].Expr.(*CallExpr)
	if !ok || call.fn == nil || call.fn.name != "FullTextScore" {
		return FullTextQuery{}, false
	}
	sc, _ := call.cache.(searchCall)
	if sc.path == "" {
		return FullTextQuery{}, false
	}
	c := &evalCtx{params: p.params}
	args := make([]Value, 0, len(call.Args)-1)
	for _, a := range call.Args[1:] {
		if !isConstant(a) {
			return FullTextQuery{}, false
		}
		args = append(args, c.eval(a))
	}
	return FullTextQuery{Path: sc.path, Terms: scoreTerms(args)}, true
}

// TextAt is the text at path ("/a/b") of a stored document, if it holds
// a string there.
func TextAt(doc []byte, path string) (string, bool) {
	top := strings.SplitN(strings.TrimPrefix(path, "/"), "/", 2)[0]
	v, err := parseDocFields(doc, []string{top})
	if err != nil {
		return "", false
	}
	return valueAt(v, path).AsString()
}

// FullTextFilter is a top-level AND term of a WHERE that only items
// holding certain terms at a path can pass: FullTextContains,
// FullTextContainsAll or FullTextContainsAny of the item's path and
// constant strings. Phrases are the strings' analyzed terms; an item
// can pass only if it holds every term of every phrase, or with Any,
// of one of them. A phrase of no terms (only stop words) matches
// nothing.
type FullTextFilter struct {
	Path    string
	Any     bool
	Phrases [][]string
}

// FullTextFilter returns the first such term of the plan's WHERE on a
// path analyzed says is in the fullTextPolicy, if it has one.
func (p *Plan) FullTextFilter(analyzed func(path string) bool) (FullTextFilter, bool) {
	s := p.q.stmt
	if s.Where == nil || len(s.From) == 0 || s.From[0].In {
		return FullTextFilter{}, false
	}
	c := &evalCtx{params: p.params}
	for _, t := range conjuncts(s.Where, nil) {
		x, ok := t.(*CallExpr)
		if !ok || !isFullTextCall(x) || x.fn.name == "FullTextScore" {
			continue
		}
		sc, _ := x.cache.(searchCall)
		if sc.path == "" || !analyzed(sc.path) {
			continue
		}
		f := FullTextFilter{Path: sc.path, Any: x.fn.name == "FullTextContainsAny"}
		constant := true
		for _, a := range x.Args[1:] {
			if !isConstant(a) {
				constant = false
				break
			}
			v := c.eval(a)
			if v.kind != String {
				f.Phrases = append(f.Phrases, nil) // undefined: matches nothing
				continue
			}
			f.Phrases = append(f.Phrases, Analyze(v.str))
		}
		if constant {
			return f, true
		}
	}
	return FullTextFilter{}, false
}
