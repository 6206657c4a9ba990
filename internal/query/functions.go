package query

import (
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// builtin is a system function. Argument-count errors are found by the
// checker; wrong argument types give undefined at run time, as in Cosmos.
type builtin struct {
	name    string // canonical spelling, used when printing
	minArgs int
	maxArgs int // -1: any number
	agg     aggKind
	call    func(c *evalCtx, x *CallExpr, a []Value) Value
	prep    func(x *CallExpr) // optional: precompute from constant arguments
}

func (b *builtin) prepare(x *CallExpr) {
	if b.prep != nil {
		b.prep(x)
	}
}

// arity describes the accepted argument counts for error messages.
func (b *builtin) arity() string {
	plural := func(n int) string {
		if n == 1 {
			return "1 argument"
		}
		return strconv.Itoa(n) + " arguments"
	}
	switch {
	case b.maxArgs < 0:
		return "at least " + plural(b.minArgs)
	case b.minArgs == b.maxArgs:
		return plural(b.minArgs)
	}
	return "between " + strconv.Itoa(b.minArgs) + " and " + plural(b.maxArgs)
}

var builtins = map[string]*builtin{}

func register(name string, min, max int, call func(c *evalCtx, x *CallExpr, a []Value) Value) *builtin {
	b := &builtin{name: name, minArgs: min, maxArgs: max, call: call}
	builtins[strings.ToUpper(name)] = b
	return b
}

// lookupBuiltin finds a system function; names are case-insensitive.
func lookupBuiltin(name string) *builtin {
	return builtins[strings.ToUpper(name)]
}

// Helpers for the common shapes.

func num1(f func(float64) float64) func(*evalCtx, *CallExpr, []Value) Value {
	return func(_ *evalCtx, _ *CallExpr, a []Value) Value {
		if a[0].kind != Number {
			return undefinedValue
		}
		return NumberValue(f(a[0].num))
	}
}

func num2(f func(x, y float64) float64) func(*evalCtx, *CallExpr, []Value) Value {
	return func(_ *evalCtx, _ *CallExpr, a []Value) Value {
		if a[0].kind != Number || a[1].kind != Number {
			return undefinedValue
		}
		return NumberValue(f(a[0].num, a[1].num))
	}
}

func is(k ...Kind) func(*evalCtx, *CallExpr, []Value) Value {
	return func(_ *evalCtx, _ *CallExpr, a []Value) Value {
		for _, kk := range k {
			if a[0].kind == kk {
				return trueValue
			}
		}
		return falseValue
	}
}

// intArg returns an integer-valued number argument (truncating is not
// done: 1.5 is not an integer).
func intArg(v Value) (int, bool) {
	if v.kind != Number || v.num != math.Trunc(v.num) || math.Abs(v.num) > 1<<52 {
		return 0, false
	}
	return int(v.num), true
}

// int64Arg is intArg over the whole 64-bit range, for the Int* functions.
func int64Arg(v Value) (int64, bool) {
	if v.kind != Number || v.num != math.Trunc(v.num) || v.num < -9.223372036854775808e18 || v.num >= 9.223372036854775808e18 {
		return 0, false
	}
	return int64(v.num), true
}

// truncArg accepts any number and truncates it, for positions and counts.
func truncArg(v Value) (int, bool) {
	if v.kind != Number {
		return 0, false
	}
	f := math.Trunc(v.num)
	if f > math.MaxInt32 {
		f = math.MaxInt32
	} else if f < math.MinInt32 {
		f = math.MinInt32
	}
	return int(f), true
}

// optBool reads an optional boolean argument (ignoreCase): absent is false,
// a non-boolean makes the call undefined.
func optBool(a []Value, i int) (b, ok bool) {
	if len(a) <= i {
		return false, true
	}
	if a[i].kind != Bool {
		return false, false
	}
	return a[i].num != 0, true
}

func init() {
	// Type checking.
	register("IS_ARRAY", 1, 1, is(Array))
	register("IS_BOOL", 1, 1, is(Bool))
	register("IS_DEFINED", 1, 1, is(Null, Bool, Number, String, Array, Object))
	register("IS_NULL", 1, 1, is(Null))
	register("IS_NUMBER", 1, 1, is(Number))
	register("IS_OBJECT", 1, 1, is(Object))
	register("IS_PRIMITIVE", 1, 1, is(Null, Bool, Number, String))
	register("IS_STRING", 1, 1, is(String))
	register("IS_INTEGER", 1, 1, func(_ *evalCtx, _ *CallExpr, a []Value) Value {
		_, ok := int64Arg(a[0])
		return BoolValue(ok)
	})
	register("IS_FINITE_NUMBER", 1, 1, func(_ *evalCtx, _ *CallExpr, a []Value) Value {
		return BoolValue(a[0].kind == Number && !math.IsInf(a[0].num, 0) && !math.IsNaN(a[0].num))
	})

	// Aggregates: evaluated by the executor, never called.
	for _, ag := range []struct {
		name string
		kind aggKind
	}{{"COUNT", aggCount}, {"SUM", aggSum}, {"AVG", aggAvg}, {"MIN", aggMin}, {"MAX", aggMax}, {"CountIf", aggCountIf}} {
		b := register(ag.name, 1, 1, nil)
		b.agg = ag.kind
	}

	registerStringFunctions()
	registerMathFunctions()
	registerArrayFunctions()
	registerDateFunctions()
	registerSpatialFunctions()
	registerOtherFunctions()
}

func registerOtherFunctions() {
	register("IIF", 3, 3, func(_ *evalCtx, _ *CallExpr, a []Value) Value {
		if a[0].IsTrue() {
			return a[1]
		}
		return a[2]
	})
	// DocumentId returns the "id" of the document (or any object) it is
	// given. Cosmos returns an internal identifier; Ebb's documents are
	// identified by id within their partition, so id is the useful answer.
	register("DocumentId", 1, 1, func(_ *evalCtx, _ *CallExpr, a []Value) Value {
		if id := a[0].Get("id"); id.kind == String {
			return id
		}
		return undefinedValue
	})
	register("CHOOSE", 2, -1, func(_ *evalCtx, _ *CallExpr, a []Value) Value {
		i, ok := intArg(a[0])
		if !ok || i < 1 || i >= len(a) {
			return undefinedValue
		}
		return a[i]
	})
	register("ObjectToArray", 1, 3, func(_ *evalCtx, _ *CallExpr, a []Value) Value {
		if a[0].kind != Object {
			return undefinedValue
		}
		kn, vn := "k", "v"
		if len(a) > 1 {
			if a[1].kind != String {
				return undefinedValue
			}
			kn = a[1].str
		}
		if len(a) > 2 {
			if a[2].kind != String {
				return undefinedValue
			}
			vn = a[2].str
		}
		out := make([]Value, 0, a[0].Len())
		for _, m := range a[0].Members() {
			if m.Value.kind == Undefined {
				continue
			}
			o := newObjectCap(2)
			o.addMember(kn, StringValue(m.Name))
			if vn != kn {
				o.addMember(vn, m.Value)
			}
			out = append(out, o)
		}
		return NewArray(out...)
	})
	fullText := func(all bool) func(*evalCtx, *CallExpr, []Value) Value {
		return func(_ *evalCtx, _ *CallExpr, a []Value) Value {
			if a[0].kind != String {
				return undefinedValue
			}
			words := textTokens(a[0].str)
			for _, t := range a[1:] {
				if t.kind != String {
					return undefinedValue
				}
				hit := containsPhrase(words, textTokens(t.str))
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
}

// textTokens splits text into lower-case words (runs of letters and
// digits), the unit FullTextContains matches.
func textTokens(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// containsPhrase reports whether phrase occurs as consecutive words.
func containsPhrase(words, phrase []string) bool {
	if len(phrase) == 0 {
		return false
	}
outer:
	for i := 0; i+len(phrase) <= len(words); i++ {
		for j, p := range phrase {
			if words[i+j] != p {
				continue outer
			}
		}
		return true
	}
	return false
}

// String functions. Positions and lengths count Unicode code points.

func registerStringFunctions() {
	register("CONCAT", 2, -1, func(_ *evalCtx, _ *CallExpr, a []Value) Value {
		n := 0
		for _, v := range a {
			if v.kind != String {
				return undefinedValue
			}
			n += len(v.str)
		}
		var b strings.Builder
		b.Grow(n)
		for _, v := range a {
			b.WriteString(v.str)
		}
		return StringValue(b.String())
	})
	strPred := func(f func(s, t string) bool) func(*evalCtx, *CallExpr, []Value) Value {
		return func(_ *evalCtx, _ *CallExpr, a []Value) Value {
			ic, ok := optBool(a, 2)
			if a[0].kind != String || a[1].kind != String || !ok {
				return undefinedValue
			}
			s, t := a[0].str, a[1].str
			if ic {
				s, t = strings.ToLower(s), strings.ToLower(t)
			}
			return BoolValue(f(s, t))
		}
	}
	register("CONTAINS", 2, 3, strPred(strings.Contains))
	register("STARTSWITH", 2, 3, strPred(strings.HasPrefix))
	register("ENDSWITH", 2, 3, strPred(strings.HasSuffix))
	register("StringEquals", 2, 3, strPred(func(s, t string) bool { return s == t }))
	str1 := func(f func(string) Value) func(*evalCtx, *CallExpr, []Value) Value {
		return func(_ *evalCtx, _ *CallExpr, a []Value) Value {
			if a[0].kind != String {
				return undefinedValue
			}
			return f(a[0].str)
		}
	}
	register("LOWER", 1, 1, str1(func(s string) Value { return StringValue(strings.ToLower(s)) }))
	register("UPPER", 1, 1, str1(func(s string) Value { return StringValue(strings.ToUpper(s)) }))
	register("LENGTH", 1, 1, str1(func(s string) Value { return NumberValue(float64(utf8.RuneCountInString(s))) }))
	register("TRIM", 1, 1, str1(func(s string) Value { return StringValue(strings.TrimSpace(s)) }))
	register("LTRIM", 1, 1, str1(func(s string) Value { return StringValue(strings.TrimLeftFunc(s, unicode.IsSpace)) }))
	register("RTRIM", 1, 1, str1(func(s string) Value { return StringValue(strings.TrimRightFunc(s, unicode.IsSpace)) }))
	register("REVERSE", 1, 1, str1(func(s string) Value {
		rs := []rune(s)
		for i, j := 0, len(rs)-1; i < j; i, j = i+1, j-1 {
			rs[i], rs[j] = rs[j], rs[i]
		}
		return StringValue(string(rs))
	}))
	register("SUBSTRING", 3, 3, func(_ *evalCtx, _ *CallExpr, a []Value) Value {
		start, ok1 := truncArg(a[1])
		n, ok2 := truncArg(a[2])
		if a[0].kind != String || !ok1 || !ok2 {
			return undefinedValue
		}
		return StringValue(runeSlice(a[0].str, start, n))
	})
	register("LEFT", 2, 2, func(_ *evalCtx, _ *CallExpr, a []Value) Value {
		n, ok := truncArg(a[1])
		if a[0].kind != String || !ok {
			return undefinedValue
		}
		return StringValue(runeSlice(a[0].str, 0, n))
	})
	register("RIGHT", 2, 2, func(_ *evalCtx, _ *CallExpr, a []Value) Value {
		n, ok := truncArg(a[1])
		if a[0].kind != String || !ok {
			return undefinedValue
		}
		l := utf8.RuneCountInString(a[0].str)
		if n > l {
			n = l
		}
		if n < 0 {
			n = 0
		}
		return StringValue(runeSlice(a[0].str, l-n, n))
	})
	register("INDEX_OF", 2, 3, func(_ *evalCtx, _ *CallExpr, a []Value) Value {
		if a[0].kind != String || a[1].kind != String {
			return undefinedValue
		}
		start := 0
		if len(a) > 2 {
			var ok bool
			if start, ok = truncArg(a[2]); !ok {
				return undefinedValue
			}
			if start < 0 {
				start = 0
			}
		}
		s := a[0].str
		off := runeOffset(s, start)
		if off < 0 {
			return NumberValue(-1)
		}
		i := strings.Index(s[off:], a[1].str)
		if i < 0 {
			return NumberValue(-1)
		}
		return NumberValue(float64(start + utf8.RuneCountInString(s[off:off+i])))
	})
	register("LASTINDEXOF", 2, 2, func(_ *evalCtx, _ *CallExpr, a []Value) Value {
		if a[0].kind != String || a[1].kind != String {
			return undefinedValue
		}
		i := strings.LastIndex(a[0].str, a[1].str)
		if i < 0 {
			return NumberValue(-1)
		}
		return NumberValue(float64(utf8.RuneCountInString(a[0].str[:i])))
	})
	containsSome := func(all, ci bool) func(*evalCtx, *CallExpr, []Value) Value {
		return func(_ *evalCtx, _ *CallExpr, a []Value) Value {
			for _, v := range a {
				if v.kind != String {
					return undefinedValue
				}
			}
			s := a[0].str
			if ci {
				s = strings.ToLower(s)
			}
			for _, v := range a[1:] {
				t := v.str
				if ci {
					t = strings.ToLower(t)
				}
				hit := strings.Contains(s, t)
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
	register("CONTAINS_ALL_CI", 2, -1, containsSome(true, true))
	register("CONTAINS_ALL_CS", 2, -1, containsSome(true, false))
	register("CONTAINS_ANY_CI", 2, -1, containsSome(false, true))
	register("CONTAINS_ANY_CS", 2, -1, containsSome(false, false))
	register("REPLACE", 3, 3, func(_ *evalCtx, _ *CallExpr, a []Value) Value {
		if a[0].kind != String || a[1].kind != String || a[2].kind != String {
			return undefinedValue
		}
		if a[1].str == "" {
			return a[0]
		}
		return StringValue(strings.ReplaceAll(a[0].str, a[1].str, a[2].str))
	})
	register("REPLICATE", 2, 2, func(_ *evalCtx, _ *CallExpr, a []Value) Value {
		n, ok := truncArg(a[1])
		if a[0].kind != String || !ok || n < 0 {
			return undefinedValue
		}
		// Cosmos caps the result at 10,000 characters.
		if n > 0 && utf8.RuneCountInString(a[0].str) > maxReplicate/n {
			return undefinedValue
		}
		return StringValue(strings.Repeat(a[0].str, n))
	})
	register("ToString", 1, 1, func(_ *evalCtx, _ *CallExpr, a []Value) Value {
		switch a[0].kind {
		case Undefined:
			return undefinedValue
		case String:
			return a[0]
		case Number:
			return StringValue(string(appendNumber(nil, a[0].num)))
		}
		return StringValue(string(a[0].AppendJSON(nil)))
	})
	stringTo := func(k Kind) func(*evalCtx, *CallExpr, []Value) Value {
		return func(_ *evalCtx, _ *CallExpr, a []Value) Value {
			if a[0].kind != String {
				return undefinedValue
			}
			v, err := parseJSONString(strings.TrimSpace(a[0].str))
			if err != nil || v.kind != k {
				return undefinedValue
			}
			if k == Number {
				return NumberValue(v.num)
			}
			return v
		}
	}
	register("StringToArray", 1, 1, stringTo(Array))
	register("StringToBoolean", 1, 1, stringTo(Bool))
	register("StringToNull", 1, 1, stringTo(Null))
	register("StringToNumber", 1, 1, stringTo(Number))
	register("StringToObject", 1, 1, stringTo(Object))
	register("StringJoin", 2, 2, func(_ *evalCtx, _ *CallExpr, a []Value) Value {
		if a[0].kind != Array || a[1].kind != String {
			return undefinedValue
		}
		parts := make([]string, 0, a[0].Len())
		for _, e := range a[0].Elems() {
			if e.kind != String {
				return undefinedValue
			}
			parts = append(parts, e.str)
		}
		return StringValue(strings.Join(parts, a[1].str))
	})
	register("StringSplit", 2, 2, func(_ *evalCtx, _ *CallExpr, a []Value) Value {
		if a[0].kind != String || a[1].kind != String {
			return undefinedValue
		}
		if a[1].str == "" {
			return NewArray(a[0])
		}
		parts := strings.Split(a[0].str, a[1].str)
		out := make([]Value, len(parts))
		for i, p := range parts {
			out[i] = StringValue(p)
		}
		return NewArray(out...)
	})
	rm := register("RegexMatch", 2, 3, func(c *evalCtx, x *CallExpr, a []Value) Value {
		if a[0].kind != String || a[1].kind != String {
			return undefinedValue
		}
		mods := ""
		if len(a) > 2 {
			if a[2].kind != String {
				return undefinedValue
			}
			mods = a[2].str
		}
		re, _ := x.cache.(*regexp.Regexp)
		if re == nil {
			key := mods + "\x00" + a[1].str
			if re = c.regexCache[key]; re == nil {
				var err error
				if re, err = compileRegex(a[1].str, mods); err != nil {
					return undefinedValue
				}
				if c.regexCache == nil {
					c.regexCache = map[string]*regexp.Regexp{}
				}
				if len(c.regexCache) < 100 {
					c.regexCache[key] = re
				}
			}
		}
		return BoolValue(re.MatchString(a[0].str))
	})
	rm.prep = func(x *CallExpr) {
		pat, ok := x.Args[1].(*LiteralExpr)
		if !ok || pat.Val.kind != String {
			return
		}
		mods := ""
		if len(x.Args) > 2 {
			m, ok := x.Args[2].(*LiteralExpr)
			if !ok || m.Val.kind != String {
				return
			}
			mods = m.Val.str
		}
		if re, err := compileRegex(pat.Val.str, mods); err == nil {
			x.cache = re
		}
	}
}

const maxReplicate = 10000

// runeOffset returns the byte offset of code point i of s, or -1 if s has
// fewer than i code points.
func runeOffset(s string, i int) int {
	if i <= 0 {
		return 0
	}
	n := 0
	for off := range s {
		if n == i {
			return off
		}
		n++
	}
	if n == i {
		return len(s)
	}
	return -1
}

// runeSlice returns up to n code points of s starting at code point start
// (clamped to the string).
func runeSlice(s string, start, n int) string {
	if start < 0 {
		start = 0
	}
	if n <= 0 {
		return ""
	}
	from := runeOffset(s, start)
	if from < 0 {
		return ""
	}
	to := runeOffset(s[from:], n)
	if to < 0 {
		return s[from:]
	}
	return s[from : from+to]
}

// compileRegex compiles a RegexMatch pattern with Cosmos modifiers: i
// (ignore case), m (multi-line), s (dot matches newline), x (ignore white
// space and # comments in the pattern). The syntax is Go's RE2: no
// backreferences or look-around.
func compileRegex(pat, mods string) (*regexp.Regexp, error) {
	flags := ""
	for _, m := range mods {
		switch m {
		case 'i', 'm', 's':
			if !strings.ContainsRune(flags, m) {
				flags += string(m)
			}
		case 'x':
			pat = stripExtended(pat)
		default:
			return nil, errBadModifier
		}
	}
	if flags != "" {
		pat = "(?" + flags + ")" + pat
	}
	return regexp.Compile(pat)
}

var errBadModifier = &Error{Msg: "invalid regular expression modifier"}

// stripExtended removes unescaped white space and #-comments outside
// character classes, which is what the x modifier means.
func stripExtended(pat string) string {
	var b strings.Builder
	inClass := false
	for i := 0; i < len(pat); i++ {
		c := pat[i]
		switch {
		case c == '\\' && i+1 < len(pat):
			b.WriteByte(c)
			b.WriteByte(pat[i+1])
			i++
		case inClass:
			if c == ']' {
				inClass = false
			}
			b.WriteByte(c)
		case c == '[':
			inClass = true
			b.WriteByte(c)
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
		case c == '#':
			for i < len(pat) && pat[i] != '\n' {
				i++
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// Mathematical functions.

func registerMathFunctions() {
	register("ABS", 1, 1, num1(math.Abs))
	register("CEILING", 1, 1, num1(math.Ceil))
	register("FLOOR", 1, 1, num1(math.Floor))
	register("ROUND", 1, 1, num1(math.Round)) // half away from zero, as Cosmos
	register("TRUNC", 1, 1, num1(math.Trunc))
	register("SQRT", 1, 1, num1(math.Sqrt))
	register("SQUARE", 1, 1, num1(func(x float64) float64 { return x * x }))
	register("EXP", 1, 1, num1(math.Exp))
	register("LOG10", 1, 1, num1(math.Log10))
	register("SIGN", 1, 1, num1(func(x float64) float64 {
		switch {
		case x > 0:
			return 1
		case x < 0:
			return -1
		}
		return 0
	}))
	register("ACOS", 1, 1, num1(math.Acos))
	register("ASIN", 1, 1, num1(math.Asin))
	register("ATAN", 1, 1, num1(math.Atan))
	register("COS", 1, 1, num1(math.Cos))
	register("COT", 1, 1, num1(func(x float64) float64 { return 1 / math.Tan(x) }))
	register("SIN", 1, 1, num1(math.Sin))
	register("TAN", 1, 1, num1(math.Tan))
	register("DEGREES", 1, 1, num1(func(x float64) float64 { return x * 180 / math.Pi }))
	register("RADIANS", 1, 1, num1(func(x float64) float64 { return x * math.Pi / 180 }))
	register("POWER", 2, 2, num2(math.Pow))
	// ATN2(x, y) is the angle of the point (x, y): atan2(y, x).
	register("ATN2", 2, 2, num2(func(x, y float64) float64 { return math.Atan2(y, x) }))
	register("LOG", 1, 2, func(_ *evalCtx, _ *CallExpr, a []Value) Value {
		if a[0].kind != Number {
			return undefinedValue
		}
		if len(a) == 1 {
			return NumberValue(math.Log(a[0].num))
		}
		if a[1].kind != Number {
			return undefinedValue
		}
		return NumberValue(math.Log(a[0].num) / math.Log(a[1].num))
	})
	register("PI", 0, 0, func(*evalCtx, *CallExpr, []Value) Value { return NumberValue(math.Pi) })
	register("RAND", 0, 0, func(c *evalCtx, _ *CallExpr, _ []Value) Value { return NumberValue(c.random()) })
	register("NumberBin", 1, 2, func(_ *evalCtx, _ *CallExpr, a []Value) Value {
		if a[0].kind != Number {
			return undefinedValue
		}
		size := 1.0
		if len(a) > 1 {
			if a[1].kind != Number || a[1].num <= 0 {
				return undefinedValue
			}
			size = a[1].num
		}
		return NumberValue(math.Floor(a[0].num/size) * size)
	})
	int2 := func(f func(x, y int64) (int64, bool)) func(*evalCtx, *CallExpr, []Value) Value {
		return func(_ *evalCtx, _ *CallExpr, a []Value) Value {
			x, ok1 := int64Arg(a[0])
			y, ok2 := int64Arg(a[1])
			if !ok1 || !ok2 {
				return undefinedValue
			}
			r, ok := f(x, y)
			if !ok {
				return undefinedValue
			}
			return NumberValue(float64(r))
		}
	}
	register("IntAdd", 2, 2, int2(func(x, y int64) (int64, bool) { return x + y, true }))
	register("IntSub", 2, 2, int2(func(x, y int64) (int64, bool) { return x - y, true }))
	register("IntMul", 2, 2, int2(func(x, y int64) (int64, bool) { return x * y, true }))
	register("IntDiv", 2, 2, int2(func(x, y int64) (int64, bool) {
		if y == 0 || (x == math.MinInt64 && y == -1) {
			return 0, false
		}
		return x / y, true
	}))
	register("IntMod", 2, 2, int2(func(x, y int64) (int64, bool) {
		if y == 0 || (x == math.MinInt64 && y == -1) {
			return 0, false
		}
		return x % y, true
	}))
	register("IntBitAnd", 2, 2, int2(func(x, y int64) (int64, bool) { return x & y, true }))
	register("IntBitOr", 2, 2, int2(func(x, y int64) (int64, bool) { return x | y, true }))
	register("IntBitXor", 2, 2, int2(func(x, y int64) (int64, bool) { return x ^ y, true }))
	register("IntBitLeftShift", 2, 2, int2(func(x, y int64) (int64, bool) {
		if y < 0 || y > 63 {
			return 0, false
		}
		return x << uint(y), true
	}))
	register("IntBitRightShift", 2, 2, int2(func(x, y int64) (int64, bool) {
		if y < 0 || y > 63 {
			return 0, false
		}
		return x >> uint(y), true
	}))
	register("IntBitNot", 1, 1, func(_ *evalCtx, _ *CallExpr, a []Value) Value {
		x, ok := int64Arg(a[0])
		if !ok {
			return undefinedValue
		}
		return NumberValue(float64(^x))
	})
}

// Array functions.

func registerArrayFunctions() {
	register("ARRAY_CONTAINS", 2, 3, func(_ *evalCtx, _ *CallExpr, a []Value) Value {
		partial, ok := optBool(a, 2)
		if a[0].kind != Array || !ok {
			return undefinedValue
		}
		for _, e := range a[0].ref.elems {
			if partial && a[1].kind == Object && e.kind == Object {
				if objectContains(e, a[1]) {
					return trueValue
				}
			} else if Equal(e, a[1]) {
				return trueValue
			}
		}
		return falseValue
	})
	containsSet := func(all bool) func(*evalCtx, *CallExpr, []Value) Value {
		return func(_ *evalCtx, _ *CallExpr, a []Value) Value {
			if a[0].kind != Array {
				return undefinedValue
			}
			for _, want := range a[1:] {
				hit := false
				for _, e := range a[0].ref.elems {
					if Equal(e, want) {
						hit = true
						break
					}
				}
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
	register("ARRAY_CONTAINS_ANY", 2, -1, containsSet(false))
	register("ARRAY_CONTAINS_ALL", 2, -1, containsSet(true))
	register("ARRAY_LENGTH", 1, 1, func(_ *evalCtx, _ *CallExpr, a []Value) Value {
		if a[0].kind != Array {
			return undefinedValue
		}
		return NumberValue(float64(len(a[0].ref.elems)))
	})
	register("ARRAY_SLICE", 2, 3, func(_ *evalCtx, _ *CallExpr, a []Value) Value {
		start, ok := truncArg(a[1])
		if a[0].kind != Array || !ok {
			return undefinedValue
		}
		es := a[0].ref.elems
		if start < 0 {
			start += len(es)
			if start < 0 {
				start = 0
			}
		}
		if start > len(es) {
			start = len(es)
		}
		end := len(es)
		if len(a) > 2 {
			n, ok := truncArg(a[2])
			if !ok {
				return undefinedValue
			}
			if n < 0 {
				n = 0
			}
			if start+n < end {
				end = start + n
			}
		}
		out := make([]Value, end-start)
		copy(out, es[start:end])
		return NewArray(out...)
	})
	register("ARRAY_CONCAT", 2, -1, func(_ *evalCtx, _ *CallExpr, a []Value) Value {
		n := 0
		for _, v := range a {
			if v.kind != Array {
				return undefinedValue
			}
			n += len(v.ref.elems)
		}
		out := make([]Value, 0, n)
		for _, v := range a {
			out = append(out, v.ref.elems...)
		}
		return NewArray(out...)
	})
	register("SetIntersect", 2, 2, func(_ *evalCtx, _ *CallExpr, a []Value) Value {
		if a[0].kind != Array || a[1].kind != Array {
			return undefinedValue
		}
		in := map[string]bool{}
		var buf []byte
		for _, e := range a[1].ref.elems {
			buf = appendKey(buf[:0], e)
			in[string(buf)] = true
		}
		var out []Value
		for _, e := range distinctValues(a[0].ref.elems) {
			buf = appendKey(buf[:0], e)
			if in[string(buf)] {
				out = append(out, e)
			}
		}
		return NewArray(out...)
	})
	register("SetDifference", 2, 2, func(_ *evalCtx, _ *CallExpr, a []Value) Value {
		if a[0].kind != Array || a[1].kind != Array {
			return undefinedValue
		}
		in := keySet(a[1].ref.elems)
		var out []Value
		var buf []byte
		for _, e := range distinctValues(a[0].ref.elems) {
			buf = appendKey(buf[:0], e)
			if !in[string(buf)] {
				out = append(out, e)
			}
		}
		return NewArray(out...)
	})
	register("SetEqual", 2, 2, func(_ *evalCtx, _ *CallExpr, a []Value) Value {
		if a[0].kind != Array || a[1].kind != Array {
			return undefinedValue
		}
		x, y := keySet(a[0].ref.elems), keySet(a[1].ref.elems)
		if len(x) != len(y) {
			return falseValue
		}
		for k := range x {
			if !y[k] {
				return falseValue
			}
		}
		return trueValue
	})
	arrayAgg := func(kind aggKind) func(*evalCtx, *CallExpr, []Value) Value {
		return func(_ *evalCtx, _ *CallExpr, a []Value) Value {
			if a[0].kind != Array {
				return undefinedValue
			}
			st := aggState{kind: kind}
			for _, e := range a[0].ref.elems {
				st.add(e)
			}
			return st.result()
		}
	}
	register("ARRAY_MAX", 1, 1, arrayAgg(aggMax))
	register("ARRAY_MIN", 1, 1, arrayAgg(aggMin))
	register("ARRAY_SUM", 1, 1, arrayAgg(aggSum))
	register("ARRAY_AVG", 1, 1, arrayAgg(aggAvg))
	register("ARRAY_MEDIAN", 1, 1, func(_ *evalCtx, _ *CallExpr, a []Value) Value {
		if a[0].kind != Array || len(a[0].ref.elems) == 0 {
			return undefinedValue
		}
		ns := make([]float64, 0, len(a[0].ref.elems))
		for _, e := range a[0].ref.elems {
			if e.kind != Number {
				return undefinedValue
			}
			ns = append(ns, e.num)
		}
		slices.Sort(ns)
		if m := len(ns) / 2; len(ns)%2 == 1 {
			return NumberValue(ns[m])
		} else {
			return NumberValue((ns[m-1] + ns[m]) / 2)
		}
	})
	register("SetUnion", 2, 2, func(_ *evalCtx, _ *CallExpr, a []Value) Value {
		if a[0].kind != Array || a[1].kind != Array {
			return undefinedValue
		}
		all := make([]Value, 0, len(a[0].ref.elems)+len(a[1].ref.elems))
		all = append(all, a[0].ref.elems...)
		all = append(all, a[1].ref.elems...)
		return NewArray(distinctValues(all)...)
	})
}

// keySet returns the canonical keys of vs.
func keySet(vs []Value) map[string]bool {
	set := make(map[string]bool, len(vs))
	var buf []byte
	for _, v := range vs {
		buf = appendKey(buf[:0], v)
		set[string(buf)] = true
	}
	return set
}

// objectContains reports whether every member of part is in whole with an
// equal value (ARRAY_CONTAINS's partial match).
func objectContains(whole, part Value) bool {
	for _, m := range part.ref.members {
		if m.Value.kind == Undefined {
			continue
		}
		if !Equal(whole.Get(m.Name), m.Value) {
			return false
		}
	}
	return true
}
