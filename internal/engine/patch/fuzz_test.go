package patch

import (
	"errors"
	"testing"

	"github.com/ebbdb/ebb/internal/engine/dberr"
	"github.com/ebbdb/ebb/internal/query"
)

// FuzzPatch checks that no patch body makes Parse or Apply panic, that
// every refusal is a 400, and that applying the parsed operations is
// repeatable: a second document parsed from the same JSON comes out the
// same, as it must when a transaction runs again after a conflict, with
// the operations applied as the engine applies them (each a copy of the
// parsed one).
func FuzzPatch(f *testing.F) {
	for _, s := range [][2]string{
		{`{"id":"a","n":1,"o":{"k":[1,2]}}`, `[{"op":"set","path":"/a","value":{"n":1}},{"op":"incr","path":"/a/n","value":1}]`},
		{`{"id":"a","arr":[1,2,3]}`, `{"condition":"from c where c.n > 0","operations":[{"op":"add","path":"/arr/1","value":9},{"op":"remove","path":"/arr/0"}]}`},
		{`{"id":"a","x":{"y":{}}}`, `[{"op":"move","from":"/x","path":"/z"},{"op":"replace","path":"/z/y","value":[{"q":1}]},{"op":"add","path":"/z/y/-","value":2}]`},
		{`{"id":"a","n":9223372036854775807}`, `[{"op":"incr","path":"/n","value":1}]`},
		{`{"id":"a","a~b":{"c/d":1}}`, `[{"op":"incr","path":"/a~0b/c~1d","value":-1.5}]`},
		{`{"id":"a"}`, `[{"op":"set","path":"/_ts","value":1}]`},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, doc, body string) {
		if len(doc) > 4096 || len(body) > 4096 {
			return
		}
		if _, err := query.ParseJSON([]byte(doc)); err != nil {
			return
		}
		ops, _, err := Parse([]byte(body))
		if err != nil {
			var de *dberr.Error
			if !errors.As(err, &de) || de.Kind != dberr.KindBadRequest {
				t.Fatalf("Parse(%q): %v, want a 400", body, err)
			}
			return
		}
		apply := func() (string, error) {
			v, _ := query.ParseJSON([]byte(doc))
			if v.Kind() != query.Object {
				return "", nil
			}
			for i := range ops {
				op := ops[i]
				if err := op.Apply(v, i+1); err != nil {
					var de *dberr.Error
					if !errors.As(err, &de) || de.Kind != dberr.KindBadRequest {
						t.Fatalf("Apply(%q) to %q: %v, want a 400", body, doc, err)
					}
					return "", err
				}
			}
			return string(v.AppendJSON(nil)), nil
		}
		first, err1 := apply()
		again, err2 := apply()
		if first != again || (err1 == nil) != (err2 == nil) || err1 != nil && err1.Error() != err2.Error() {
			t.Fatalf("%q on %q: first %q (%v), again %q (%v)", body, doc, first, err1, again, err2)
		}
		if err1 == nil && first != "" {
			if _, err := query.ParseJSON([]byte(first)); err != nil {
				t.Fatalf("%q on %q gave invalid JSON %q: %v", body, doc, first, err)
			}
		}
	})
}
