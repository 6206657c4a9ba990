package query

import (
	"math"
	"strings"
)

// Full-text search. A container's fullTextPolicy names the paths that
// hold text and their language; on those paths FullTextContains,
// FullTextContainsAll and FullTextContainsAny match, and FullTextScore
// scores, the text as the service's English analyzer sees it (Analyze):
// lower-case words without stop words, stemmed. FullTextScore is BM25
// over the container's items visible at the query's instant
// (TextStats, which the engine computes by FullTextStats): an expired
// item never counts, whether or not it was purged. It may appear only
// as ORDER BY RANK, highest score first.

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
			out = append(out, porterStem(w))
		}
	}
	return out
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
	if st == nil || st.Docs == 0 || len(words) == 0 {
		return 0
	}
	avg := float64(st.Words) / float64(st.Docs)
	var score float64
	for _, t := range terms {
		tf := 0
		for _, w := range words {
			if w == t {
				tf++
			}
		}
		if tf == 0 {
			continue
		}
		n := float64(st.DocFreq[t])
		idf := math.Log(1 + (float64(st.Docs)-n+0.5)/(n+0.5))
		f := float64(tf)
		score += idf * f * (bm25K1 + 1) / (f + bm25K1*(1-bm25B+bm25B*float64(len(words))/avg))
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
	// RRF is recognized so that the checker can say it is not supported.
	register("RRF", 1, -1, func(*evalCtx, *CallExpr, []Value) Value { return undefinedValue })
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
// functions may appear: FullTextScore only as ORDER BY RANK, which must
// be the query's only ordering. RRF (hybrid ranking) is refused: Ebb
// does not fuse rankings yet.
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
	}
	var visit func(st *SelectStmt)
	visit = func(st *SelectStmt) {
		walkStmt(st, func(e Expr) bool {
			switch x := e.(type) {
			case *CallExpr:
				switch {
				case x.fn == nil:
				case x.fn.name == "RRF":
					c.error(x.At, "RRF (hybrid search) is not supported by Ebb yet; rank by FullTextScore or by VectorDistance alone")
				case x.fn.name == "FullTextScore" && !ranked[x]:
					c.error(x.At, "FullTextScore can only be used in ORDER BY RANK")
				}
			case *SubqueryExpr:
				visit(x.Query)
				return false
			}
			return true
		})
	}
	visit(s)
}
