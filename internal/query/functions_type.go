package query

import "math"

// Type checking.

func registerTypeFunctions() {
	register("IS_ARRAY", 1, 1, is(Array))
	register("IS_BOOL", 1, 1, is(Bool))
	register("IS_DEFINED", 1, 1, is(Null, Bool, Number, String, Array, Object))
	register("IS_NULL", 1, 1, is(Null))
	register("IS_NUMBER", 1, 1, is(Number))
	register("IS_OBJECT", 1, 1, is(Object))
	register("IS_PRIMITIVE", 1, 1, is(Null, Bool, Number, String))
	register("IS_STRING", 1, 1, is(String))
	register("IS_INTEGER", 1, 1, func(_ *evalCtx, _ *CallExpr, a []Value) Value {
		// A 64-bit integer: the service answers true for
		// 9223372036854775807, whose nearest double is 2^63, so 2^63
		// counts too (learn.microsoft.com/cosmos-db/query/is-integer).
		x := a[0].num
		return BoolValue(a[0].kind == Number && x == math.Trunc(x) && x >= math.MinInt64 && x <= -math.MinInt64)
	})
	register("IS_FINITE_NUMBER", 1, 1, func(_ *evalCtx, _ *CallExpr, a []Value) Value {
		return BoolValue(a[0].kind == Number && !math.IsInf(a[0].num, 0) && !math.IsNaN(a[0].num))
	})
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
