package query

import (
	"strconv"
	"strings"
)

// Computed properties (computed.go): a container may define up to
// MaxComputedProperties top-level properties whose value is a query over
// the item, "SELECT VALUE LOWER(c.name) FROM c". They are not stored in
// the item; a query that reads c.<name> (or c["<name>"]) gets the value
// of the definition's expression over the item instead of a stored
// member of that name, and SELECT *, SELECT c and everything that reads
// the stored item (point reads, the feeds) do not see them. See
// "Computed properties in Azure Cosmos DB for NoSQL",
// learn.microsoft.com/azure/cosmos-db/nosql/query/computed-properties
// (MicrosoftDocs/azure-databases-docs, articles/cosmos-db/nosql/query/
// computed-properties.md), for the rules CompileComputed enforces.

// MaxComputedProperties is the most computed properties a container may
// have: "Every container can have a maximum of 20 computed properties"
// (computed-properties.md, "What is a computed property?").
const MaxComputedProperties = 20

// ComputedDef is one computed property as a container defines it.
type ComputedDef struct {
	Name  string
	Query string
}

// Computed is a container's computed properties, compiled. It is
// immutable and safe to share.
type Computed struct {
	props  []computedProp // in definition order
	byName map[string]int // index into props
}

type computedProp struct {
	def ComputedDef
	// expr is the SELECT VALUE expression, its alias bound to the
	// document (rootSlot) and its member accesses never resolving
	// computed properties (see CompileComputed).
	expr Expr
	// fields are the top-level members of the item expr reads, unless
	// whole (it uses the item as a value).
	fields []string
	whole  bool
}

// ComputedError is a computed property definition CompileComputed
// refuses.
type ComputedError struct {
	Name string // the property's name, "" when the problem is the list
	Msg  string
}

func (e *ComputedError) Error() string { return e.Msg }

// nondeterministic are the functions whose value does not depend on the
// item alone, which a computed property's query may not call:
// "Queries can't use nondeterministic Scalar expressions. Examples of
// nondeterministic scalar expressions are: GetCurrentDateTime,
// GetCurrentTimeStamp, GetCurrentTicks, and RAND"
// (computed-properties.md, "Query constraints"). The *Static variants,
// NOW and AGO read the same clock.
var nondeterministic = map[string]bool{
	"GETCURRENTDATETIME": true, "GETCURRENTDATETIMESTATIC": true,
	"GETCURRENTTIMESTAMP": true, "GETCURRENTTIMESTAMPSTATIC": true,
	"GETCURRENTTICKS": true, "GETCURRENTTICKSSTATIC": true,
	"NOW": true, "AGO": true,
	"RAND": true,
}

// CompileComputed checks and compiles a container's computed property
// definitions. It refuses, as the service does (computed-properties.md,
// "Name constraints" and "Query constraints"): more than
// MaxComputedProperties; an empty or repeated name (names are
// case-sensitive, as property names are); a query that is not
// "SELECT VALUE <expression> FROM <alias>" over the item itself (FROM c,
// FROM root c, FROM Container c), or that uses JOIN, WHERE, GROUP BY,
// ORDER BY, TOP, DISTINCT, OFFSET LIMIT, a subquery (EXISTS and ARRAY
// included), an aggregate, a spatial function, a nondeterministic
// function, a user-defined function or a parameter; and a query that
// reads another computed property (or its own name), since "computed
// properties ... can't ... rely on other computed properties". Reserved
// names (id and the system properties) are the caller's to refuse: they
// are the item's, not the query language's. A nil or empty defs gives
// nil.
func CompileComputed(defs []ComputedDef) (*Computed, error) {
	if len(defs) == 0 {
		return nil, nil
	}
	if len(defs) > MaxComputedProperties {
		return nil, &ComputedError{Msg: "The container defines " + strconv.Itoa(len(defs)) + " computed properties; a container can have at most " + strconv.Itoa(MaxComputedProperties) + "."}
	}
	cs := &Computed{byName: make(map[string]int, len(defs))}
	for i, d := range defs {
		if d.Name == "" {
			return nil, &ComputedError{Msg: "Computed property " + strconv.Itoa(i+1) + " has an empty name."}
		}
		if _, dup := cs.byName[d.Name]; dup {
			return nil, &ComputedError{Name: d.Name, Msg: "The computed property name '" + d.Name + "' is used more than once; computed property names must be unique."}
		}
		cs.byName[d.Name] = i
	}
	for _, d := range defs {
		p, err := compileComputedProp(d, cs.byName)
		if err != nil {
			return nil, err
		}
		cs.props = append(cs.props, p)
	}
	return cs, nil
}

