package query

import "strings"

// Index hints. The engine keeps secondary indexes on scalar paths; to
// use one it needs to know which documents a query could possibly
// return. IndexHints answers that from the WHERE clause alone: each hint
// is one top-level AND term that only documents with a certain value at
// a certain path can satisfy. A document the hint rules out cannot
// produce a row, so reading only the documents an index lists for one
// hint gives the same rows as reading them all: the executor still
// evaluates the whole WHERE on every document it is given.
//
// A term is sargable when one side is a property path from the root
// alias (c.a.b, c["x y"]) of a query whose FROM is the container itself,
// and the other side is a constant (a literal or a parameter) that is a
// JSON scalar: null, a boolean, a number or a string. Comparisons in
// Cosmos DB are undefined across types, so c.a > 5 holds only for numbers
// and c.a < "m" only for strings: a range hint always stays within the
// kind of its bounds.

// HintOp is the kind of an IndexHint.
type HintOp uint8

const (
	// HintEq: the value at Path equals Values[0].
	HintEq HintOp = iota + 1
	// HintIn: the value at Path equals one of Values.
	HintIn
	// HintRange: the value at Path lies between Lo and Hi, both of the
	// same kind; an undefined bound is open.
	HintRange
	// HintPrefix: the value at Path is a string starting with Prefix.
	HintPrefix
	// HintDefined: Path has a value (of any type, arrays and objects
	// included).
	HintDefined
)

func (op HintOp) String() string {
	switch op {
	case HintEq:
		return "eq"
	case HintIn:
		return "in"
	case HintRange:
		return "range"
	case HintPrefix:
		return "prefix"
	case HintDefined:
		return "defined"
	}
	return "hint?"
}

// IndexHint is one sargable conjunct of a query's WHERE.
type IndexHint struct {
	// Path is the property names from the document root: c.a["b c"] is
	// ["a", "b c"].
	Path []string
	// Elem says the hint is about the elements of the array at Path
	// (ARRAY_CONTAINS(c.tags, "x") is HintEq with Elem set): a document
	// qualifies if any element does.
	Elem bool
	Op   HintOp
	// Values are the scalars of HintEq (one) and HintIn (one or more,
	// duplicates removed).
	Values []Value
	// Lo and Hi bound a HintRange; at least one is defined, and when both
	// are they have the same kind.
	Lo, Hi         Value
	LoIncl, HiIncl bool
	Prefix         string
}

// Kind returns the kind of value a HintRange ranges over.
func (h IndexHint) Kind() Kind {
	if h.Lo.kind != Undefined {
		return h.Lo.kind
	}
	return h.Hi.kind
}

// String renders a hint for tests and logs: "/a/b = 1", "/tags/[] = "x"".
func (h IndexHint) String() string {
	var b strings.Builder
	for _, p := range h.Path {
		b.WriteByte('/')
		b.WriteString(p)
	}
	if h.Elem {
		b.WriteString("/[]")
	}
	switch h.Op {
	case HintEq:
		b.WriteString(" = " + h.Values[0].JSON())
	case HintIn:
		b.WriteString(" IN (")
		for i, v := range h.Values {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(v.JSON())
		}
		b.WriteString(")")
	case HintRange:
		if h.Lo.kind != Undefined {
			op := " > "
			if h.LoIncl {
				op = " >= "
			}
			b.WriteString(op + h.Lo.JSON())
		}
		if h.Hi.kind != Undefined {
			op := " < "
			if h.HiIncl {
				op = " <= "
			}
			b.WriteString(op + h.Hi.JSON())
		}
	case HintPrefix:
		b.WriteString(" STARTSWITH " + StringValue(h.Prefix).JSON())
	case HintDefined:
		b.WriteString(" IS_DEFINED")
	}
	return b.String()
}

// IndexHints returns the sargable top-level AND terms of the plan's
// WHERE, in the order they are written. It returns nil when the query
// has no WHERE, reads from something other than the whole document
// (FROM c.children ch, FROM x IN c.arr), or has no sargable term.
func (p *Plan) IndexHints() []IndexHint {
	s := p.q.stmt
	if s.Where == nil || len(s.From) == 0 {
		return nil
	}
	root := s.From[0]
	if root.In {
		return nil
	}
	if id, ok := root.Expr.(*IdentExpr); !ok || id.slot != rootSlot {
		return nil
	}
	hc := hintCtx{c: &evalCtx{params: p.params}, slot: root.slot}
	var out []IndexHint
	for _, t := range conjuncts(s.Where, nil) {
		if h, ok := hc.hint(t); ok {
			out = append(out, h)
		}
	}
	return out
}

// conjuncts flattens the top-level ANDs of e.
func conjuncts(e Expr, out []Expr) []Expr {
	if b, ok := e.(*BinaryExpr); ok && b.Op == kAnd {
		return conjuncts(b.Y, conjuncts(b.X, out))
	}
	return append(out, e)
}

type hintCtx struct {
	c    *evalCtx // evaluates constants: parameters only, no document
	slot int      // the root alias's variable slot
}

