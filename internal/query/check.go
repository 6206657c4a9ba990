package query

import (
	"slices"
	"strconv"
	"strings"
)

// The checker resolves names and enforces the rules the grammar cannot:
// identifiers must name an input alias in scope, functions must exist and
// get the right number of arguments, aggregates appear only in SELECT (and
// not nested), GROUP BY projections use only grouped expressions, output
// names are unique. It assigns variable slots to aliases and numbers
// parameters and aggregates for the evaluator.

type checker struct {
	src    string
	errs   errorList
	params map[string]int // parameter name → slot
	names  []string       // parameter names by slot
	scopes []*scope
	// maxSlots is the number of variable slots the query needs.
	maxSlots int
	// joins counts the JOIN clauses seen, for MaxJoins.
	joins int
	// udfs are the user-defined functions called, each once, in order,
	// and where each is first called.
	udfs   []string
	udfsAt []int
}

// scope is one statement's aliases. Lookups walk outwards, which is how a
// subquery sees (is correlated to) the aliases of the queries around it.
type scope struct {
	stmt    *SelectStmt
	aliases []alias
	next    int // next free slot
}

type alias struct {
	name string
	slot int
}

func (c *checker) error(pos int, msg string) {
	for _, e := range c.errs.errs {
		if e.Pos == pos {
			return
		}
	}
	if len(c.errs.errs) < MaxErrors {
		c.errs.add(SemanticError, c.src, pos, msg)
	}
}

// limit reports a query beyond one of the service's limits (limits.go).
func (c *checker) limit(pos int, msg string) {
	if len(c.errs.errs) < MaxErrors {
		c.errs.add(LimitError, c.src, pos, msg)
	}
}

func (c *checker) lookup(name string) (int, bool) {
	for i := len(c.scopes) - 1; i >= 0; i-- {
		sc := c.scopes[i]
		for j := len(sc.aliases) - 1; j >= 0; j-- {
			if sc.aliases[j].name == name {
				return sc.aliases[j].slot, true
			}
		}
	}
	return 0, false
}

// exprMode says what an expression may contain where it appears.
type exprMode struct {
	aggs  bool        // aggregates allowed (SELECT list)
	inAgg bool        // inside an aggregate's arguments
	stmt  *SelectStmt // the statement whose aggregates these are
}

