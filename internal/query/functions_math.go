package query

import "math"

// Mathematical functions.

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
	// ATN2(y, x) is the arc tangent of y/x in the quadrant of (x, y),
	// as the query reference now names its arguments and shows it:
	// ATN2(35.175643, 129.44) is 0.265344532064832 (learn.microsoft.com/
	// cosmos-db/query/atn2; an older page gave atan2(x, y) for it).
	register("ATN2", 2, 2, num2(math.Atan2))
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
			// A negative bin size bins as a positive one but for the
			// floor's side: NumberBin(37.752, -100) is 100 in the query
			// reference (learn.microsoft.com/cosmos-db/query/numberbin);
			// a bin of 0 is undefined.
			if a[1].kind != Number || a[1].num == 0 {
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