// path returns the property names of a path from the root alias.
func (hc hintCtx) path(e Expr) ([]string, bool) {
	var rev []string
	for {
		switch x := e.(type) {
		case *IdentExpr:
			if x.slot != hc.slot || len(rev) == 0 {
				return nil, false
			}
			out := make([]string, len(rev))
			for i, n := range rev {
				out[len(rev)-1-i] = n
			}
			return out, true
		case *PropertyExpr:
			rev = append(rev, x.Name)
			e = x.X
		case *IndexExpr:
			name, ok := hc.constant(x.Index)
			if !ok || name.kind != String {
				return nil, false
			}
			rev = append(rev, name.str)
			e = x.X
		default:
			return nil, false
		}
	}
}

// constant evaluates a literal or parameter.
func (hc hintCtx) constant(e Expr) (Value, bool) {
	switch e.(type) {
	case *LiteralExpr, *ParamExpr:
		return hc.c.eval(e), true
	}
	return Value{}, false
}

// scalar evaluates a constant that is a JSON scalar.
func (hc hintCtx) scalar(e Expr) (Value, bool) {
	v, ok := hc.constant(e)
	if !ok {
		return Value{}, false
	}
	switch v.kind {
	case Null, Bool, Number, String:
		if v.kind == Number && v.num == 0 {
			v = NumberValue(0) // -0 = 0
		}
		return v, true
	}
	return Value{}, false
}

func (hc hintCtx) hint(e Expr) (IndexHint, bool) {
	switch x := e.(type) {
	case *BinaryExpr:
		return hc.comparison(x)
	case *InExpr:
		if x.Not {
			break
		}
		path, ok := hc.path(x.X)
		if !ok {
			break
		}
		var vals []Value
		// Equal values have equal keys (appendKey), so a set of keys
		// drops duplicates in time linear in the list.
		seen := make(map[string]struct{}, len(x.List))
		var key []byte
		for _, y := range x.List {
			v, ok := hc.scalar(y)
			if !ok {
				return IndexHint{}, false
			}
			key = appendKey(key[:0], v)
			if _, dup := seen[string(key)]; !dup {
				seen[string(key)] = struct{}{}
				vals = append(vals, v)
			}
		}
		if len(vals) == 1 {
			return IndexHint{Path: path, Op: HintEq, Values: vals}, true
		}
		return IndexHint{Path: path, Op: HintIn, Values: vals}, len(vals) > 0
	case *BetweenExpr:
		if x.Not {
			break
		}
		path, ok := hc.path(x.X)
		if !ok {
			break
		}
		lo, ok1 := hc.scalar(x.Lo)
		hi, ok2 := hc.scalar(x.Hi)
		if !ok1 || !ok2 || lo.kind != hi.kind {
			break
		}
		return IndexHint{Path: path, Op: HintRange, Lo: lo, LoIncl: true, Hi: hi, HiIncl: true}, true
	case *CallExpr:
		return hc.call(x)
	}
	return IndexHint{}, false
}

func (hc hintCtx) comparison(x *BinaryExpr) (IndexHint, bool) {
	op := x.Op
	switch op {
	case tEq, tLt, tLe, tGt, tGe:
	default:
		return IndexHint{}, false
	}
	path, ok := hc.path(x.X)
	other := x.Y
	if !ok {
		if path, ok = hc.path(x.Y); !ok {
			return IndexHint{}, false
		}
		other = x.X
		// 5 < c.a is c.a > 5.
		switch op {
		case tLt:
			op = tGt
		case tLe:
			op = tGe
		case tGt:
			op = tLt
		case tGe:
			op = tLe
		}
	}
	v, ok := hc.scalar(other)
	if !ok {
		return IndexHint{}, false
	}
	h := IndexHint{Path: path, Op: HintRange}
	switch op {
	case tEq:
		h.Op, h.Values = HintEq, []Value{v}
	case tLt:
		h.Hi = v
	case tLe:
		h.Hi, h.HiIncl = v, true
	case tGt:
		h.Lo = v
	case tGe:
		h.Lo, h.LoIncl = v, true
	}
	return h, true
}

func (hc hintCtx) call(x *CallExpr) (IndexHint, bool) {
	if x.fn == nil || len(x.Args) == 0 {
		return IndexHint{}, false
	}
	path, ok := hc.path(x.Args[0])
	if !ok {
		return IndexHint{}, false
	}
	// The optional last argument of STARTSWITH and ARRAY_CONTAINS must
	// be a constant false (case-sensitive, whole-element match).
	plain := func() bool {
		if len(x.Args) < 3 {
			return true
		}
		v, ok := hc.constant(x.Args[2])
		return ok && v.kind == Bool && v.num == 0
	}
	switch x.fn.name {
	case "IS_DEFINED":
		return IndexHint{Path: path, Op: HintDefined}, true
	case "STARTSWITH":
		v, ok := hc.constant(x.Args[1])
		if !ok || v.kind != String || !plain() {
			break
		}
		return IndexHint{Path: path, Op: HintPrefix, Prefix: v.str}, true
	case "ARRAY_CONTAINS":
		v, ok := hc.scalar(x.Args[1])
		if !ok || !plain() {
			break
		}
		return IndexHint{Path: path, Elem: true, Op: HintEq, Values: []Value{v}}, true
	}
	return IndexHint{}, false
}
