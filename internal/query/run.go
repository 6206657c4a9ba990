package query

import (
	"math"
	"slices"
)

// This file runs a statement over rows in memory: the FROM/JOIN expansion
// and WHERE shared by every mode, projection, aggregation, grouping,
// sorting and DISTINCT. Subqueries run entirely here; the top-level
// executor (exec.go) uses the same pieces per document.

// forEachRow binds the aliases of s from source i on, for every
// combination of FROM/JOIN values, and calls fn for each row that passes
// WHERE. It stops early, returning false, when fn does or when the meter
// halts evaluation.
//
// For the tracked statement (c.track) it keeps c.pos, the index at each
// level of the combination being evaluated; a level's entry goes back to
// 0 when its loop completes, so after any early return c.pos names the
// combination that was under way, which has not produced its row. If
// c.resume is set the loops start at that combination instead of at the
// first, and resume is cleared once it is reached (or passed, if the
// document changed since it was taken).
func (c *evalCtx) forEachRow(s *SelectStmt, i int, fn func() bool) bool {
	if !c.m.spend(1) {
		return false
	}
	track := s == c.track
	if i == len(s.From) {
		if track {
			c.resume = nil
		}
		if s.Where != nil && !c.eval(s.Where).IsTrue() {
			if c.m.halted() {
				return false
			}
			if track {
				c.steps++
			}
			return true
		}
		if c.m.halted() || !fn() {
			return false
		}
		if track {
			c.steps++
		}
		return true
	}
	src := s.From[i]
	v := c.eval(src.Expr)
	if c.m.halted() {
		return false
	}
	if src.In || isSubquerySource(src) {
		if v.kind != Array {
			return true
		}
		elems := v.ref.elems
		if src.In && isSubquerySource(src) {
			elems = flattenRows(elems)
		}
		start := 0
		if track && c.resume != nil {
			start = c.resume[i]
		}
		for j := start; j < len(elems); j++ {
			if track {
				c.pos[i] = j
			}
			c.vars[src.slot] = elems[j]
			if !c.forEachRow(s, i+1, fn) {
				return false
			}
			if track {
				c.resume = nil
				c.steps++
			}
		}
		if track {
			c.pos[i] = 0
		}
		return true
	}
	if v.kind == Undefined {
		return true
	}
	c.vars[src.slot] = v
	return c.forEachRow(s, i+1, fn)
}

// flattenRows is what "x IN (SELECT …)" iterates: the elements of each
// of the subquery's rows that is an array, in order; other rows give
// none. "(SELECT …) x" iterates the rows themselves. The service's
// query reference shows JOIN n IN (SELECT VALUE ARRAY(…)) iterating the
// array's elements (learn.microsoft.com/azure/cosmos-db/nosql/query/
// subquery), and the .NET SDK's query interpreter iterates an IN over a
// subquery so (OfflineEngine/DataSourceEvaluator.cs).
func flattenRows(rows []Value) []Value {
	var out []Value
	for _, r := range rows {
		if r.kind == Array {
			out = append(out, r.ref.elems...)
		}
	}
	return out
}

func isSubquerySource(src *FromSource) bool {
	_, ok := src.Expr.(*SubqueryExpr)
	return ok
}

// project computes the output of the current row of a non-aggregating
// statement, or of the current group of an aggregating one.
func (c *evalCtx) project(s *SelectStmt) Value {
	switch {
	case s.Star:
		if len(s.From) == 0 {
			return undefinedValue
		}
		return c.vars[s.From[0].slot]
	case s.Value:
		return c.eval(s.Items[0].Expr)
	}
	o := newObjectCap(len(s.Items))
	for i := range s.Items {
		if v := c.eval(s.Items[i].Expr); v.kind != Undefined {
			o.addMember(s.Items[i].Name, v)
		}
	}
	return o
}

// projectInto is project for a statement that lists its output members
// (neither * nor VALUE), building the row in n, whose members it reuses:
// for a row that is encoded before the next is projected.
func (c *evalCtx) projectInto(s *SelectStmt, n *node) Value {
	n.members = n.members[:0]
	for i := range s.Items {
		if v := c.eval(s.Items[i].Expr); v.kind != Undefined {
			n.members = append(n.members, Member{Name: s.Items[i].Name, Value: v})
		}
	}
	return Value{kind: Object, ref: n}
}

// countOf evaluates a TOP, OFFSET or LIMIT operand: -1 if absent, and -2 if
// it is not a non-negative integer (Bind rejects that for the top level).
func (c *evalCtx) countOf(e Expr) int {
	if e == nil {
		return -1
	}
	n, ok := countValue(c.eval(e))
	if !ok {
		return -2
	}
	return n
}

func countValue(v Value) (int, bool) {
	if v.kind != Number || v.num < 0 || v.num != math.Trunc(v.num) || v.num > math.MaxInt32 {
		return 0, false
	}
	return int(v.num), true
}

