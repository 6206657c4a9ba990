package query

import "strings"

// A count of distinct values. The query language has no COUNT(DISTINCT
// …); the service's idiom for it is COUNT over a DISTINCT subquery,
//
//	SELECT VALUE COUNT(1) FROM (SELECT DISTINCT VALUE c.x FROM c WHERE …)
//
// which its query engine folds into one aggregate, DCount, and its query
// plan describes with dCountInfo (see QueryInfo). It is the one subquery
// the outermost FROM clause takes: Ebb runs the inner query (its DISTINCT
// materialized, as any) and answers the number of its rows.

// dcount is what a count of distinct values keeps of its outer query.
type dcount struct {
	outer *SelectStmt
	// value: SELECT VALUE COUNT(…), answered as the number; else an
	// object with the number under name.
	value bool
	name  string
}

// distinctCountShape reports whether s, as parsed, is a count of the rows
// of a subquery in its FROM clause and nothing else: SELECT [VALUE]
// COUNT(literal or the subquery's alias) [AS name] FROM (subquery) [AS
// alias]. It returns the subquery, which the caller checks is DISTINCT
// and over the container (checkDistinctCount).
func distinctCountShape(s *SelectStmt) (*SelectStmt, *dcount, bool) {
	if len(s.From) != 1 || s.From[0].In || s.Distinct || s.Star || len(s.Items) != 1 || s.Where != nil ||
		len(s.GroupBy) > 0 || len(s.OrderBy) > 0 || s.Top != nil || s.Offset != nil {
		return nil, nil, false
	}
	sq, ok := s.From[0].Expr.(*SubqueryExpr)
	if !ok {
		return nil, nil, false
	}
	call, ok := s.Items[0].Expr.(*CallExpr)
	if !ok || call.Udf || !strings.EqualFold(call.Name, "COUNT") || len(call.Args) != 1 {
		return nil, nil, false
	}
	switch a := call.Args[0].(type) {
	case *LiteralExpr:
	case *IdentExpr:
		// Every row of the subquery is defined, so COUNT of its alias
		// counts them all, as COUNT(1) does.
		if s.From[0].Alias == "" || a.Name != s.From[0].Alias {
			return nil, nil, false
		}
	default:
		return nil, nil, false
	}
	dc := &dcount{outer: s, value: s.Value, name: s.Items[0].Alias}
	if dc.name == "" {
		dc.name = "$1"
	}
	return sq.Query, dc, true
}

// checkDistinctCount checks the subquery of a count of distinct values
// as a query of its own over the container.
func (c *checker) checkDistinctCount(inner *SelectStmt) {
	c.checkStmt(inner, 0, true)
	if !inner.Distinct || len(inner.OrderBy) > 0 || inner.Top != nil || inner.Offset != nil || inner.isAggregate() {
		c.error(inner.At, "a subquery in the FROM clause of the outermost query is supported only as a count of distinct values, SELECT VALUE COUNT(1) FROM (SELECT DISTINCT … FROM c …), without ORDER BY, TOP, OFFSET LIMIT, GROUP BY or an aggregate inside")
	}
}

// result is the answer of the count: the number of the inner query's
// rows, as a VALUE or under its name.
func (dc *dcount) result(rows []Value) Value {
	n := NumberValue(float64(len(rows)))
	if dc.value {
		return n
	}
	o := newObjectCap(1)
	o.addMember(dc.name, n)
	return o
}
