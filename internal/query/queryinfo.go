package query

import (
	"fmt"
	"math"
	"strings"
)

// QueryInfo is the queryInfo part of the PartitionedQueryExecutionInfo the
// JavaScript SDK asks for (wire.md §12.45). Ebb executes every query fully,
// so the SDK only uses this when forced into its pipelined mode.
type QueryInfo struct {
	DistinctType                string             `json:"distinctType"` // "None", "Ordered" or "Unordered"
	Top                         *int               `json:"top"`
	Offset                      *int               `json:"offset"`
	Limit                       *int               `json:"limit"`
	OrderBy                     []string           `json:"orderBy"` // "Ascending" or "Descending" per key
	OrderByExpressions          []string           `json:"orderByExpressions"`
	GroupByExpressions          []string           `json:"groupByExpressions"`
	GroupByAliases              []string           `json:"groupByAliases"`
	Aggregates                  []string           `json:"aggregates"` // "Count", "Sum", "Average", "Min", "Max", "CountIf"
	GroupByAliasToAggregateType map[string]*string `json:"groupByAliasToAggregateType"`
	RewrittenQuery              string             `json:"rewrittenQuery"`
	HasSelectValue              bool               `json:"hasSelectValue"`
	DCountInfo                  *DCountInfo        `json:"dCountInfo"`
	HasNonStreamingOrderBy      bool               `json:"hasNonStreamingOrderBy"`
}

// DCountInfo marks a count of distinct values, SELECT VALUE COUNT(1)
// FROM (SELECT DISTINCT …): the SDKs that know it (.NET, Java) run the
// rewritten inner query on every range, drop the values seen before and
// count the rest, answering the count, or {alias: count} when the count
// is not a VALUE (Alias).
type DCountInfo struct {
	Alias string `json:"dCountAlias"`
}

var aggNames = map[aggKind]string{
	aggCount: "Count", aggSum: "Sum", aggAvg: "Average", aggMin: "Min", aggMax: "Max", aggCountIf: "CountIf",
	aggMakeList: "MakeList", aggMakeSet: "MakeSet",
}