// limits returns how many rows to skip and the most to return (-1: no
// bound) for s.
func (c *evalCtx) limits(s *SelectStmt) (skip, max int) {
	skip, max = 0, -1
	if n := c.countOf(s.Offset); n >= 0 {
		skip = n
	}
	if n := c.countOf(s.Limit); n >= 0 {
		max = n
	} else if n == -2 {
		max = 0
	}
	if n := c.countOf(s.Top); n >= 0 && (max < 0 || n < max) {
		max = n
	} else if n == -2 {
		max = 0
	}
	return skip, max
}

// runStmt runs s in memory (a subquery) and yields its rows until yield
// returns false.
func (c *evalCtx) runStmt(s *SelectStmt, yield func(Value) bool) {
	savedAgg, savedGroup := c.aggVals, c.groupVals
	defer func() { c.aggVals, c.groupVals = savedAgg, savedGroup }()
	skip, max := c.limits(s)
	if max == 0 {
		return
	}
	if !s.isAggregate() && len(s.OrderBy) == 0 && !s.Distinct {
		n := 0
		c.forEachRow(s, 0, func() bool {
			v := c.project(s)
			if v.kind == Undefined {
				return true
			}
			if skip > 0 {
				skip--
				return true
			}
			n++
			return yield(v) && n != max
		})
		return
	}
	col := newCollector(s)
	if !c.forEachRow(s, 0, func() bool { col.add(c); return true }) {
		return // halted: the rows are incomplete and will not be used
	}
	rows := col.finish(c)
	n := 0
	for _, v := range rows {
		if skip > 0 {
			skip--
			continue
		}
		n++
		if !yield(v) || n == max {
			return
		}
	}
}

func (c *evalCtx) evalSubquery(x *SubqueryExpr) Value {
	switch x.Kind {
	case ExistsSubquery:
		found := false
		c.runStmt(x.Query, func(Value) bool { found = true; return false })
		return BoolValue(found)
	case ScalarSubquery, FirstSubquery:
		var v Value
		c.runStmt(x.Query, func(r Value) bool { v = r; return false })
		return v
	case LastSubquery:
		var v Value
		c.runStmt(x.Query, func(r Value) bool { v = r; return true })
		return v
	}
	var rows []Value
	c.runStmt(x.Query, func(r Value) bool { rows = append(rows, r); return true })
	return NewArray(rows...)
}

// collector gathers the rows of a statement that needs all of them before
// producing any: aggregates, GROUP BY, ORDER BY, DISTINCT. Rows are added
// with the statement's aliases bound; finish returns the output in order
// (without OFFSET/LIMIT/TOP, which the caller applies).
type collector struct {
	s *SelectStmt

	// Aggregation without GROUP BY.
	single []aggState
	// GROUP BY.
	groups map[string]*group
	order  []*group
	keyBuf []byte
	// ORDER BY.
	sorted []sortedRow
	// Plain rows (DISTINCT only).
	rows []Value
}

type group struct {
	keys []Value
	aggs []aggState
}

type sortedRow struct {
	keys []Value
	val  Value
}

func newCollector(s *SelectStmt) *collector {
	col := &collector{s: s}
	switch {
	case len(s.GroupBy) > 0:
		col.groups = map[string]*group{}
	case len(s.aggs) > 0:
		col.single = newAggStates(s)
	}
	return col
}

func newAggStates(s *SelectStmt) []aggState {
	st := make([]aggState, len(s.aggs))
	for i, a := range s.aggs {
		st[i].kind = a.fn.agg
	}
	return st
}

// feedAggs adds the current row to each aggregate.
func (c *evalCtx) feedAggs(s *SelectStmt, st []aggState) {
	for i, a := range s.aggs {
		var v Value
		if len(a.Args) > 0 {
			v = c.eval(a.Args[0])
		}
		st[i].add(v)
	}
}

func (col *collector) add(c *evalCtx) {
	s := col.s
	switch {
	case col.groups != nil:
		col.keyBuf = col.keyBuf[:0]
		keys := make([]Value, len(s.GroupBy))
		for i, g := range s.GroupBy {
			keys[i] = c.eval(g)
			col.keyBuf = appendKey(col.keyBuf, keys[i])
		}
		g := col.groups[string(col.keyBuf)]
		if g == nil {
			g = &group{keys: keys, aggs: newAggStates(s)}
			col.groups[string(col.keyBuf)] = g
			col.order = append(col.order, g)
		}
		c.feedAggs(s, g.aggs)
	case col.single != nil:
		c.feedAggs(s, col.single)
	case len(s.OrderBy) > 0:
		v := c.project(s)
		if v.kind == Undefined {
			return
		}
		keys := make([]Value, len(s.OrderBy))
		for i, o := range s.OrderBy {
			keys[i] = c.eval(o.Expr)
		}
		col.sorted = append(col.sorted, sortedRow{keys: keys, val: v})
	default:
		if v := c.project(s); v.kind != Undefined {
			col.rows = append(col.rows, v)
		}
	}
}

