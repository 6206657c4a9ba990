package patch

import (
	"testing"

	"github.com/ebbdb/ebb/internal/query"
)

// applyAll parses ops and applies them to doc, returning the document or
// the first error.
func applyAll(t *testing.T, doc, ops string) (string, error) {
	t.Helper()
	parsed, _, err := Parse([]byte(ops))
	if err != nil {
		t.Fatalf("Parse(%s): %v", ops, err)
	}
	v, err := query.ParseJSON([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	for i := range parsed {
		if err := parsed[i].Apply(v, i+1); err != nil {
			return "", err
		}
	}
	return string(v.AppendJSON(nil)), nil
}

func TestIncr(t *testing.T) {
	for _, tc := range []struct{ name, doc, ops, want string }{
		{"integers", `{"n":3}`, `[{"op":"incr","path":"/n","value":1}]`, `{"n":4}`},
		{"negative", `{"n":3}`, `[{"op":"incr","path":"/n","value":-5}]`, `{"n":-2}`},
		{"up to the largest int64", `{"n":9223372036854775806}`, `[{"op":"incr","path":"/n","value":1}]`, `{"n":9223372036854775807}`},
		{"down to the smallest int64", `{"n":-9223372036854775807}`, `[{"op":"incr","path":"/n","value":-1}]`, `{"n":-9223372036854775808}`},
		{"beyond 2^53 exactly", `{"n":9007199254740993}`, `[{"op":"incr","path":"/n","value":2}]`, `{"n":9007199254740995}`},
		{"a large increment exactly", `{"n":1}`, `[{"op":"incr","path":"/n","value":4611686018427387904}]`, `{"n":4611686018427387905}`},
		{"integer plus fraction", `{"n":1}`, `[{"op":"incr","path":"/n","value":0.5}]`, `{"n":1.5}`},
		{"fraction plus integer", `{"n":1.5}`, `[{"op":"incr","path":"/n","value":10}]`, `{"n":11.5}`},
		{"fractions add as doubles", `{"n":0.1}`, `[{"op":"incr","path":"/n","value":0.2}]`, `{"n":0.30000000000000004}`},
		{"an exponent is a double", `{"n":5}`, `[{"op":"incr","path":"/n","value":1e2}]`, `{"n":105}`},
		{"integer at 2^53 plus fraction", `{"n":9007199254740992}`, `[{"op":"incr","path":"/n","value":2.0}]`, `{"n":9007199254740994}`},
		{"a missing property takes the value", `{}`, `[{"op":"incr","path":"/n","value":9223372036854775807}]`, `{"n":9223372036854775807}`},
		{"twice, integers", `{"n":9007199254740993}`, `[{"op":"incr","path":"/n","value":1},{"op":"incr","path":"/n","value":1}]`, `{"n":9007199254740995}`},
		{"twice, through a double", `{"n":1}`, `[{"op":"incr","path":"/n","value":0.5},{"op":"incr","path":"/n","value":1}]`, `{"n":2.5}`},
		{"inside an array", `{"a":[1,2]}`, `[{"op":"incr","path":"/a/1","value":40}]`, `{"a":[1,42]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := applyAll(t, tc.doc, tc.ops)
			if err != nil || got != tc.want {
				t.Fatalf("%s on %s = %s, %v; want %s", tc.ops, tc.doc, got, err, tc.want)
			}
		})
	}
}

func TestIncrRefuses(t *testing.T) {
	for _, tc := range []struct{ name, doc, ops, want string }{
		{"overflow", `{"n":9223372036854775807}`, `[{"op":"incr","path":"/n","value":1}]`,
			"Patch operation 1 (incr /n): 9223372036854775807 + 1 is outside the range of a 64-bit integer (-9223372036854775808 to 9223372036854775807), so the item was not changed."},
		{"underflow", `{"n":-9223372036854775808}`, `[{"op":"incr","path":"/n","value":-1}]`,
			"Patch operation 1 (incr /n): -9223372036854775808 + -1 is outside the range of a 64-bit integer (-9223372036854775808 to 9223372036854775807), so the item was not changed."},
		{"two large increments", `{"n":1}`, `[{"op":"incr","path":"/n","value":9223372036854775807}]`,
			"Patch operation 1 (incr /n): 1 + 9223372036854775807 is outside the range of a 64-bit integer (-9223372036854775808 to 9223372036854775807), so the item was not changed."},
		{"the second operation overflows", `{"n":9223372036854775800}`, `[{"op":"incr","path":"/n","value":7},{"op":"incr","path":"/n","value":1}]`,
			"Patch operation 2 (incr /n): 9223372036854775807 + 1 is outside the range of a 64-bit integer (-9223372036854775808 to 9223372036854775807), so the item was not changed."},
		{"target beyond 64 bits", `{"n":18446744073709551616}`, `[{"op":"incr","path":"/n","value":1}]`,
			"Patch operation 1 (incr /n): 18446744073709551616 is an integer outside the range of a 64-bit integer, which incr cannot add exactly, so the item was not changed."},
		{"increment beyond 64 bits", `{"n":1}`, `[{"op":"incr","path":"/n","value":-18446744073709551616}]`,
			"Patch operation 1 (incr /n): -18446744073709551616 is an integer outside the range of a 64-bit integer, which incr cannot add exactly, so the item was not changed."},
		{"fraction of a large integer", `{"n":9007199254740993}`, `[{"op":"incr","path":"/n","value":0.5}]`,
			"Patch operation 1 (incr /n): 9007199254740993 + 0.5 would round the integer 9007199254740993, which is beyond ±2^53, to a double, so the item was not changed; increment it by an integer instead."},
		{"large integer added to a fraction", `{"n":0.5}`, `[{"op":"incr","path":"/n","value":-9007199254740993}]`,
			"Patch operation 1 (incr /n): 0.5 + -9007199254740993 would round the integer -9007199254740993, which is beyond ±2^53, to a double, so the item was not changed; increment it by an integer instead."},
		{"double overflow", `{"n":1.7e308}`, `[{"op":"incr","path":"/n","value":1.7e308}]`,
			"Patch operation 1 (incr /n): 1.7e308 + 1.7e308 is outside the range of a double, so the item was not changed."},
		{"not a number", `{"n":"3"}`, `[{"op":"incr","path":"/n","value":1}]`,
			"For Operation(0): Node(/n) is not a number. It is a string."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := applyAll(t, tc.doc, tc.ops)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("%s on %s = %s, %v\nwant error %s", tc.ops, tc.doc, got, err, tc.want)
			}
		})
	}
}
