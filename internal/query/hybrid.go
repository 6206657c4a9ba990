package query

import (
	"strconv"
	"strings"
)

// Hybrid search through a query plan. An SDK that supports it (the JS
// SDK sends HybridSearch among x-ms-cosmos-supported-query-features)
// runs ORDER BY RANK itself, across partition key ranges, from the
// plan's hybridSearchQueryInfo, in the service's format (as the SDKs'
// own plan tests record it):
//
//   - globalStatisticsQuery, run on every range and summed: the item
//     count, and per FullTextScore its path's word count and each term's
//     count of items (COUNTIF(FullTextContains(…))), so that every range
//     scores with the whole container's statistics;
//   - one component query per score, each returning its range's best
//     items by that score with every score of the query in
//     payload.componentScores, the statistics as placeholders the SDK
//     fills in ({documentdb-formattablehybridsearchquery-…});
//   - skip and take, and the RRF weights.
//
// The SDK then fuses the components' items by reciprocal rank (k 60),
// ranking each item among those the components returned. The internal
// functions the component queries call: _FullTextWordCount(text),
// _FullTextScore(text, terms, items, words, hitCounts) and
// _VectorScore(…), VectorDistance's value as a similarity to order by.

// HybridSearchQueryInfo is the hybridSearchQueryInfo of a query plan.
type HybridSearchQueryInfo struct {
	GlobalStatisticsQuery             string      `json:"globalStatisticsQuery"`
	ComponentQueryInfos               []QueryInfo `json:"componentQueryInfos"`
	ComponentWithoutPayloadQueryInfos []QueryInfo `json:"componentWithoutPayloadQueryInfos"`
	ProjectionQueryInfo               *QueryInfo  `json:"projectionQueryInfo"`
	ComponentWeights                  []float64   `json:"componentWeights,omitempty"`
	Skip                              *int        `json:"skip"`
	Take                              *int        `json:"take"`
	RequiresGlobalStatistics          bool        `json:"requiresGlobalStatistics"`
}

// The placeholders of the global statistics in a component query.
const (
	placeholderDocumentCount = "{documentdb-formattablehybridsearchquery-totaldocumentcount}"
	placeholderWordCount     = "{documentdb-formattablehybridsearchquery-totalwordcount-"
	placeholderHitCounts     = "{documentdb-formattablehybridsearchquery-hitcountsarray-"
)

// componentTop is how many items each component query asks a range for
// per result the query returns: the service asks for 120 when TOP is 10.
const componentTop = 12