func compileComputedProp(d ComputedDef, names map[string]int) (computedProp, error) {
	fail := func(err error) (computedProp, error) {
		return computedProp{}, &ComputedError{Name: d.Name, Msg: "The query of computed property '" + d.Name + "' is invalid: " + err.Error()}
	}
	if strings.TrimSpace(d.Query) == "" {
		return computedProp{}, &ComputedError{Name: d.Name, Msg: "The computed property '" + d.Name + "' has an empty query; it needs one of the form SELECT VALUE <expression> FROM c."}
	}
	q, err := Parse(d.Query)
	if err != nil {
		return fail(err)
	}
	s := q.stmt
	var errs errorList
	refuse := func(pos int, what string) {
		if len(errs.errs) < MaxErrors {
			errs.add(SemanticError, d.Query, pos, "a computed property's query cannot use "+what)
		}
	}
	switch {
	case s.Star || !s.Value:
		errs.add(SemanticError, d.Query, s.At, "a computed property's query must have the form SELECT VALUE <expression> FROM c")
	case len(s.From) == 0:
		errs.add(SemanticError, d.Query, s.At, "a computed property's query needs a FROM clause naming the item (FROM c)")
	}
	if len(s.From) > 0 {
		src := s.From[0]
		if id, ok := src.Expr.(*IdentExpr); !ok || id.slot != rootSlot || src.In {
			errs.add(SemanticError, d.Query, src.At, "a computed property's query must read from the item itself (FROM c, FROM root c), not from a path in it")
		}
		for _, j := range s.From[1:] {
			refuse(j.At, "JOIN")
		}
	}
	if s.Distinct {
		refuse(s.At, "DISTINCT")
	}
	if s.Top != nil {
		refuse(s.Top.Pos(), "TOP")
	}
	if s.Where != nil {
		refuse(s.Where.Pos(), "WHERE")
	}
	if len(s.GroupBy) > 0 {
		refuse(s.GroupBy[0].Pos(), "GROUP BY")
	}
	if len(s.OrderBy) > 0 {
		refuse(s.OrderBy[0].Expr.Pos(), "ORDER BY")
	}
	if s.Offset != nil {
		refuse(s.Offset.Pos(), "OFFSET LIMIT")
	}
	docSlot := rootSlot
	if len(s.From) > 0 {
		docSlot = s.From[0].slot
	}
	for _, it := range s.Items {
		walkExpr(it.Expr, func(x Expr) bool {
			switch y := x.(type) {
			case *SubqueryExpr:
				refuse(y.At, "a subquery")
				return false
			case *ParamExpr:
				refuse(y.At, "a parameter ("+y.Name+")")
			case *CallExpr:
				switch {
				case y.Udf:
					refuse(y.At, "a user-defined function (udf."+y.Name+")")
				case y.fn == nil:
				case y.fn.agg != aggNone:
					refuse(y.At, "the aggregate function "+y.fn.name)
				case strings.HasPrefix(y.fn.name, "ST_"):
					refuse(y.At, "the spatial function "+y.fn.name)
				case nondeterministic[strings.ToUpper(y.fn.name)]:
					refuse(y.At, "the nondeterministic function "+y.fn.name)
				}
			case *PropertyExpr:
				if isAlias(y.X, docSlot) {
					if _, ok := names[y.Name]; ok {
						refuse(y.Pos(), "another computed property ('"+y.Name+"')")
					}
				}
			case *IndexExpr:
				if lit, ok := y.Index.(*LiteralExpr); ok && lit.Val.kind == String && isAlias(y.X, docSlot) {
					if _, ok := names[lit.Val.str]; ok {
						refuse(y.Pos(), "another computed property ('"+lit.Val.str+"')")
					}
				}
			}
			return true
		})
	}
	if err := errs.err(); err != nil {
		return fail(err)
	}
	expr := s.Items[0].Expr
	// The expression reads the stored item: its alias is the document,
	// and none of its accesses resolves a computed property (a name
	// computed at run time, c[CONCAT("cp_", c.k)], included), so no
	// evaluation can reach another definition, or itself.
	walkExpr(expr, func(x Expr) bool {
		switch y := x.(type) {
		case *IdentExpr:
			if y.slot == docSlot {
				y.slot = rootSlot
			}
		case *PropertyExpr:
			y.doc = false
		case *IndexExpr:
			y.doc = false
		}
		return true
	})
	return computedProp{def: d, expr: expr, fields: q.fields, whole: q.wholeDoc}, nil
}

