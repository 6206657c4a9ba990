package query

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

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
	// TRIM, LTRIM and RTRIM take white space off, or with a second
	// argument any of its characters: LTRIM("AdventureWorks",
	// "Adventure") is "Works" and TRIM("-_-x-_-", "-_") "x" in the query
	// reference (learn.microsoft.com/cosmos-db/query/trim, ltrim, rtrim).
	trim := func(cut func(string, string) string, space func(string) string) func(*evalCtx, *CallExpr, []Value) Value {
		return func(_ *evalCtx, _ *CallExpr, a []Value) Value {
			if a[0].kind != String || (len(a) > 1 && a[1].kind != String) {
				return undefinedValue
			}
			if len(a) == 1 {
				return StringValue(space(a[0].str))
			}
			return StringValue(cut(a[0].str, a[1].str))
		}
	}
	register("TRIM", 1, 2, trim(strings.Trim, strings.TrimSpace))
	register("LTRIM", 1, 2, trim(strings.TrimLeft, func(s string) string { return strings.TrimLeftFunc(s, unicode.IsSpace) }))
	register("RTRIM", 1, 2, trim(strings.TrimRight, func(s string) string { return strings.TrimRightFunc(s, unicode.IsSpace) }))
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
	register("LASTINDEXOF", 2, 3, func(_ *evalCtx, _ *CallExpr, a []Value) Value {
		if a[0].kind != String || a[1].kind != String {
			return undefinedValue
		}
		s := a[0].str
		if len(a) > 2 {
			// A start position: the last match that ends at or before
			// it, as the search runs backwards from there
			// (LASTINDEXOF("abcdeabc", "abc", 6) is 0 and 7 finds 5 in
			// learn.microsoft.com/cosmos-db/query/lastindexof).
			start, ok := truncArg(a[2])
			if !ok || start < 0 {
				return undefinedValue
			}
			s = runeSlice(s, 0, start+1)
		}
		i := strings.LastIndex(s, a[1].str)
		if i < 0 {
			return NumberValue(-1)
		}
		return NumberValue(float64(utf8.RuneCountInString(s[:i])))
	})
	containsSome := func(all, ci bool) func(*evalCtx, *CallExpr, []Value) Value {
		return func(_ *evalCtx, _ *CallExpr, a []Value) Value {
			for i, v := range a {
				if v.kind != String && (i == 0 || v.kind != Undefined) {
					return undefinedValue
				}
			}
			s := a[0].str
			if ci {
				s = strings.ToLower(s)
			}
			return anyOrAll(all, a[1:], func(v Value) bool {
				t := v.str
				if ci {
					t = strings.ToLower(t)
				}
				return strings.Contains(s, t)
			})
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
				// The pattern may be a substring of a document that a
				// streaming page reads in place; the cached expression
				// outlives it.
				if re, err = compileRegex(strings.Clone(a[1].str), mods); err != nil {
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