// checkStmt checks s, whose aliases start at slot base. top is true for the
// outermost query (its first FROM source names the container). It returns
// c.maxSlots grows to cover every slot used.
func (c *checker) checkStmt(s *SelectStmt, base int, top bool) {
	sc := &scope{stmt: s, next: base}
	s.baseSlot = base
	c.scopes = append(c.scopes, sc)
	defer func() { c.scopes = c.scopes[:len(c.scopes)-1] }()
	sc.next = base + len(s.From)
	if sc.next > c.maxSlots {
		c.maxSlots = sc.next
	}
	none := exprMode{}

	if s.Top != nil {
		c.checkExpr(s.Top, none)
	}
	for i, src := range s.From {
		if i > 0 {
			if c.joins++; c.joins == MaxJoins+1 {
				c.limit(src.At, "The SQL query exceeded the maximum number of joins. The allowed limit is "+strconv.Itoa(MaxJoins)+".")
			}
		}
		if i == 0 && top {
			c.checkContainerSource(src)
		} else {
			c.checkExpr(src.Expr, none)
		}
		if src.Alias == "" && !src.In {
			src.Alias = inferredName(src.Expr)
		}
		if src.Alias != "" {
			for _, a := range sc.aliases {
				if a.name == src.Alias {
					c.error(src.AliasPos, "duplicate alias '"+src.Alias+"'")
				}
			}
		}
		src.slot = base + i
		sc.aliases = append(sc.aliases, alias{name: src.Alias, slot: src.slot})
	}
	if s.Where != nil {
		c.checkExpr(s.Where, none)
	}
	for _, g := range s.GroupBy {
		c.checkExpr(g, none)
	}
	for i := range s.OrderBy {
		o := &s.OrderBy[i]
		c.checkExpr(o.Expr, none)
		call, isCall := o.Expr.(*CallExpr)
		if isCall && !o.Explicit && call.fn != nil && call.fn.name == "VectorDistance" {
			call.vectorRank = true // most similar first
		}
		// The service orders by a document path, or ranks by
		// VectorDistance or RANK, and refuses any other expression,
		// within a partition too (code 2206; the .NET SDK's
		// QueryPlanBaselineTests.Negative, "Unsupported Order By", and
		// dotnet/efcore#16150 for a single partition).
		ranking := isCall && call.fn != nil && rankingFunctions[call.fn.name]
		if top && !o.Rank && !ranking && !isDocumentPath(o.Expr) {
			c.error(o.Expr.Pos(), "Unsupported ORDER BY clause. ORDER BY item expression could not be mapped to a document path.")
		}
	}
	if s.Offset != nil {
		c.checkExpr(s.Offset, none)
	}
	if s.Limit != nil {
		c.checkExpr(s.Limit, none)
	}
	sel := exprMode{aggs: true, stmt: s}
	for i := range s.Items {
		c.checkExpr(s.Items[i].Expr, sel)
	}

	// SELECT *.
	if s.Star {
		switch {
		case len(s.From) == 0:
			c.error(s.At, "'SELECT *' is not valid if the FROM clause is omitted")
		case len(s.From) > 1:
			c.error(s.At, "'SELECT *' is only valid with a single input set")
		case len(s.GroupBy) > 0:
			c.error(s.At, "'SELECT *' is not valid with GROUP BY")
		}
		if top && len(s.From) == 1 && !s.From[0].In && !s.Distinct {
			if id, ok := s.From[0].Expr.(*IdentExpr); ok && id.slot == rootSlot {
				s.rawStar = true
			}
		}
	}

	// Output names.
	if !s.Value && !s.Star {
		seen := map[string]bool{}
		n := 0
		for i := range s.Items {
			it := &s.Items[i]
			switch {
			case it.Alias != "":
				it.Name = it.Alias
			default:
				it.Name = inferredName(it.Expr)
				if it.Name == "" {
					n++
					it.Name = "$" + strconv.Itoa(n)
				}
			}
			if seen[it.Name] {
				pos := it.AliasPos
				if it.Alias == "" {
					pos = it.Expr.Pos()
				}
				c.error(pos, "duplicate property name '"+it.Name+"' in the SELECT list")
			}
			seen[it.Name] = true
		}
	}

	// Aggregation rules.
	if len(s.GroupBy) > 0 {
		for _, g := range s.GroupBy {
			if containsSubquery(g) {
				c.error(g.Pos(), "GROUP BY does not allow subqueries")
			}
		}
		for i := range s.Items {
			s.Items[i].Expr = c.groupRewrite(s, s.Items[i].Expr)
		}
	} else if len(s.aggs) > 0 {
		for i := range s.Items {
			c.requireAggregated(s.Items[i].Expr)
		}
	}
	// An ORDER BY in a query that aggregates without GROUP BY orders
	// its one row: the service takes it (QueryPlanBaselineTests.
	// Aggregates, "Aggregate With JOIN", plans it with no ordering), and
	// so does Ebb, which ignores it.
	if len(s.OrderBy) > 0 && len(s.GroupBy) > 0 {
		c.error(s.OrderBy[0].Expr.Pos(), "ORDER BY is not supported together with GROUP BY")
	}

}

// checkContainerSource checks the first FROM source of the outermost query:
// a path whose root identifier is the container (any name, or ROOT).
func (c *checker) checkContainerSource(src *FromSource) {
	e := src.Expr
	for {
		switch x := e.(type) {
		case *IdentExpr:
			x.slot = rootSlot
			return
		case *PropertyExpr:
			e = x.X
			continue
		case *IndexExpr:
			c.checkExpr(x.Index, exprMode{})
			e = x.X
			continue
		case *SubqueryExpr:
			c.error(x.At, "a subquery in the FROM clause of the outermost query is not supported")
			return
		default:
			c.error(e.Pos(), "the FROM clause must name the container or a path in it")
			return
		}
	}
}

// inferredName is the output name of an unaliased projection: the last
// property name of a path (c.a.b → "b", c["x y"] → "x y", c → "c"), or ""
// for anything else.
func inferredName(e Expr) string {
	switch x := e.(type) {
	case *IdentExpr:
		return x.Name
	case *PropertyExpr:
		return x.Name
	case *IndexExpr:
		if lit, ok := x.Index.(*LiteralExpr); ok && lit.Val.kind == String {
			return lit.Val.str
		}
	case *groupRefExpr:
		return inferredName(x.X)
	}
	return ""
}

