package query

import (
	"errors"
	"math"
	"math/rand/v2"
	"regexp"
	"strings"
	"time"
)

// evalCtx is the state of one evaluation: variable slots for the aliases,
// the bound parameters, the current document, and scratch space. It is used
// by one goroutine.
type evalCtx struct {
	vars   []Value
	params []Value
	doc    Value // the current document, what the container name denotes
	env    *runEnv
	stack  []Value // function arguments

	// In the projection of an aggregate or GROUP BY statement: the results
	// of the statement's aggregates and the group's key values.
	aggVals   []Value
	groupVals []Value

	regexCache map[string]*regexp.Regexp
	likeCache  map[string]*likePattern
	rng        *rand.Rand

	// m bounds the work of a page (meter.go); a zero meter never halts.
	m meter
	// track is the statement whose place in its FROM/JOIN loops is kept
	// (the executor's top-level statement; nil for none): pos is the
	// index at each level of the combination being evaluated, resume,
	// if set, the combination to start from (see forEachRow), and steps
	// counts the combinations and loop iterations completed.
	track  *SelectStmt
	pos    []int
	resume []int
	steps  int64

	// cps are the container's computed properties when the query reads
	// one (nil otherwise, which costs the evaluator a nil check on the
	// item's member accesses); cpVals holds the current document's
	// values, cpHave which of them are computed (bit i for property i;
	// MaxComputedProperties fits). The executor clears cpHave when it
	// binds a document.
	cps    *Computed
	cpVals []Value
	cpHave uint32
}

// runEnv is the per-query view of Env: the instant every date function
// sees, computed once.
type runEnv struct {
	now       time.Time
	udfs      UDFs
	vectors   func(path string) (string, bool)
	fullText  func(path string) bool
	textStats func(path string) *TextStats
}

func newEvalCtx(nslots int, params []Value, env Env) *evalCtx {
	now := env.Now.UTC()
	return &evalCtx{
		vars:   make([]Value, nslots),
		params: params,
		env:    &runEnv{now: now, udfs: env.UDFs, vectors: env.Vectors, fullText: env.FullText, textStats: env.TextStats},
		stack:  make([]Value, 0, 16),
	}
}

func (c *evalCtx) random() float64 {
	if c.rng == nil {
		c.rng = rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	}
	return c.rng.Float64()
}

// eval evaluates an expression. It never fails: anything that does not
// make sense yields undefined, as in Cosmos DB.
func (c *evalCtx) eval(e Expr) Value {
	switch x := e.(type) {
	case *LiteralExpr:
		return x.Val
	case *IdentExpr:
		if x.slot == rootSlot {
			return c.doc
		}
		return c.vars[x.slot]
	case *PropertyExpr:
		if x.doc && c.cps != nil {
			if v, ok := c.computed(x.Name); ok {
				return v
			}
		}
		return c.eval(x.X).Get(x.Name)
	case *ParamExpr:
		if x.slot < len(c.params) {
			return c.params[x.slot]
		}
		return undefinedValue
	case *IndexExpr:
		idx := c.eval(x.Index)
		if x.doc && c.cps != nil && idx.kind == String {
			if v, ok := c.computed(idx.str); ok {
				return v
			}
		}
		return indexValue(c.eval(x.X), idx)
	case *BinaryExpr:
		return c.evalBinary(x)
	case *UnaryExpr:
		return evalUnary(x.Op, c.eval(x.X))
	case *CallExpr:
		return c.evalCall(x)
	case *InExpr:
		v := c.eval(x.X)
		if v.kind == Undefined {
			return undefinedValue
		}
		c.m.spend(inListCost(len(x.List)))
		found := false
		for _, y := range x.List {
			if Equal(v, c.eval(y)) {
				found = true
				break
			}
		}
		return BoolValue(found != x.Not)
	case *BetweenExpr:
		v := c.eval(x.X)
		r := and3(compareOp(tGe, v, c.eval(x.Lo)), compareOp(tLe, v, c.eval(x.Hi)))
		if x.Not {
			return evalUnary(kNot, r)
		}
		return r
	case *LikeExpr:
		return c.evalLike(x)
	case *TernaryExpr:
		if c.eval(x.Cond).IsTrue() {
			return c.eval(x.Then)
		}
		return c.eval(x.Else)
	case *ObjectExpr:
		o := newObjectCap(len(x.Fields))
		for _, f := range x.Fields {
			if v := c.eval(f.Value); v.kind != Undefined {
				o.addMember(f.Name, v)
			}
		}
		return o
	case *ArrayExpr:
		es := make([]Value, 0, len(x.Elems))
		for _, y := range x.Elems {
			if v := c.eval(y); v.kind != Undefined {
				es = append(es, v)
			}
		}
		return NewArray(es...)
	case *SubqueryExpr:
		return c.evalSubquery(x)
	case *groupRefExpr:
		return c.groupVals[x.Index]
	}
	return undefinedValue
}

