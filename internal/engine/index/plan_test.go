package index

import (
	"testing"

	"github.com/ebbdb/ebb/internal/query"
)

func TestChooseIndex(t *testing.T) {
	pol, _ := ParsePolicy([]byte(`{"includedPaths":[{"path":"/*"}],"excludedPaths":[{"path":"/x/?"}]}`))
	for _, tc := range []struct{ where, want string }{
		{"c.n > 1 AND c.a = 1", "/a = 1"},
		{"c.a IN (1, 2) AND c.n > 1", "/a IN (1, 2)"},
		{"c.n > 1 AND STARTSWITH(c.s, 'a')", `/s STARTSWITH "a"`},
		{"c.n > 1 AND c.n < 5", "/n > 1 < 5"},
		{"c.n > 1 AND c.n >= 3 AND c.n <= 9 AND c.n < 9", "/n >= 3 < 9"},
		{"c.n > 1 AND c.n < 'z'", "/n > 1"},
		{"IS_DEFINED(c.a) AND c.n > 1", "/n > 1"},
		{"c.x = 1 AND IS_DEFINED(c.a)", "/a IS_DEFINED"},
		{"c.x = 1", ""},
	} {
		q, err := query.Parse("SELECT * FROM c WHERE " + tc.where)
		if err != nil {
			t.Fatal(err)
		}
		plan, err := q.Bind(nil)
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		if h, _ := chooseIndex(plan.IndexHints(), pol); h != nil {
			got = h.String()
		}
		if got != tc.want {
			t.Errorf("%s: chose %q, want %q", tc.where, got, tc.want)
		}
	}
}
