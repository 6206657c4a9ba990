package query

import (
	"encoding/base64"
	"encoding/binary"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// builtin is a system function. Argument-count errors are found by the
// checker; wrong argument types give undefined at run time, as in Cosmos.
type builtin struct {
	name    string // canonical spelling, used when printing
	minArgs int
	maxArgs int // -1: any number
	// only, when set, lists the argument counts taken within
	// [minArgs, maxArgs], for a function whose forms skip one
	// (NOW() and NOW(part, n)).
	only []int
	agg  aggKind
	call func(c *evalCtx, x *CallExpr, a []Value) Value
	prep func(x *CallExpr) // optional: precompute from constant arguments
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
	case b.only != nil:
		counts := make([]string, len(b.only))
		for i, n := range b.only {
			counts[i] = strconv.Itoa(n)
		}
		return strings.Join(counts, " or ") + " arguments"
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

// takes reports whether the function takes n arguments.
func (b *builtin) takes(n int) bool {
	if b.only != nil {
		return slices.Contains(b.only, n)
	}
	return n >= b.minArgs && (b.maxArgs < 0 || n <= b.maxArgs)
}

// lookupBuiltin finds a system function; names are case-insensitive.
func lookupBuiltin(name string) *builtin {
	return builtins[strings.ToUpper(name)]
}

// Argument helpers shared by the function families.

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
	registerTypeFunctions()

	// Aggregates: evaluated by the executor, never called.
	for _, ag := range []struct {
		name string
		kind aggKind
	}{{"COUNT", aggCount}, {"SUM", aggSum}, {"AVG", aggAvg}, {"MIN", aggMin}, {"MAX", aggMax}, {"CountIf", aggCountIf},
		{"MAKELIST", aggMakeList}, {"MAKESET", aggMakeSet}} {
		b := register(ag.name, 1, 1, nil)
		b.agg = ag.kind
	}

	registerStringFunctions()
	registerMathFunctions()
	registerArrayFunctions()
	registerDateFunctions()
	registerSpatialFunctions()
	registerVectorFunctions()
	registerFullTextFunctions()
	registerOtherFunctions()
}

func registerOtherFunctions() {
	register("IIF", 3, 3, func(_ *evalCtx, _ *CallExpr, a []Value) Value {
		if a[0].IsTrue() {
			return a[1]
		}
		return a[2]
	})
	// DocumentId is an item's integer identifier within its physical
	// partition, the one its _rid holds after the container's eight
	// bytes (little-endian): the query reference shows _rid
	// "36ZyAPW+uN8NAAAAAAAAAA==" as DocumentId 13 and filters by
	// DocumentId(p) >= 5 (learn.microsoft.com/cosmos-db/query/documentid).
	// Ebb's item _rids have that layout. Anything without such a _rid is
	// undefined.
	register("DocumentId", 1, 1, func(_ *evalCtx, _ *CallExpr, a []Value) Value {
		rid := a[0].Get("_rid")
		if rid.kind != String {
			return undefinedValue
		}
		b, err := base64.StdEncoding.DecodeString(strings.ReplaceAll(rid.str, "-", "/"))
		if err != nil || len(b) != 16 {
			return undefinedValue
		}
		return NumberValue(float64(binary.LittleEndian.Uint64(b[8:])))
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