func (col *collector) finish(c *evalCtx) []Value {
	s := col.s
	var rows []Value
	switch {
	case col.groups != nil:
		for _, g := range col.order {
			c.groupVals = g.keys
			c.aggVals = aggResults(g.aggs)
			if v := c.project(s); v.kind != Undefined {
				rows = append(rows, v)
			}
		}
	case col.single != nil:
		c.groupVals = nil
		c.aggVals = aggResults(col.single)
		if v := c.project(s); v.kind != Undefined {
			rows = append(rows, v)
		}
	case len(s.OrderBy) > 0:
		slices.SortStableFunc(col.sorted, func(a, b sortedRow) int {
			return compareSortKeys(s.OrderBy, a.keys, b.keys)
		})
		rows = make([]Value, len(col.sorted))
		for i, r := range col.sorted {
			rows[i] = r.val
		}
	default:
		rows = col.rows
	}
	if s.Distinct {
		rows = distinctValues(rows)
	}
	return rows
}

// compareSortKeys orders two rows by their ORDER BY keys.
func compareSortKeys(items []OrderItem, a, b []Value) int {
	for i := range items {
		r := Compare(a[i], b[i])
		if r != 0 {
			if items[i].Desc {
				return -r
			}
			return r
		}
	}
	return 0
}

// distinctValues keeps the first of each set of equal values, in order.
func distinctValues(rows []Value) []Value {
	seen := make(map[string]struct{}, len(rows))
	out := rows[:0:0]
	var buf []byte
	for _, v := range rows {
		buf = appendKey(buf[:0], v)
		if _, ok := seen[string(buf)]; ok {
			continue
		}
		seen[string(buf)] = struct{}{}
		out = append(out, v)
	}
	return out
}

// aggKind names an aggregate function.
type aggKind uint8

const (
	aggNone aggKind = iota
	aggCount
	aggSum
	aggAvg
	aggMin
	aggMax
	aggCountIf
	// MAKELIST and MAKESET: the values, and the distinct values, as an
	// array. The service has them (its query plans name them MakeList
	// and MakeSet, and @azure/cosmos merges them across partitions with
	// its MakeListAggregator and MakeSetAggregator).
	aggMakeList
	aggMakeSet
)

// aggState accumulates one aggregate with Cosmos semantics: undefined
// inputs are skipped; SUM and AVG of anything but numbers are undefined;
// MIN and MAX order mixed types by Compare and are undefined if an array or
// object is among the inputs; over no input COUNT, COUNTIF and SUM give 0,
// the others undefined.
type aggState struct {
	kind aggKind
	n    float64 // inputs counted
	sum  float64
	bad  bool
	best Value
	// list and seen (by appendKey) are MAKELIST's and MAKESET's values.
	list []Value
	seen map[string]bool
}

func (a *aggState) add(v Value) {
	switch a.kind {
	case aggCountIf:
		if v.IsTrue() {
			a.n++
		}
		return
	}
	if v.kind == Undefined {
		return
	}
	switch a.kind {
	case aggCount:
		a.n++
	case aggSum, aggAvg:
		if v.kind != Number {
			a.bad = true
			return
		}
		a.n++
		a.sum += v.num
	case aggMakeList:
		a.list = append(a.list, v)
	case aggMakeSet:
		k := string(appendKey(nil, v))
		if a.seen == nil {
			a.seen = map[string]bool{}
		}
		if !a.seen[k] {
			a.seen[k] = true
			a.list = append(a.list, v)
		}
	case aggMin, aggMax:
		if v.kind == Array || v.kind == Object {
			a.bad = true
			return
		}
		if a.n == 0 {
			a.best = v
		} else if r := Compare(v, a.best); (a.kind == aggMin && r < 0) || (a.kind == aggMax && r > 0) {
			a.best = v
		}
		a.n++
	}
}

func (a *aggState) result() Value {
	switch a.kind {
	case aggCount, aggCountIf:
		return NumberValue(a.n)
	case aggSum:
		if a.bad {
			return undefinedValue
		}
		return NumberValue(a.sum)
	case aggAvg:
		if a.bad || a.n == 0 {
			return undefinedValue
		}
		return NumberValue(a.sum / a.n)
	case aggMin, aggMax:
		if a.bad || a.n == 0 {
			return undefinedValue
		}
		return a.best
	case aggMakeList, aggMakeSet:
		return NewArray(a.list...)
	}
	return undefinedValue
}

func aggResults(st []aggState) []Value {
	out := make([]Value, len(st))
	for i := range st {
		out[i] = st[i].result()
	}
	return out
}