// QueryInfo describes the plan in the shape the JavaScript SDK expects.
func (p *Plan) QueryInfo() QueryInfo {
	s := p.q.stmt
	qi := QueryInfo{
		DistinctType:                "None",
		OrderBy:                     []string{},
		OrderByExpressions:          []string{},
		GroupByExpressions:          []string{},
		GroupByAliases:              []string{},
		Aggregates:                  []string{},
		GroupByAliasToAggregateType: map[string]*string{},
		HasSelectValue:              s.Value,
	}
	if dc := p.q.dcount; dc != nil {
		// The service plans a count of distinct values this way, for
		// clients that do not announce DCount among their query features
		// too (azure-cosmos-dotnet-v3 #2672: a missing flag does not
		// block it). @azure/cosmos 4.9.3 does not read dCountInfo and so
		// returns the distinct values themselves, against the service as
		// here; an SDK that does returns their number.
		qi.DistinctType = "Unordered"
		qi.HasSelectValue = dc.value
		qi.DCountInfo = &DCountInfo{}
		if !dc.value {
			qi.DCountInfo.Alias = dc.name
		}
		qi.RewrittenQuery = formatStmt(s)
		return qi
	}
	if s.Distinct {
		qi.DistinctType = "Unordered"
		if len(s.OrderBy) > 0 {
			qi.DistinctType = "Ordered"
		}
	}
	c := &evalCtx{params: p.params}
	if n := c.countOf(s.Top); n >= 0 {
		qi.Top = &n
	}
	if n := c.countOf(s.Offset); n >= 0 {
		qi.Offset = &n
	}
	if n := c.countOf(s.Limit); n >= 0 {
		qi.Limit = &n
	}
	desc := make([]bool, len(s.OrderBy))
	for i, o := range s.OrderBy {
		if s.isAggregate() {
			break // one row: nothing to merge in order
		}
		if o.Rank {
			// ORDER BY RANK is scored over the whole container by each
			// partition's query (FullTextStats): the SDK passes it on.
			continue
		}
		desc[i] = o.Desc
		if call, ok := o.Expr.(*CallExpr); ok && call.fn != nil && call.fn.name == "VectorDistance" {
			// The service merges a vector search across partitions
			// without streaming: the SDKs buffer every range's rows and
			// sort them, and @azure/cosmos refuses one without TOP or
			// LIMIT (QueryPlanRetrieverTests in the .NET SDK).
			qi.HasNonStreamingOrderBy = true
			if call.vectorRank {
				// Most similar first: the merge across partitions
				// orders the scores themselves, greatest first but for
				// Euclidean.
				desc[i] = p.planVectorFunction(c, call) != "euclidean"
			}
		}
		if desc[i] {
			qi.OrderBy = append(qi.OrderBy, "Descending")
		} else {
			qi.OrderBy = append(qi.OrderBy, "Ascending")
		}
		qi.OrderByExpressions = append(qi.OrderByExpressions, formatExpr(o.Expr))
	}
	for _, g := range s.GroupBy {
		qi.GroupByExpressions = append(qi.GroupByExpressions, formatExpr(g))
	}
	switch {
	case len(s.GroupBy) > 0 || (len(s.aggs) > 0 && !s.Value):
		// GROUP BY, and aggregates without VALUE (a GROUP BY with no keys):
		// each output property maps to its aggregate, or null.
		for _, it := range s.Items {
			var t *string
			if call, ok := it.Expr.(*CallExpr); ok && call.agg >= 0 {
				name := aggNames[call.fn.agg]
				t = &name
			}
			switch {
			case !s.Value:
				qi.GroupByAliases = append(qi.GroupByAliases, it.Name)
				qi.GroupByAliasToAggregateType[it.Name] = t
			case t != nil:
				// SELECT VALUE COUNT(1) … GROUP BY: the service lists
				// the aggregate here, and the SDK's GROUP BY VALUE
				// merge takes its aggregator from aggregates[0]
				// (without it, it keeps one range's partial count).
				qi.Aggregates = append(qi.Aggregates, *t)
			}
		}
	case len(s.aggs) > 0:
		for _, a := range s.aggs {
			qi.Aggregates = append(qi.Aggregates, aggNames[a.fn.agg])
		}
	}
	qi.RewrittenQuery = rewrite(s, desc, qi.Top, qi.Offset, qi.Limit)
	if qi.RewrittenQuery == "" && qi.Offset != nil && qi.Limit != nil {
		qi.RewrittenQuery = rewriteOffsetLimit(s, *qi.Offset, *qi.Limit)
	}
	return qi
}

// DistributionError is why the query cannot run across partitions, ""
// when it can: the service's query plan refuses an aggregate inside a
// larger expression in the SELECT list (SELECT VALUE FLOOR(AVG(c.n)),
// SELECT MIN(c.n) / 2, SELECT VALUE {"s": SUM(c.n)}, ABS(AVG(…)) under
// GROUP BY), whose partial results no SDK can merge (the .NET SDK's
// QueryPlanBaselineTests, Negative and NonValueAggregates). Within one
// partition the query runs.
func (p *Plan) DistributionError() string {
	s := p.q.stmt
	if p.q.dcount != nil {
		return ""
	}
	bare := 0
	for _, it := range s.Items {
		if call, ok := it.Expr.(*CallExpr); ok && call.agg >= 0 {
			bare++
		}
	}
	if len(s.aggs) > bare {
		return "Compositions of aggregates and other expressions are not allowed."
	}
	return ""
}