// indexValue is base[idx]: a member for a string, an element for an
// integer.
func indexValue(base, idx Value) Value {
	switch idx.kind {
	case String:
		return base.Get(idx.str)
	case Number:
		if base.kind == Array && idx.num == math.Trunc(idx.num) && idx.num >= 0 && idx.num < float64(len(base.ref.elems)) {
			return base.ref.elems[int(idx.num)]
		}
	}
	return undefinedValue
}

// and3 and or3 are Cosmos's three-valued AND and OR: anything that is not
// a boolean counts as undefined.
func and3(a, b Value) Value {
	if (a.kind == Bool && a.num == 0) || (b.kind == Bool && b.num == 0) {
		return falseValue
	}
	if a.IsTrue() && b.IsTrue() {
		return trueValue
	}
	return undefinedValue
}

func or3(a, b Value) Value {
	if a.IsTrue() || b.IsTrue() {
		return trueValue
	}
	if a.kind == Bool && b.kind == Bool {
		return falseValue
	}
	return undefinedValue
}

func (c *evalCtx) evalBinary(x *BinaryExpr) Value {
	switch x.Op {
	case kAnd:
		l := c.eval(x.X)
		if l.kind == Bool && l.num == 0 {
			return falseValue
		}
		return and3(l, c.eval(x.Y))
	case kOr:
		l := c.eval(x.X)
		if l.IsTrue() {
			return trueValue
		}
		return or3(l, c.eval(x.Y))
	case tCoalesce:
		if l := c.eval(x.X); l.kind != Undefined {
			return l
		}
		return c.eval(x.Y)
	}
	return binaryOp(x.Op, c.eval(x.X), c.eval(x.Y))
}

// binaryOp applies a non-logical binary operator.
func binaryOp(op token, a, b Value) Value {
	switch op {
	case tEq, tNeq, tLt, tLe, tGt, tGe:
		return compareOp(op, a, b)
	case tConcat:
		if a.kind == String && b.kind == String {
			return StringValue(a.str + b.str)
		}
		return undefinedValue
	}
	if a.kind != Number || b.kind != Number {
		return undefinedValue
	}
	x, y := a.num, b.num
	switch op {
	case tPlus:
		return NumberValue(x + y)
	case tMinus:
		return NumberValue(x - y)
	case tStar:
		return NumberValue(x * y)
	case tSlash:
		return NumberValue(x / y)
	case tPercent:
		return NumberValue(math.Mod(x, y))
	case tAmp:
		return NumberValue(float64(toInt32(x) & toInt32(y)))
	case tPipe:
		return NumberValue(float64(toInt32(x) | toInt32(y)))
	case tCaret:
		return NumberValue(float64(toInt32(x) ^ toInt32(y)))
	case tShl:
		return NumberValue(float64(toInt32(x) << (uint32(toInt32(y)) & 31)))
	case tShr:
		return NumberValue(float64(toInt32(x) >> (uint32(toInt32(y)) & 31)))
	case tShrZ:
		return NumberValue(float64(uint32(toInt32(x)) >> (uint32(toInt32(y)) & 31)))
	}
	return undefinedValue
}