func (c *checker) checkExprs(list []Expr, m exprMode) {
	for _, e := range list {
		c.checkExpr(e, m)
	}
}

func (c *checker) checkExpr(e Expr, m exprMode) {
	switch x := e.(type) {
	case nil, *LiteralExpr:
	case *ParamExpr:
		slot, ok := c.params[x.Name]
		if !ok {
			slot = len(c.names)
			c.params[x.Name] = slot
			c.names = append(c.names, x.Name)
		}
		x.slot = slot
	case *IdentExpr:
		slot, ok := c.lookup(x.Name)
		if !ok {
			c.error(x.At, "identifier '"+x.Name+"' could not be resolved")
		}
		x.slot = slot
	case *PropertyExpr:
		c.checkExpr(x.X, m)
	case *IndexExpr:
		c.checkExpr(x.X, m)
		c.checkExpr(x.Index, m)
	case *UnaryExpr:
		c.checkExpr(x.X, m)
	case *BinaryExpr:
		c.checkExpr(x.X, m)
		c.checkExpr(x.Y, m)
	case *InExpr:
		if len(x.List) > MaxInItems {
			c.limit(x.At, "The SQL query exceeded the maximum number of items in an IN expression. The allowed limit is "+strconv.Itoa(MaxInItems)+"; this one has "+strconv.Itoa(len(x.List))+".")
		}
		c.checkExpr(x.X, m)
		c.checkExprs(x.List, m)
	case *BetweenExpr:
		c.checkExpr(x.X, m)
		c.checkExpr(x.Lo, m)
		c.checkExpr(x.Hi, m)
	case *LikeExpr:
		c.checkExpr(x.X, m)
		c.checkExpr(x.Pattern, m)
		c.checkExpr(x.Escape, m)
		x.like = nil
		if pat, ok := x.Pattern.(*LiteralExpr); ok && pat.Val.kind == String {
			esc := Value{}
			if x.Escape != nil {
				if el, ok := x.Escape.(*LiteralExpr); ok {
					esc = el.Val
				} else {
					break
				}
			}
			if esc.kind == Undefined || esc.kind == String {
				x.like = compileLike(pat.Val.str, esc)
			}
		}
	case *TernaryExpr:
		c.checkExpr(x.Cond, m)
		c.checkExpr(x.Then, m)
		c.checkExpr(x.Else, m)
	case *ObjectExpr:
		seen := map[string]bool{}
		for _, f := range x.Fields {
			if seen[f.Name] {
				c.error(f.At, "duplicate property name '"+f.Name+"' in object")
			}
			seen[f.Name] = true
			c.checkExpr(f.Value, m)
		}
	case *ArrayExpr:
		c.checkExprs(x.Elems, m)
	case *SubqueryExpr:
		// A subquery's aliases take the slots after its parent's; sibling
		// subqueries reuse the same slots, since one finishes before the
		// next starts.
		sc := c.scopes[len(c.scopes)-1]
		c.checkStmt(x.Query, sc.next, false)
	case *CallExpr:
		c.checkCall(x, m)
	case *groupRefExpr:
	}
}

func (c *checker) checkCall(x *CallExpr, m exprMode) {
	if x.Udf {
		if !slices.Contains(c.udfs, x.Name) {
			c.udfs = append(c.udfs, x.Name)
			c.udfsAt = append(c.udfsAt, x.At)
		}
		c.checkExprs(x.Args, m)
		return
	}
	fn := lookupBuiltin(x.Name)
	if fn == nil {
		c.error(x.At, "'"+x.Name+"' is not a recognized built-in function name")
		c.checkExprs(x.Args, m)
		return
	}
	x.fn = fn
	arityOK := true
	if n := len(x.Args); !fn.takes(n) {
		c.error(x.At, "the "+strings.ToUpper(x.Name)+" function requires "+fn.arity()+", found "+strconv.Itoa(n))
		arityOK = false
	}
	if fn.agg != aggNone {
		switch {
		case m.inAgg:
			c.error(x.At, "aggregate "+strings.ToUpper(x.Name)+" cannot be nested in another aggregate")
		case !m.aggs:
			c.error(x.At, "aggregate "+strings.ToUpper(x.Name)+" is only allowed in the SELECT list")
		default:
			x.agg = len(m.stmt.aggs)
			m.stmt.aggs = append(m.stmt.aggs, x)
		}
		inner := m
		inner.inAgg = true
		c.checkExprs(x.Args, inner)
		return
	}
	c.checkExprs(x.Args, m)
	if arityOK {
		fn.prepare(x)
	}
}