// planVectorFunction is the distance function of a VectorDistance call
// as a plan sees it: its options' if they are constant, else the
// container's for its path (SetVectors), else cosine.
func (p *Plan) planVectorFunction(c *evalCtx, call *CallExpr) string {
	if len(call.Args) == 4 {
		if f, ok := c.eval(call.Args[3]).Get("distanceFunction").AsString(); ok {
			return strings.ToLower(f)
		}
	}
	if vc, ok := call.cache.(vectorCall); ok && vc.path != "" && p.vectors != nil {
		if f, ok := p.vectors(vc.path); ok {
			return f
		}
	}
	return "cosine"
}

// rewrite produces the per-partition query of the SDK's pipelined mode for
// ORDER BY and VALUE-aggregate queries ("" otherwise: the SDK then sends the
// original query).
// desc is each ORDER BY key's direction, as the plan reports it; top,
// offset and limit the plan's (nil when absent).
func rewrite(s *SelectStmt, desc []bool, top, offset, limit *int) string {
	switch {
	case len(s.OrderBy) > 0 && len(s.From) > 0 && !s.isAggregate() && !s.OrderBy[0].Rank:
		var b strings.Builder
		b.WriteString("SELECT ")
		if s.Distinct {
			b.WriteString("DISTINCT ")
		}
		// Every range needs no more rows than the query's TOP, nor than
		// its OFFSET plus LIMIT (below), as the service rewrites it; but
		// with DISTINCT a range's rows are made distinct only by the
		// SDK's merge (each has its _rid), so a range's first rows may
		// repeat one value and every row may be needed.
		limited := !s.Distinct
		if top != nil && limited {
			fmt.Fprintf(&b, "TOP %d ", *top)
		}
		root := s.From[0].Alias
		b.WriteString(root + "._rid, ")
		keys := make([]Expr, len(s.OrderBy))
		for i, o := range s.OrderBy {
			keys[i] = o.Expr
		}
		writeItems(&b, keys)
		b.WriteString(" AS orderByItems, ")
		switch {
		case s.Star:
			b.WriteString(root)
		case s.Value:
			writeExpr(&b, s.Items[0].Expr)
		default:
			writeObject(&b, s.Items, false)
		}
		b.WriteString(" AS payload")
		writeFromWhere(&b, s, true)
		for i, o := range s.OrderBy {
			if i == 0 {
				b.WriteString(" ORDER BY ")
			} else {
				b.WriteString(", ")
			}
			writeExpr(&b, o.Expr)
			if desc[i] {
				b.WriteString(" DESC")
			} else {
				b.WriteString(" ASC")
			}
		}
		if offset != nil && limit != nil && limited {
			fmt.Fprintf(&b, " OFFSET 0 LIMIT %d", rangeLimit(*offset, *limit))
		}
		return b.String()
	case len(s.GroupBy) > 0 || (len(s.aggs) > 0 && !s.Value):
		// GROUP BY (and aggregates without VALUE, a GROUP BY with no
		// keys): each partition returns its groups as
		// {groupByItems: [{item: key}…], payload: …}, aggregates inside
		// payload in the shape the SDK's aggregators merge.
		var b strings.Builder
		b.WriteString("SELECT ")
		if len(s.GroupBy) > 0 {
			writeItems(&b, s.GroupBy)
			b.WriteString(" AS groupByItems, ")
		}
		if s.Value {
			if call, ok := s.Items[0].Expr.(*CallExpr); ok && call.agg >= 0 {
				b.WriteByte('[')
				writeAggItem(&b, call)
				b.WriteByte(']')
			} else {
				writeExpr(&b, s.Items[0].Expr)
			}
		} else {
			writeObject(&b, s.Items, true)
		}
		b.WriteString(" AS payload")
		writeFromWhere(&b, s, false)
		for i, g := range s.GroupBy {
			if i == 0 {
				b.WriteString(" GROUP BY ")
			} else {
				b.WriteString(", ")
			}
			writeExpr(&b, g)
		}
		return b.String()
	case s.Value && len(s.aggs) == 1:
		call, ok := s.Items[0].Expr.(*CallExpr)
		if !ok || call.agg < 0 {
			return ""
		}
		var b strings.Builder
		b.WriteString("SELECT VALUE [")
		writeAggItem(&b, call)
		b.WriteByte(']')
		writeFromWhere(&b, s, false)
		return b.String()
	}
	return ""
}