// toInt32 is JavaScript's ToInt32: truncate, then wrap modulo 2^32.
func toInt32(f float64) int32 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	f = math.Trunc(f)
	if f >= -2147483648 && f <= 2147483647 {
		return int32(f)
	}
	m := math.Mod(f, 4294967296)
	if m < 0 {
		m += 4294967296
	}
	return int32(uint32(m))
}

// compareOp compares two values of the same type. Comparing undefined, or
// values of different types, is undefined; arrays and objects support only
// = and !=.
func compareOp(op token, a, b Value) Value {
	if a.kind == Undefined || b.kind == Undefined || a.kind != b.kind {
		return undefinedValue
	}
	switch op {
	case tEq:
		return BoolValue(Equal(a, b))
	case tNeq:
		return BoolValue(!Equal(a, b))
	}
	if a.kind == Array || a.kind == Object {
		return undefinedValue
	}
	r := Compare(a, b)
	switch op {
	case tLt:
		return BoolValue(r < 0)
	case tLe:
		return BoolValue(r <= 0)
	case tGt:
		return BoolValue(r > 0)
	case tGe:
		return BoolValue(r >= 0)
	}
	return undefinedValue
}

func evalUnary(op token, v Value) Value {
	switch op {
	case kNot:
		if v.kind == Bool {
			return BoolValue(v.num == 0)
		}
	case tMinus:
		if v.kind == Number {
			return NumberValue(-v.num)
		}
	case tPlus:
		if v.kind == Number {
			return NumberValue(v.num)
		}
	case tTilde:
		if v.kind == Number {
			return NumberValue(float64(^toInt32(v.num)))
		}
	}
	return undefinedValue
}

func (c *evalCtx) evalCall(x *CallExpr) Value {
	if x.agg >= 0 {
		if x.agg < len(c.aggVals) {
			return c.aggVals[x.agg]
		}
		return undefinedValue
	}
	if x.Udf {
		return c.evalUDF(x)
	}
	fn := x.fn
	if fn == nil {
		return undefinedValue
	}
	base := len(c.stack)
	for _, a := range x.Args {
		c.stack = append(c.stack, c.eval(a))
	}
	v := fn.call(c, x, c.stack[base:])
	clear(c.stack[base:])
	c.stack = c.stack[:base]
	return v
}

// evalUDF calls a user-defined function. Its error halts evaluation,
// and the page fails with it.
func (c *evalCtx) evalUDF(x *CallExpr) Value {
	if c.m.halted() {
		return undefinedValue
	}
	base := len(c.stack)
	for _, a := range x.Args {
		c.stack = append(c.stack, c.eval(a))
	}
	var v Value
	var err error
	if c.env.udfs == nil {
		// Parse refuses udf calls where no UDFs are given: a bug.
		err = errors.New("query: udf." + x.Name + " called without UDFs")
	} else {
		v, err = c.env.udfs.Call(x.Name, c.stack[base:])
	}
	clear(c.stack[base:])
	c.stack = c.stack[:base]
	if err != nil {
		c.m.halt = err
		return undefinedValue
	}
	return v
}

func (c *evalCtx) evalLike(x *LikeExpr) Value {
	v := c.eval(x.X)
	if v.kind != String {
		return undefinedValue
	}
	lp := x.like
	if lp == nil {
		pat := c.eval(x.Pattern)
		if pat.kind != String {
			return undefinedValue
		}
		esc := Value{}
		if x.Escape != nil {
			esc = c.eval(x.Escape)
			if esc.kind != String {
				return undefinedValue
			}
		}
		key := pat.str + "\x00" + esc.str
		if lp = c.likeCache[key]; lp == nil {
			lp = compileLike(pat.str, esc)
			if c.likeCache == nil {
				c.likeCache = map[string]*likePattern{}
			}
			if len(c.likeCache) < 1000 {
				c.likeCache[key] = lp
			}
		}
	}
	if lp.bad {
		return undefinedValue
	}
	return BoolValue(lp.match(v.str) != x.Not)
}

