package patch

import (
	"testing"

	"github.com/ebbdb/ebb/internal/engine/document"
	"github.com/ebbdb/ebb/internal/query"
)

func TestParseRefuses(t *testing.T) {
	for _, tc := range []struct{ name, body, want string }{
		{"not JSON", `{`, "The patch body is not valid JSON. Syntax error at byte offset 1: unexpected end of JSON input."},
		{"no operations", `[]`, "The patch has no operations."},
		{"too many", `[` + repeat(`{"op":"remove","path":"/a"}`, 11) + `]`, "The number of patch operations cannot exceed 10. This patch has 11."},
		{"bad path", `[{"op":"remove","path":"a"}]`, "Patch operation 1: the path 'a' is invalid: a path starts with '/' and names a property, e.g. /address/city."},
		{"set without value", `[{"op":"set","path":"/a"}]`, "Patch operation 1 (set /a) needs a value."},
		{"incr a string", `[{"op":"incr","path":"/a","value":"x"}]`, "Patch operation 1 (incr /a): the value must be a number."},
		{"move into itself", `[{"op":"move","from":"/a","path":"/a/b"}]`, "Patch operation 1 (move): cannot move '/a' into its own child '/a/b'."},
		{"unknown op", `{"operations":[{"op":"copy","path":"/a"}]}`, "Invalid patch request: check syntax of patch specification. Operation 1's op 'copy' is not one of add, set, replace, remove, incr, move."},
		{"system property", `[{"op":"set","path":"/_ts","value":1}]`, "Invalid patch request: Cannot patch system property _ts."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Parse([]byte(tc.body))
			if err == nil || err.Error() != tc.want {
				t.Fatalf("Parse(%s) = %v\nwant %s", tc.body, err, tc.want)
			}
		})
	}
}

func TestApply(t *testing.T) {
	for _, tc := range []struct{ name, doc, ops, want string }{
		{"set and add", `{"a":1}`, `[{"op":"set","path":"/b","value":2},{"op":"add","path":"/c","value":[1]}]`, `{"a":1,"b":2,"c":[1]}`},
		{"add into an array", `{"a":[1,3]}`, `[{"op":"add","path":"/a/1","value":2},{"op":"add","path":"/a/-","value":4}]`, `{"a":[1,2,3,4]}`},
		{"replace and remove", `{"a":1,"b":2}`, `[{"op":"replace","path":"/a","value":"x"},{"op":"remove","path":"/b"}]`, `{"a":"x"}`},
		{"incr integers", `{"n":9007199254740989}`, `[{"op":"incr","path":"/n","value":2}]`, `{"n":9007199254740991}`},
		{"incr a missing property", `{}`, `[{"op":"incr","path":"/n","value":1.5}]`, `{"n":1.5}`},
		{"move", `{"a":{"b":1}}`, `[{"op":"move","from":"/a/b","path":"/c"}]`, `{"a":{},"c":1}`},
		{"escaped tokens", `{}`, `[{"op":"set","path":"/a~1b~0c","value":1}]`, `{"a/b~c":1}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ops, _, err := Parse([]byte(tc.ops))
			if err != nil {
				t.Fatal(err)
			}
			doc, err := query.ParseJSON([]byte(tc.doc))
			if err != nil {
				t.Fatal(err)
			}
			for i := range ops {
				if err := ops[i].Apply(doc, i+1); err != nil {
					t.Fatalf("op %d: %v", i+1, err)
				}
			}
			if got := string(doc.AppendJSON(nil)); got != tc.want {
				t.Fatalf("%s on %s = %s, want %s", tc.ops, tc.doc, got, tc.want)
			}
		})
	}
}

// TestApplyFails: each failure of an operation on a document, in the
// service's words where partial-document-update.md gives them (they
// count operations from 0).
func TestApplyFails(t *testing.T) {
	for _, tc := range []struct{ ops, want string }{
		{`[{"op":"replace","path":"/x","value":1}]`, "For Operation(0): Node(/x) to be replaced is absent."},
		{`[{"op":"replace","path":"/o/x/y","value":1}]`, "For Operation(0): Node(/o/x/y) to be replaced is absent."},
		{`[{"op":"set","path":"/a","value":1},{"op":"remove","path":"/x"}]`, "For Operation(1): Node(/x) to be removed is absent. Note: it may also have been removed earlier in the transaction."},
		{`[{"op":"add","path":"/x/y","value":1}]`, "For Operation(0): Add Operation can only create a child object of an existing node(array or object) and cannot create path recursively, no path found beyond: /x."},
		{`[{"op":"set","path":"/o/x/y","value":1}]`, "For Operation(0): Given Operation can only create a child object of an existing node(array or object) and cannot create path recursively, no path found beyond: /o/x."},
		{`[{"op":"incr","path":"/s/y","value":1}]`, "For Operation(0): Given Operation can only create a child object of an existing node(array or object) and cannot create path recursively, no path found beyond: /s."},
		{`[{"op":"add","path":"/arr/3","value":1}]`, "For Operation(0): Index(3) to operate on is out of array bounds."},
		{`[{"op":"remove","path":"/arr/2"}]`, "For Operation(0): Index(2) to operate on is out of array bounds."},
		{`[{"op":"incr","path":"/s","value":1}]`, "For Operation(0): Node(/s) is not a number. It is a string."},
		{`[{"op":"move","from":"/x","path":"/y"}]`, "For Operation(0): Node(/x) to be moved is absent."},
		{`[{"op":"move","from":"/s","path":"/x/y"}]`, "For Operation(0): Add Operation can only create a child object of an existing node(array or object) and cannot create path recursively, no path found beyond: /x."},
	} {
		ops, _, err := Parse([]byte(tc.ops))
		if err != nil {
			t.Fatal(err)
		}
		doc, _ := query.ParseJSON([]byte(`{"s":"text","arr":[1,2],"o":{}}`))
		var failed error
		for i := range ops {
			if failed = ops[i].Apply(doc, i+1); failed != nil {
				break
			}
		}
		if failed == nil || failed.Error() != tc.want {
			t.Errorf("%s = %v\nwant %s", tc.ops, failed, tc.want)
		}
	}
}

func TestTouchesPK(t *testing.T) {
	def, err := document.ParsePKDef([]byte(`{"paths":["/tenant/id"],"kind":"Hash"}`))
	if err != nil {
		t.Fatal(err)
	}
	for body, want := range map[string]bool{
		`[{"op":"set","path":"/tenant/id","value":1}]`:        true,
		`[{"op":"remove","path":"/tenant"}]`:                  true,
		`[{"op":"set","path":"/tenant/name","value":1}]`:      false,
		`[{"op":"move","from":"/tenant/id","path":"/other"}]`: true,
	} {
		ops, _, err := Parse([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		if got := ops[0].TouchesPK(def); got != want {
			t.Errorf("TouchesPK(%s) = %v, want %v", body, got, want)
		}
	}
}

func repeat(s string, n int) string {
	out := s
	for i := 1; i < n; i++ {
		out += "," + s
	}
	return out
}