// HybridSearch returns the plan's hybridSearchQueryInfo: for ORDER BY
// RANK over the whole item (no JOIN, GROUP BY, DISTINCT or aggregate)
// projecting the item or an object, whose FullTextScores read paths
// analyzed says are in the container's fullTextPolicy. ok is false for
// anything else, which the SDK then passes through to be ranked by the
// range that serves it.
func (p *Plan) HybridSearch(analyzed func(path string) bool) (info HybridSearchQueryInfo, ok bool) {
	s := p.q.stmt
	if len(s.OrderBy) != 1 || !s.OrderBy[0].Rank || len(s.From) != 1 || s.From[0].In ||
		s.Distinct || len(s.GroupBy) > 0 || len(s.aggs) > 0 {
		return info, false
	}
	if s.Value {
		if _, isObject := s.Items[0].Expr.(*ObjectExpr); !isObject {
			return info, false // the SDK takes a payload that is an object
		}
	}
	c := &evalCtx{params: p.params}
	comps := []Expr{s.OrderBy[0].Expr}
	if call := s.OrderBy[0].Expr.(*CallExpr); call.fn.name == "RRF" {
		var weights Expr
		comps, weights = rrfParts(call)
		if weights != nil {
			for _, w := range c.eval(weights).Elems() {
				if w.kind != Number {
					return info, false
				}
				info.ComponentWeights = append(info.ComponentWeights, w.num)
			}
			if len(info.ComponentWeights) != len(comps) {
				return HybridSearchQueryInfo{}, false // one weight per score, or the SDK has none to give
			}
		}
	}
	// Each score's text, with the statistics as placeholders, and the
	// global statistics query's part for each FullTextScore.
	scores := make([]string, len(comps))
	ascending := make([]bool, len(comps))
	var stats []string
	paths := map[string]bool{}
	for i, e := range comps {
		call := e.(*CallExpr)
		var b strings.Builder
		if call.fn.name == "VectorDistance" {
			b.WriteString("_VectorScore(")
			for j, a := range call.Args {
				if j > 0 {
					b.WriteString(", ")
				}
				writeExpr(&b, a)
			}
			b.WriteByte(')')
			ascending[i] = p.planVectorFunction(c, call) == "euclidean"
			scores[i] = b.String()
			continue
		}
		if sc, _ := call.cache.(searchCall); sc.path == "" || !analyzed(sc.path) {
			return HybridSearchQueryInfo{}, false // scored unanalyzed, as only the range can
		}
		path := formatExpr(call.Args[0])
		paths[path] = true
		var terms []string
		for _, v := range call.Args[1:] {
			tv := c.eval(v)
			for _, t := range append([]Value{tv}, tv.Elems()...) {
				if t.kind == String {
					terms = append(terms, t.str)
				}
			}
		}
		k := strconv.Itoa(len(stats))
		b.WriteString("_FullTextScore(" + path + ", [")
		var hits strings.Builder
		for j, t := range terms {
			if j > 0 {
				b.WriteString(", ")
				hits.WriteString(", ")
			}
			lit := string(appendString(nil, t))
			b.WriteString(lit)
			hits.WriteString("COUNTIF(FullTextContains(" + path + ", " + lit + "))")
		}
		b.WriteString("], " + placeholderDocumentCount + ", " + placeholderWordCount + k + "}, " + placeholderHitCounts + k + "})")
		scores[i] = b.String()
		stats = append(stats, `{"totalWordCount": SUM(_FullTextWordCount(`+path+`)), "hitCounts": [`+hits.String()+`]}`)
	}
	root := s.From[0].Alias
	var from strings.Builder
	writeSource(&from, s.From[0])
	// The service counts every item; Ebb's own ranking counts the items
	// with text at the path (textindex.go), and so does the plan when
	// its scores read one path, so that both rank alike.
	count := "COUNT(1)"
	if len(paths) == 1 {
		for path := range paths {
			count = "COUNTIF(IS_STRING(" + path + "))"
		}
	}
	info.GlobalStatisticsQuery = "SELECT " + count + " AS documentCount, [" + strings.Join(stats, ", ") + "] AS fullTextStatistics\nFROM " + from.String()
	info.RequiresGlobalStatistics = len(stats) > 0

	// What each range returns for an item: its projection and every
	// score.
	var payload strings.Builder
	payload.WriteString(`{"payload": `)
	switch {
	case s.Star:
		payload.WriteString(root)
	case s.Value:
		writeExpr(&payload, s.Items[0].Expr)
	default:
		writeObject(&payload, s.Items, false)
	}
	payload.WriteString(`, "componentScores": [` + strings.Join(scores, ", ") + "]}")
	if n := c.countOf(s.Top); n >= 0 {
		info.Take = &n
	}
	if off, lim := c.countOf(s.Offset), c.countOf(s.Limit); off >= 0 && lim >= 0 {
		info.Skip, info.Take = &off, &lim
	}
	var top *int
	if info.Take != nil {
		n := componentTop * (*info.Take)
		if info.Skip != nil {
			n = componentTop * (*info.Skip + *info.Take)
		}
		top = &n
	}
	info.ComponentWithoutPayloadQueryInfos = []QueryInfo{}
	for i, score := range scores {
		var b strings.Builder
		b.WriteString("SELECT ")
		if top != nil {
			b.WriteString("TOP " + strconv.Itoa(*top) + " ")
		}
		b.WriteString(root + `._rid, [{"item": ` + score + `}] AS orderByItems, ` + payload.String() + " AS payload")
		writeFromWhere(&b, s, true)
		order, dir := "Descending", " DESC"
		if ascending[i] {
			order, dir = "Ascending", " ASC"
		}
		b.WriteString(" ORDER BY " + score + dir)
		info.ComponentQueryInfos = append(info.ComponentQueryInfos, QueryInfo{
			DistinctType: "None", Top: top, OrderBy: []string{order}, OrderByExpressions: []string{score},
			GroupByExpressions: []string{}, GroupByAliases: []string{}, Aggregates: []string{},
			GroupByAliasToAggregateType: map[string]*string{}, RewrittenQuery: b.String(), HasNonStreamingOrderBy: true,
		})
	}
	return info, true
}