// likePattern is a compiled LIKE pattern: % matches any run of characters,
// _ one character, [abc], [a-f] and [^a] a character class; the ESCAPE
// character makes the next character literal.
type likePattern struct {
	items []likeItem
	bad   bool // the escape was not a single character
	// prefix is set when the pattern is "literal%" (the common case).
	prefix    string
	isPrefix  bool
	isLiteral bool
}

type likeItem struct {
	kind   uint8 // 'l' literal, '%', '_', '['
	lit    rune
	neg    bool
	ranges []rune // pairs lo, hi
}

func compileLike(pat string, esc Value) *likePattern {
	lp := &likePattern{}
	var escape rune = -1
	if esc.kind == String {
		rs := []rune(esc.str)
		if len(rs) != 1 {
			lp.bad = true
			return lp
		}
		escape = rs[0]
	}
	rs := []rune(pat)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == escape && i+1 < len(rs):
			i++
			lp.items = append(lp.items, likeItem{kind: 'l', lit: rs[i]})
		case r == '%':
			if n := len(lp.items); n == 0 || lp.items[n-1].kind != '%' {
				lp.items = append(lp.items, likeItem{kind: '%'})
			}
		case r == '_':
			lp.items = append(lp.items, likeItem{kind: '_'})
		case r == '[':
			j := i + 1
			it := likeItem{kind: '['}
			if j < len(rs) && rs[j] == '^' {
				it.neg = true
				j++
			}
			start := j
			for j < len(rs) && (rs[j] != ']' || j == start) {
				lo := rs[j]
				if j+2 < len(rs) && rs[j+1] == '-' && rs[j+2] != ']' {
					it.ranges = append(it.ranges, lo, rs[j+2])
					j += 3
					continue
				}
				it.ranges = append(it.ranges, lo, lo)
				j++
			}
			if j >= len(rs) {
				// No closing bracket: '[' is literal.
				lp.items = append(lp.items, likeItem{kind: 'l', lit: '['})
				continue
			}
			lp.items = append(lp.items, it)
			i = j
		default:
			lp.items = append(lp.items, likeItem{kind: 'l', lit: r})
		}
	}
	// Fast paths.
	lits := 0
	for _, it := range lp.items {
		if it.kind == 'l' {
			lits++
		}
	}
	if lits == len(lp.items) {
		lp.isLiteral = true
		lp.prefix = litString(lp.items)
	} else if lits == len(lp.items)-1 && lp.items[len(lp.items)-1].kind == '%' {
		lp.isPrefix = true
		lp.prefix = litString(lp.items[:len(lp.items)-1])
	}
	return lp
}

func litString(items []likeItem) string {
	var b strings.Builder
	for _, it := range items {
		b.WriteRune(it.lit)
	}
	return b.String()
}

func (lp *likePattern) match(s string) bool {
	switch {
	case lp.isLiteral:
		return s == lp.prefix
	case lp.isPrefix:
		return strings.HasPrefix(s, lp.prefix)
	}
	return likeMatch(lp.items, []rune(s))
}

// likeMatch matches with backtracking only at the last '%' seen, which is
// linear in practice and never exponential.
func likeMatch(items []likeItem, s []rune) bool {
	i, j := 0, 0
	star, mark := -1, 0
	for j < len(s) {
		if i < len(items) && items[i].kind != '%' && items[i].matches(s[j]) {
			i++
			j++
			continue
		}
		if i < len(items) && items[i].kind == '%' {
			star, mark = i, j
			i++
			continue
		}
		if star >= 0 {
			i = star + 1
			mark++
			j = mark
			continue
		}
		return false
	}
	for i < len(items) && items[i].kind == '%' {
		i++
	}
	return i == len(items)
}

func (it *likeItem) matches(r rune) bool {
	switch it.kind {
	case 'l':
		return it.lit == r
	case '_':
		return true
	case '[':
		in := false
		for k := 0; k+1 < len(it.ranges); k += 2 {
			if r >= it.ranges[k] && r <= it.ranges[k+1] {
				in = true
				break
			}
		}
		return in != it.neg
	}
	return false
}