// isAlias reports whether e is the alias in the given slot.
func isAlias(e Expr, slot int) bool {
	id, ok := e.(*IdentExpr)
	return ok && id.slot == slot
}

// Len returns the number of computed properties (0 for nil).
func (cs *Computed) Len() int {
	if cs == nil {
		return 0
	}
	return len(cs.props)
}

// Names returns the names, in definition order.
func (cs *Computed) Names() []string {
	if cs == nil {
		return nil
	}
	out := make([]string, len(cs.props))
	for i, p := range cs.props {
		out[i] = p.def.Name
	}
	return out
}

// Has reports whether name is a computed property.
func (cs *Computed) Has(name string) bool {
	if cs == nil {
		return false
	}
	_, ok := cs.byName[name]
	return ok
}

// Query returns the query text of computed property name.
func (cs *Computed) Query(name string) (string, bool) {
	if cs == nil {
		return "", false
	}
	i, ok := cs.byName[name]
	if !ok {
		return "", false
	}
	return cs.props[i].def.Query, true
}

// Subset returns the computed properties named (in the order of names),
// skipping names cs does not define; nil if none is left.
func (cs *Computed) Subset(names []string) *Computed {
	var out *Computed
	for _, n := range names {
		i, ok := cs.byName[n]
		if !ok {
			continue
		}
		if out == nil {
			out = &Computed{byName: map[string]int{}}
		}
		if _, dup := out.byName[n]; dup {
			continue
		}
		out.byName[n] = len(out.props)
		out.props = append(out.props, cs.props[i])
	}
	return out
}

// reads returns the top-level members of the item that the computed
// properties named read, whole if one uses the item as a value.
func (cs *Computed) reads(names []string) (fields []string, whole bool) {
	for _, n := range names {
		i, ok := cs.byName[n]
		if !ok {
			continue
		}
		p := cs.props[i]
		if p.whole {
			return nil, true
		}
		for _, f := range p.fields {
			if !containsString(fields, f) {
				fields = append(fields, f)
			}
		}
	}
	return fields, false
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Values evaluates every computed property of cs over doc, a stored item
// (valid JSON), decoding only the members they read: the values, in
// definition order, undefined where a property has none. The index uses
// it to index computed properties when an item is written.
func (cs *Computed) Values(doc []byte) ([]Value, error) {
	if cs == nil {
		return nil, nil
	}
	fields, whole := cs.reads(cs.Names())
	var v Value
	var err error
	if whole {
		v, err = ParseJSON(doc)
	} else {
		v, err = parseDocFields(doc, fields)
	}
	if err != nil {
		return nil, err
	}
	c := newEvalCtx(0, nil, Env{})
	c.doc = v
	out := make([]Value, len(cs.props))
	for i := range cs.props {
		out[i] = c.eval(cs.props[i].expr)
	}
	return out, nil
}

// computed returns the value of the current document's computed property
// name, ok false if the container has none of that name. Each is
// evaluated once per document, and counts as a unit of the page's work
// (meter.go) besides what its expression spends.
// REQUIRES: c.cps is not nil.
func (c *evalCtx) computed(name string) (v Value, ok bool) {
	i, ok := c.cps.byName[name]
	if !ok {
		return Value{}, false
	}
	bit := uint32(1) << i
	if c.cpHave&bit == 0 {
		c.m.spend(1)
		c.cpVals[i] = c.eval(c.cps.props[i].expr)
		c.cpHave |= bit
	}
	return c.cpVals[i], true
}