// requireAggregated reports alias references in e that are outside every
// aggregate (in a query that aggregates without GROUP BY).
func (c *checker) requireAggregated(e Expr) {
	walkExpr(e, func(x Expr) bool {
		switch y := x.(type) {
		case *CallExpr:
			if y.agg >= 0 {
				return false
			}
		case *SubqueryExpr:
			if refsOuter(y.Query) {
				c.error(y.At, "a subquery in the SELECT list of an aggregate query must not refer to the input")
			}
			return false
		case *PropertyExpr, *IndexExpr:
			if isPath(x) {
				c.error(x.Pos(), "property reference '"+formatExpr(x)+"' is invalid in the select list because it is not contained in an aggregate function or the GROUP BY clause")
				return false
			}
		case *IdentExpr:
			c.error(y.At, "reference to '"+y.Name+"' is invalid in the select list because it is not contained in an aggregate function or the GROUP BY clause")
			return false
		}
		return true
	})
}

// isPath reports whether e is a property path rooted at an alias (c.a.b,
// c["x"][0], c[c.i]).
func isPath(e Expr) bool { return walkPath(e, false) }

// isDocumentPath reports whether e names a place in a document: an
// alias, followed by properties and constant indexes.
func isDocumentPath(e Expr) bool { return walkPath(e, true) }

func walkPath(e Expr, constantIndexes bool) bool {
	for {
		switch x := e.(type) {
		case *IdentExpr:
			return true
		case *PropertyExpr:
			e = x.X
		case *IndexExpr:
			if _, ok := x.Index.(*LiteralExpr); constantIndexes && !ok {
				return false
			}
			e = x.X
		default:
			return false
		}
	}
}

// groupRewrite replaces the parts of a GROUP BY projection that equal a
// grouping expression by references to the group's key, and reports alias
// references left outside aggregates.
func (c *checker) groupRewrite(s *SelectStmt, e Expr) Expr {
	for i, g := range s.GroupBy {
		if sameExpr(e, g) {
			return &groupRefExpr{X: e, Index: i}
		}
	}
	switch x := e.(type) {
	case *CallExpr:
		if x.agg >= 0 {
			return e
		}
		for i := range x.Args {
			x.Args[i] = c.groupRewrite(s, x.Args[i])
		}
	case *IdentExpr:
		c.error(x.At, "reference to '"+x.Name+"' is invalid in the select list because it is not contained in an aggregate function or the GROUP BY clause")
	case *PropertyExpr:
		c.error(x.Pos(), "property reference '"+formatExpr(x)+"' is invalid in the select list because it is not contained in an aggregate function or the GROUP BY clause")
	case *IndexExpr:
		c.error(x.Pos(), "property reference '"+formatExpr(x)+"' is invalid in the select list because it is not contained in an aggregate function or the GROUP BY clause")
	case *UnaryExpr:
		x.X = c.groupRewrite(s, x.X)
	case *BinaryExpr:
		x.X = c.groupRewrite(s, x.X)
		x.Y = c.groupRewrite(s, x.Y)
	case *InExpr:
		x.X = c.groupRewrite(s, x.X)
		for i := range x.List {
			x.List[i] = c.groupRewrite(s, x.List[i])
		}
	case *BetweenExpr:
		x.X = c.groupRewrite(s, x.X)
		x.Lo = c.groupRewrite(s, x.Lo)
		x.Hi = c.groupRewrite(s, x.Hi)
	case *LikeExpr:
		x.X = c.groupRewrite(s, x.X)
		x.Pattern = c.groupRewrite(s, x.Pattern)
		if x.Escape != nil {
			x.Escape = c.groupRewrite(s, x.Escape)
		}
	case *TernaryExpr:
		x.Cond = c.groupRewrite(s, x.Cond)
		x.Then = c.groupRewrite(s, x.Then)
		x.Else = c.groupRewrite(s, x.Else)
	case *ObjectExpr:
		for i := range x.Fields {
			x.Fields[i].Value = c.groupRewrite(s, x.Fields[i].Value)
		}
	case *ArrayExpr:
		for i := range x.Elems {
			x.Elems[i] = c.groupRewrite(s, x.Elems[i])
		}
	case *SubqueryExpr:
		if refsOuter(x.Query) {
			c.error(x.At, "a subquery in the SELECT list of a GROUP BY query must not refer to the input")
		}
	}
	return e
}

