package query

import "slices"

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
			return anyOrAll(all, a[1:], func(want Value) bool {
				for _, e := range a[0].ref.elems {
					if Equal(e, want) {
						return true
					}
				}
				return false
			})
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

// anyOrAll is ARRAY_CONTAINS_ANY and _ALL's answer, and CONTAINS_ANY_CI's
// and the other CONTAINS_ANY and _ALL functions': whether any (all false)
// or all of the values are found. An undefined value is neither found
// nor missing: with none found it makes ANY undefined, and with none
// missing it makes ALL undefined (the service's query reference shows
// ARRAY_CONTAINS_ANY([1, 2, 3, 4], 1, undefined) true but
// ARRAY_CONTAINS_ANY([1, 2, 3, 4], 5, undefined) undefined, and
// ARRAY_CONTAINS_ALL([1, 2, 3, 4], 5, undefined) false but
// ARRAY_CONTAINS_ALL([1, 2, 3, 4], 1, undefined) undefined).
func anyOrAll(all bool, values []Value, found func(Value) bool) Value {
	unknown := false
	for _, v := range values {
		if v.kind == Undefined {
			unknown = true
			continue
		}
		hit := found(v)
		if hit && !all {
			return trueValue
		}
		if !hit && all {
			return falseValue
		}
	}
	if unknown {
		return undefinedValue
	}
	return BoolValue(all)
}
