package query

import (
	"strings"
	"testing"
)

func TestIndexHints(t *testing.T) {
	params := []Param{
		{Name: "@n", Value: NumberValue(7)},
		{Name: "@s", Value: StringValue("ab")},
		{Name: "@arr", Value: NewArray(NumberValue(1))},
		{Name: "@f", Value: BoolValue(false)},
	}
	for _, tc := range []struct {
		query string
		want  string // hints joined by "; "
	}{
		{"SELECT * FROM c", ""},
		{"SELECT * FROM c WHERE c.a = 1", "/a = 1"},
		{"SELECT * FROM c WHERE 1 = c.a", "/a = 1"},
		{"SELECT * FROM c WHERE c.a.b = 'x'", `/a/b = "x"`},
		{`SELECT * FROM c WHERE c["x y"].b = null`, "/x y/b = null"},
		{"SELECT * FROM root r WHERE r.a = true", "/a = true"},
		{"SELECT * FROM c WHERE c.a = @n", "/a = 7"},
		{"SELECT * FROM c WHERE c.a = -0", "/a = 0"},
		{"SELECT * FROM c WHERE c.a = @missing", ""},
		{"SELECT * FROM c WHERE c.a = @arr", ""},
		{"SELECT * FROM c WHERE c.a = [1]", ""},
		{"SELECT * FROM c WHERE c.a = c.b", ""},
		{"SELECT * FROM c WHERE c.a != 1", ""},
		{"SELECT * FROM c WHERE c.a[0] = 1", ""},
		{"SELECT * FROM c WHERE c = 1", ""},
		{"SELECT * FROM c WHERE c.a IN (1, 'x', 1)", `/a IN (1, "x")`},
		{"SELECT * FROM c WHERE c.a IN (2)", "/a = 2"},
		{"SELECT * FROM c WHERE c.a IN (2, c.b)", ""},
		{"SELECT * FROM c WHERE c.a NOT IN (2)", ""},
		{"SELECT * FROM c WHERE c.a > 5", "/a > 5"},
		{"SELECT * FROM c WHERE c.a >= 5", "/a >= 5"},
		{"SELECT * FROM c WHERE c.a < 'm'", `/a < "m"`},
		{"SELECT * FROM c WHERE c.a <= 'm'", `/a <= "m"`},
		{"SELECT * FROM c WHERE 5 < c.a", "/a > 5"},
		{"SELECT * FROM c WHERE 5 >= c.a", "/a <= 5"},
		{"SELECT * FROM c WHERE c.a BETWEEN 1 AND 9", "/a >= 1 <= 9"},
		{"SELECT * FROM c WHERE c.a BETWEEN 1 AND 'z'", ""},
		{"SELECT * FROM c WHERE c.a NOT BETWEEN 1 AND 9", ""},
		{"SELECT * FROM c WHERE STARTSWITH(c.name, @s)", `/name STARTSWITH "ab"`},
		{"SELECT * FROM c WHERE STARTSWITH(c.name, 'ab', false)", `/name STARTSWITH "ab"`},
		{"SELECT * FROM c WHERE STARTSWITH(c.name, 'ab', @f)", `/name STARTSWITH "ab"`},
		{"SELECT * FROM c WHERE STARTSWITH(c.name, 'ab', true)", ""},
		{"SELECT * FROM c WHERE startswith(c.name, 1)", ""},
		{"SELECT * FROM c WHERE IS_DEFINED(c.a)", "/a IS_DEFINED"},
		{"SELECT * FROM c WHERE NOT IS_DEFINED(c.a)", ""},
		{"SELECT * FROM c WHERE ARRAY_CONTAINS(c.tags, 'x')", `/tags/[] = "x"`},
		{"SELECT * FROM c WHERE ARRAY_CONTAINS(c.tags, {'a': 1})", ""},
		{"SELECT * FROM c WHERE ARRAY_CONTAINS(c.tags, 'x', true)", ""},
		{"SELECT * FROM c WHERE c.a = 1 AND c.b > 2 AND (c.c = 3 OR c.d = 4)", "/a = 1; /b > 2"},
		{"SELECT * FROM c WHERE (c.a = 1 AND c.b = 2) AND c.e = 3", "/a = 1; /b = 2; /e = 3"},
		{"SELECT * FROM c WHERE c.a = 1 OR c.b = 2", ""},
		{"SELECT * FROM c WHERE NOT (c.a = 1)", ""},
		{"SELECT c.x FROM c JOIN t IN c.tags WHERE c.a = 1 AND t = 'x'", "/a = 1"},
		{"SELECT * FROM c.children ch WHERE ch.a = 1", ""},
		{"SELECT * FROM x IN c.arr WHERE x.a = 1", ""},
		{"SELECT VALUE COUNT(1) FROM c WHERE c.a = 1", "/a = 1"},
		{"SELECT * FROM c WHERE EXISTS(SELECT VALUE t FROM t IN c.tags WHERE t.a = 1)", ""},
	} {
		q, err := Parse(tc.query)
		if err != nil {
			t.Fatalf("%s: %v", tc.query, err)
		}
		p, err := q.Bind(params)
		if err != nil {
			t.Fatalf("%s: %v", tc.query, err)
		}
		var got []string
		for _, h := range p.IndexHints() {
			got = append(got, h.String())
		}
		if g := strings.Join(got, "; "); g != tc.want {
			t.Errorf("%s:\n got  %s\n want %s", tc.query, g, tc.want)
		}
	}
}
