package patch

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/ebbdb/ebb/internal/engine/document"
	"github.com/ebbdb/ebb/internal/query"
)

// What incr does with the kinds of numbers, and why.
//
// The service's number model holds either a 64-bit integer or a double
// (the .NET SDK's Number64 is "a double or a 64-bit long", see
// Azure/azure-sdk-for-rust sdk/cosmos/ISSUE-wide-integer-text-binary-coercion.md),
// and a stored 9223372036854775807 reads back exactly through the .NET
// SDK (Azure/azure-sdk-for-js#13645, where only the JS SDK rounds it,
// because JavaScript numbers are doubles). The SDKs send either kind of
// increment: PatchOperation.Increment(string, long) and (string, double)
// in .NET (learn.microsoft.com/dotnet/api/microsoft.azure.cosmos.patchoperation.increment),
// increment(long) and increment(double) in Java's CosmosPatchOperations,
// AppendIncrement(path, int64) in Go. The partial document update page
// (learn.microsoft.com/azure/cosmos-db/partial-document-update) documents
// incr only by example (a quantity of 15 incremented by 10 is 25); it says
// nothing of overflow or of mixing kinds, and no public test or issue
// found shows what the service answers. Microsoft's Rust driver applies
// patches on the client, its "Op semantics follow Cosmos DB's documented
// PATCH behavior" (Azure/azure-sdk-for-rust
// sdk/cosmos/azure_data_cosmos_driver/src/driver/pipeline/patch_eval.rs): integer
// plus integer is checked 64-bit arithmetic and an overflow is an error; a
// fractional increment of an integer target gives a double, refused when
// the integer is beyond ±2^53 and so would be rounded; an integer
// increment of a fractional target is refused.
//
// Ebb therefore:
//   - adds two integers that fit in 64 bits exactly, in int64, and answers
//     400 when the sum leaves that range, never a wrapped or rounded sum;
//   - adds as doubles when either side is fractional (written with a
//     fraction or an exponent), the way the service's doubles add;
//   - answers 400 when that would round an integer operand (one beyond
//     ±2^53, or beyond 64 bits) or when the sum is not a finite double.
//
// It departs from the Rust driver in one place: an integer increment of a
// fractional target is added as doubles rather than refused, because the
// JS SDK cannot send anything else (JSON.stringify writes 10.0 as 10), so
// refusing it would make incr of a price by a whole amount fail there.

// maxExactInt is the largest magnitude up to which every integer is a
// double: beyond it, converting an integer to a double may round it.
const maxExactInt = 1 << 53

// number is one side of an increment.
type number struct {
	// lit is the JSON text of the number.
	lit string
	// integer: lit has no fraction and no exponent.
	integer bool
	// fits: integer and within int64; i is then its value.
	fits bool
	i    int64
	f    float64
}

func numberOf(v query.Value) number {
	f, _ := v.AsNumber()
	lit := v.NumberLiteral()
	if lit == "" {
		// A double computed by an earlier incr of the same patch.
		return number{lit: string(v.AppendJSON(nil)), f: f}
	}
	n := number{lit: lit, f: f}
	if strings.ContainsAny(lit, ".eE") {
		return n
	}
	n.integer = true
	i, err := strconv.ParseInt(lit, 10, 64)
	n.fits, n.i = err == nil, i
	return n
}

// exactAsDouble reports whether n converts to a double without rounding.
func (n number) exactAsDouble() bool {
	return !n.integer || n.fits && n.i >= -maxExactInt && n.i <= maxExactInt
}

// increment returns cur + by (see the rules above) or why it has none.
func increment(cur, by query.Value) (query.Value, error) {
	a, b := numberOf(cur), numberOf(by)
	if a.fits && b.fits {
		sum := a.i + b.i
		if (b.i > 0 && sum < a.i) || (b.i < 0 && sum > a.i) {
			return query.Value{}, fmt.Errorf("%s + %s is outside the range of a 64-bit integer (%d to %d), so the item was not changed.", short(a.lit), short(b.lit), int64(math.MinInt64), int64(math.MaxInt64))
		}
		// Parsed from its literal so that the value keeps its exact text:
		// AppendJSON writes a number without one through a double.
		return query.ParseJSON(strconv.AppendInt(nil, sum, 10))
	}
	for _, n := range []number{a, b} {
		switch {
		case n.integer && !n.fits:
			return query.Value{}, fmt.Errorf("%s is an integer outside the range of a 64-bit integer, which incr cannot add exactly, so the item was not changed.", short(n.lit))
		case !n.exactAsDouble():
			return query.Value{}, fmt.Errorf("%s + %s would round the integer %s, which is beyond ±2^53, to a double, so the item was not changed; increment it by an integer instead.", short(a.lit), short(b.lit), short(n.lit))
		}
	}
	sum := a.f + b.f
	if math.IsInf(sum, 0) || math.IsNaN(sum) {
		return query.Value{}, fmt.Errorf("%s + %s is outside the range of a double, so the item was not changed.", short(a.lit), short(b.lit))
	}
	return query.NumberValue(sum), nil
}

// short keeps a number's text readable in a message.
func short(lit string) string { return document.Truncate([]byte(lit), 40) }