// refsOuter reports whether a subquery refers to aliases outside itself.
func refsOuter(s *SelectStmt) bool {
	found := false
	base := s.baseSlot
	var visit func(s *SelectStmt)
	visit = func(s *SelectStmt) {
		walkStmt(s, func(x Expr) bool {
			switch y := x.(type) {
			case *IdentExpr:
				if y.slot == rootSlot || y.slot < base {
					found = true
				}
			case *SubqueryExpr:
				visit(y.Query)
				return false
			}
			return !found
		})
	}
	visit(s)
	return found
}

func containsSubquery(e Expr) bool {
	found := false
	walkExpr(e, func(x Expr) bool {
		if _, ok := x.(*SubqueryExpr); ok {
			found = true
		}
		return !found
	})
	return found
}

// walkExpr calls f for e and, while f returns true, for its children. It
// does not descend into subqueries (f sees the *SubqueryExpr).
func walkExpr(e Expr, f func(Expr) bool) {
	if e == nil || !f(e) {
		return
	}
	switch x := e.(type) {
	case *PropertyExpr:
		walkExpr(x.X, f)
	case *IndexExpr:
		walkExpr(x.X, f)
		walkExpr(x.Index, f)
	case *UnaryExpr:
		walkExpr(x.X, f)
	case *BinaryExpr:
		walkExpr(x.X, f)
		walkExpr(x.Y, f)
	case *InExpr:
		walkExpr(x.X, f)
		for _, y := range x.List {
			walkExpr(y, f)
		}
	case *BetweenExpr:
		walkExpr(x.X, f)
		walkExpr(x.Lo, f)
		walkExpr(x.Hi, f)
	case *LikeExpr:
		walkExpr(x.X, f)
		walkExpr(x.Pattern, f)
		walkExpr(x.Escape, f)
	case *TernaryExpr:
		walkExpr(x.Cond, f)
		walkExpr(x.Then, f)
		walkExpr(x.Else, f)
	case *CallExpr:
		for _, y := range x.Args {
			walkExpr(y, f)
		}
	case *ObjectExpr:
		for _, fl := range x.Fields {
			walkExpr(fl.Value, f)
		}
	case *ArrayExpr:
		for _, y := range x.Elems {
			walkExpr(y, f)
		}
	case *groupRefExpr:
		walkExpr(x.X, f)
	}
}

// walkStmt calls walkExpr on every expression of s (not nested statements).
func walkStmt(s *SelectStmt, f func(Expr) bool) { walkStmtFrom(s, 0, f) }

// walkDeep is walkStmt that also walks the statements of subqueries
// (f still sees each *SubqueryExpr first).
func walkDeep(s *SelectStmt, f func(Expr) bool) {
	walkStmt(s, func(e Expr) bool {
		if !f(e) {
			return false
		}
		if sq, ok := e.(*SubqueryExpr); ok {
			walkDeep(sq.Query, f)
			return false
		}
		return true
	})
}

// walkStmtFrom is walkStmt leaving out the FROM and JOIN sources before
// index from.
func walkStmtFrom(s *SelectStmt, from int, f func(Expr) bool) {
	walkExpr(s.Top, f)
	for _, it := range s.Items {
		walkExpr(it.Expr, f)
	}
	for _, src := range s.From[min(from, len(s.From)):] {
		walkExpr(src.Expr, f)
	}
	walkExpr(s.Where, f)
	for _, g := range s.GroupBy {
		walkExpr(g, f)
	}
	for _, o := range s.OrderBy {
		walkExpr(o.Expr, f)
	}
	walkExpr(s.Offset, f)
	walkExpr(s.Limit, f)
}

// sameExpr reports whether two expressions are written the same (up to
// keyword and function-name case, white space and quote style).
func sameExpr(a, b Expr) bool {
	return formatExpr(a) == formatExpr(b)
}

// rankingFunctions are the functions an ORDER BY may rank by instead of
// a document path: VectorDistance, and the scores of the component
// queries of a hybrid search's plan (hybrid.go), which the SDKs send
// back to each range.
var rankingFunctions = map[string]bool{"VectorDistance": true, "_FullTextScore": true, "_VectorScore": true}
