package query

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
)

// FuzzParse checks that no query text makes the parser, checker or
// executor panic or hang, and that the canonical form of an accepted query
// parses back to itself.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"SELECT * FROM c",
		"SELECT VALUE c.id FROM c WHERE c.a = @p AND c.b IN (1, 2) ORDER BY c.id DESC",
		"SELECT c.a, COUNT(1) AS n FROM c GROUP BY c.a",
		"SELECT TOP 3 t FROM c JOIN t IN c.tags WHERE EXISTS(SELECT VALUE x FROM x IN t.y)",
	} {
		f.Add(s)
	}
	src := docs(`{"id":"a","a":1,"b":"x","tags":[{"y":[1,2]},{"y":[]}],"o":{"k":null}}`, `{"id":"b","a":[1,{"z":2}],"tags":"no"}`)
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) > 4096 {
			return
		}
		q, err := Parse(text)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("Parse(%q): error of type %T, want *Error", text, err)
			}
			return
		}
		if err := checkCanonical(q); err != nil {
			t.Fatalf("Parse(%q) ok, but %v", text, err)
		}
		p, err := q.Bind([]Param{{Name: "@p", Value: NumberValue(1)}})
		if err != nil {
			return
		}
		var tok []byte
		for i := 0; i < 10; i++ {
			pg, err := p.Page(context.Background(), src, PageRequest{MaxItemCount: 1, Continuation: tok, Env: Env{UDFs: echoUDFs{}}})
			if err != nil {
				t.Fatalf("Page(%q): %v", text, err)
			}
			for _, r := range pg.Rows() {
				if !json.Valid(r) {
					t.Fatalf("Page(%q): invalid JSON row %q", text, r)
				}
			}
			if pg.Next == nil {
				break
			}
			tok = pg.Next
		}
		_ = p.QueryInfo()
	})
}

// FuzzParseJSON checks that ParseJSON never panics, accepts only valid
// JSON, and that what it accepts re-encodes stably.
func FuzzParseJSON(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `[1,"x",null,true,{"b":[]}]`, `"\ud83d\ude00"`, `-1.5e+10`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := ParseJSON(b)
		if err != nil {
			if _, ok := err.(*JSONError); !ok {
				t.Fatalf("ParseJSON(%q): error of type %T", b, err)
			}
			return
		}
		if !json.Valid(b) {
			t.Fatalf("ParseJSON accepted invalid JSON %q", b)
		}
		out := v.AppendJSON(nil)
		v2, err := ParseJSON(out)
		if err != nil {
			t.Fatalf("re-parse of %q (from %q): %v", out, b, err)
		}
		if !Equal(v, v2) {
			t.Fatalf("round trip changed the value: %q -> %q", b, out)
		}
		if out2 := v2.AppendJSON(nil); string(out2) != string(out) {
			t.Fatalf("re-encoding unstable: %q vs %q", out, out2)
		}
		if v.Kind() == Object && len(v.Members()) > 0 {
			name := v.Members()[0].Name
			part, err := parseDocFields(b, []string{name})
			if err != nil {
				t.Fatalf("parseDocFields(%q): %v", b, err)
			}
			if !Equal(part.Get(name), v.Get(name)) {
				t.Fatalf("parseDocFields(%q, %q): got %s, want %s", b, name, part.Get(name).JSON(), v.Get(name).JSON())
			}
		}
		_ = Compare(v, v2)
	})
}

// echoUDFs is a UDFs whose every function returns its first argument.
type echoUDFs struct{}

func (echoUDFs) Call(_ string, args []Value) (Value, error) {
	if len(args) == 0 {
		return UndefinedValue(), nil
	}
	return args[0], nil
}

// checkCanonical says what is wrong with q's canonical form: that it does
// not parse, or that it parses to another canonical form.
func checkCanonical(q *Query) error {
	canon := q.String()
	q2, err := Parse(canon)
	if err != nil {
		return fmt.Errorf("its canonical form %q fails: %w", canon, err)
	}
	if again := q2.String(); again != canon {
		return fmt.Errorf("its canonical form is unstable:\n%s\n%s", canon, again)
	}
	return nil
}