// rewriteOffsetLimit is the per-partition query of an OFFSET LIMIT
// query that no other rewrite covers (no ORDER BY, GROUP BY or
// aggregate): every range returns its first offset+limit rows and the
// SDK skips offset of their union and keeps limit. Sent as written,
// each range would skip the offset itself and the SDK skip it again.
func rewriteOffsetLimit(s *SelectStmt, offset, limit int) string {
	each := *s
	each.Offset = &LiteralExpr{Val: NumberValue(0)}
	each.Limit = &LiteralExpr{Val: NumberValue(float64(rangeLimit(offset, limit)))}
	return formatStmt(&each)
}

// rangeLimit is the LIMIT of a range's part of OFFSET offset LIMIT
// limit: all the rows the query may skip or return, within the largest
// LIMIT a query takes.
func rangeLimit(offset, limit int) int {
	return int(min(int64(offset)+int64(limit), math.MaxInt32))
}

// writeItems writes [{"item": e1}, {"item": e2}, …].
func writeItems(b *strings.Builder, exprs []Expr) {
	b.WriteByte('[')
	for i, e := range exprs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(`{"item": `)
		writeExpr(b, e)
		b.WriteByte('}')
	}
	b.WriteByte(']')
}

// writeObject writes the select list as {"name": expr, …}; with partials,
// each aggregate as the partial result writeAggItem describes.
func writeObject(b *strings.Builder, items []SelectItem, partials bool) {
	b.WriteByte('{')
	for i, it := range items {
		if i > 0 {
			b.WriteString(", ")
		}
		b.Write(appendString(nil, it.Name))
		b.WriteString(": ")
		if call, ok := it.Expr.(*CallExpr); ok && partials && call.agg >= 0 {
			writeAggItem(b, call)
		} else {
			writeExpr(b, it.Expr)
		}
	}
	b.WriteByte('}')
}

// writeAggItem writes {"item": …}, a partition's partial aggregate in the
// shape the SDK's aggregator for it merges: a number for COUNT, SUM and
// COUNTIF, {min|max, count} for MIN and MAX (so empty partitions can be
// told apart), {sum, count} for AVG.
func writeAggItem(b *strings.Builder, call *CallExpr) {
	b.WriteString(`{"item": `)
	partial := func(name, fn string) {
		fmt.Fprintf(b, `{%q: %s(`, name, fn)
		writeExpr(b, call.Args[0])
		b.WriteString(`), "count": COUNT(`)
		writeExpr(b, call.Args[0])
		b.WriteString(")}")
	}
	switch call.fn.agg {
	case aggAvg:
		partial("sum", "SUM")
	case aggMin:
		partial("min", "MIN")
	case aggMax:
		partial("max", "MAX")
	default:
		writeExpr(b, call)
	}
	b.WriteByte('}')
}

// writeFromWhere writes the FROM, JOIN and WHERE clauses of s; with
// orderByFilter, the WHERE also holds the placeholder the JS SDK fills
// with its ORDER BY resume filter.
func writeFromWhere(b *strings.Builder, s *SelectStmt, orderByFilter bool) {
	for i, src := range s.From {
		if i == 0 {
			b.WriteString(" FROM ")
		} else {
			b.WriteString(" JOIN ")
		}
		writeSource(b, src)
	}
	switch {
	case s.Where != nil && orderByFilter:
		b.WriteString(" WHERE (")
		writeExpr(b, s.Where)
		b.WriteString(") AND ({documentdb-formattableorderbyquery-filter})")
	case s.Where != nil:
		b.WriteString(" WHERE ")
		writeExpr(b, s.Where)
	case orderByFilter:
		b.WriteString(" WHERE ({documentdb-formattableorderbyquery-filter})")
	}
}
