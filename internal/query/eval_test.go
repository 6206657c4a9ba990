package query

import (
	"context"
	"testing"
	"time"
)

const evalDoc = `{"id":"d1","n":5,"f":2.5,"s":"Hello World","b":true,"z":null,"arr":[1,2,3],` +
	`"objs":[{"a":1,"b":2},{"a":3}],"o":{"x":1,"y":"two"},"e":[],"neg":-3,"str5":"5",` +
	`"dt":"2024-02-29T10:20:30.1234567Z","text":"The quick brown fox jumps","uni":"héllo"}`

var evalNow = time.Date(2024, 3, 15, 12, 34, 56, 789123456, time.UTC)

// evalExpr runs SELECT VALUE <expr> FROM c over evalDoc and returns the
// value's JSON, or "undefined" if there is no row.
func evalExpr(t *testing.T, expr string, params ...Param) string {
	t.Helper()
	rows := runQuery(t, "SELECT VALUE "+expr+" FROM c", memSource{{key: []byte("k"), doc: []byte(evalDoc)}}, params...)
	switch len(rows) {
	case 0:
		return "undefined"
	case 1:
		return rows[0]
	}
	t.Fatalf("%s: got %d rows", expr, len(rows))
	return ""
}

// runQuery runs a query to completion with one big page and returns rows.
func runQuery(t *testing.T, text string, src Source, params ...Param) []string {
	t.Helper()
	q, err := Parse(text)
	if err != nil {
		t.Fatalf("Parse(%q): %v", text, err)
	}
	p, err := q.Bind(params)
	if err != nil {
		t.Fatalf("Bind(%q): %v", text, err)
	}
	var rows []string
	var tok []byte
	for {
		pg, err := p.Page(context.Background(), src, PageRequest{MaxItemCount: 1000, Continuation: tok, Env: Env{Now: evalNow}})
		if err != nil {
			t.Fatalf("Page(%q): %v", text, err)
		}
		for _, r := range pg.Rows() {
			rows = append(rows, string(r))
		}
		if pg.Next == nil {
			return rows
		}
		tok = pg.Next
	}
}

type exprCase struct{ expr, want string }

func runExprCases(t *testing.T, cases []exprCase, params ...Param) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.expr, func(t *testing.T) {
			if got := evalExpr(t, tt.expr, params...); got != tt.want {
				t.Errorf("SELECT VALUE %s: got %s, want %s", tt.expr, got, tt.want)
			}
		})
	}
}

func TestEvalOperators(t *testing.T) {
	runExprCases(t, []exprCase{
		// Paths.
		{"c.n", "5"},
		{"c.o.y", `"two"`},
		{`c["o"]["x"]`, "1"},
		{"c.arr[1]", "2"},
		{"c.arr[3]", "undefined"},
		{"c.arr[-1]", "undefined"},
		{"c.arr[0.5]", "undefined"},
		{"c.objs[1].a", "3"},
		{"c.missing", "undefined"},
		{"c.missing.deeper", "undefined"},
		{"c.n.x", "undefined"},
		{"c.s[0]", "undefined"},
		{"c[@key]", `"Hello World"`},
		{`c["arr"][c.arr[0]]`, "2"},
		// Arithmetic.
		{"c.n + 1", "6"},
		{"c.n - c.f * 2", "0"},
		{"7 / 2", "3.5"},
		{"7 % 3", "1"},
		{"-7 % 3", "-1"},
		{"1 / 0", "undefined"},
		{"0 / 0", "undefined"},
		{"c.n + '1'", "undefined"},
		{"c.n + c.missing", "undefined"},
		{"c.n + null", "undefined"},
		{"-c.n", "-5"},
		{"-c.s", "undefined"},
		{"+c.n", "5"},
		{"0.1 + 0.2", "0.30000000000000004"},
		{"0x10 + 1", "17"},
		// Bitwise (32-bit, as JavaScript).
		{"6 & 3", "2"},
		{"6 | 3", "7"},
		{"6 ^ 3", "5"},
		{"~5", "-6"},
		{"1 << 31", "-2147483648"},
		{"-16 >> 2", "-4"},
		{"-16 >>> 28", "15"},
		{"5.9 | 0", "5"},
		{"'a' | 0", "undefined"},
		// Comparison.
		{"c.n = 5", "true"},
		{"c.n = 5.0", "true"},
		{"c.n != 4", "true"},
		{"c.n <> 5", "false"},
		{"c.n < 10", "true"},
		{"c.n >= 5", "true"},
		{"'a' < 'b'", "true"},
		{"'B' < 'a'", "true"},
		{"false < true", "true"},
		{"c.n = '5'", "undefined"},
		{"c.n < '6'", "undefined"},
		{"c.z = null", "true"},
		{"c.n = null", "undefined"},
		{"c.missing = null", "undefined"},
		{"c.missing = c.missing", "undefined"},
		{"c.arr = [1,2,3]", "true"},
		{"c.o = {y: 'two', x: 1}", "true"},
		{"c.arr != [1]", "true"},
		{"c.arr < [2]", "undefined"},
		// Logic, three-valued.
		{"true AND true", "true"},
		{"true AND false", "false"},
		{"false AND c.missing", "false"},
		{"c.missing AND false", "false"},
		{"true AND c.missing", "undefined"},
		{"true AND 1", "undefined"},
		{"true OR c.missing", "true"},
		{"c.missing OR true", "true"},
		{"false OR c.missing", "undefined"},
		{"false OR false", "false"},
		{"NOT true", "false"},
		{"NOT c.missing", "undefined"},
		{"NOT 1", "undefined"},
		{"NOT (c.n = '5')", "undefined"},
		// IN, BETWEEN.
		{"c.n IN (1, 5)", "true"},
		{"c.n IN ('5', 6)", "false"},
		{"c.n NOT IN (1, 2)", "true"},
		{"c.missing IN (1)", "undefined"},
		{"c.o IN ({x: 1, y: 'two'})", "true"},
		{"c.n BETWEEN 1 AND 5", "true"},
		{"c.n BETWEEN 6 AND 9", "false"},
		{"c.n NOT BETWEEN 6 AND 9", "true"},
		{"c.n BETWEEN 'a' AND 9", "undefined"},
		{"c.s BETWEEN 'A' AND 'Z'", "true"},
		// LIKE.
		{"c.s LIKE 'Hello%'", "true"},
		{"c.s LIKE '%World'", "true"},
		{"c.s LIKE '%lo W%'", "true"},
		{"c.s LIKE 'hello%'", "false"},
		{"c.s LIKE 'H_llo World'", "true"},
		{"c.s LIKE 'H[aeiou]llo%'", "true"},
		{"c.s LIKE 'H[^e]llo%'", "false"},
		{"c.s LIKE '[A-H]%'", "true"},
		{"c.s NOT LIKE 'x%'", "true"},
		{"'50%' LIKE '50!%' ESCAPE '!'", "true"},
		{"'50x' LIKE '50!%' ESCAPE '!'", "false"},
		{`'a_b' LIKE 'a\\_b' ESCAPE '\\'`, "true"},
		{`'axb' LIKE 'a\\_b' ESCAPE '\\'`, "false"},
		{"c.n LIKE '5'", "undefined"},
		{"c.s LIKE @pat", "true"},
		{"'abc' LIKE 'a%' ESCAPE 'xy'", "undefined"},
		{"'[x' LIKE '[x'", "true"},
		{"'aXbXc' LIKE '%X%X%'", "true"},
		{"'héllo' LIKE 'h_llo'", "true"},
		// Ternary, coalesce, concat.
		{"c.b ? 'y' : 'n'", `"y"`},
		{"c.n ? 'y' : 'n'", `"n"`},
		{"c.missing ? 'y' : 'n'", `"n"`},
		{"c.missing ?? 'd'", `"d"`},
		{"c.z ?? 'd'", "null"},
		{"c.missing ?? c.missing2 ?? 3", "3"},
		{"'a' || 'b' || c.id", `"abd1"`},
		{"'a' || 1", "undefined"},
		// Constructors.
		{"{a: c.n, b: c.missing}", `{"a":5}`},
		{"{}", `{}`},
		{"[c.n, c.missing, null]", `[5,null]`},
		{"[]", `[]`},
		{"undefined", "undefined"},
		{"null", "null"},
		{`'it\'s "q" \u00e9'`, `"it's \"q\" é"`},
		// Parameters.
		{"@num + 1", "43"},
		{"@obj.k", `"v"`},
		{"@nope", "undefined"},
		{"@nope = null", "undefined"},
	}, Param{"@key", StringValue("s")}, Param{"@num", NumberValue(42)}, Param{"@obj", NewObject(Member{"k", StringValue("v")})}, Param{"@pat", StringValue("%World")})
}

func TestEvalSubqueries(t *testing.T) {
	runExprCases(t, []exprCase{
		{"(SELECT VALUE 1)", "1"},
		{"(SELECT VALUE x FROM x IN c.arr WHERE x > 1)", "2"},
		{"(SELECT VALUE x FROM x IN c.arr WHERE x > 10)", "undefined"},
		{"(SELECT x FROM x IN c.arr WHERE x > 2)", `{"x":3}`},
		{"EXISTS(SELECT VALUE x FROM x IN c.arr WHERE x = 2)", "true"},
		{"EXISTS(SELECT VALUE x FROM x IN c.e)", "false"},
		{"EXISTS(SELECT VALUE c.missing)", "false"},
		{"ARRAY(SELECT VALUE x * 10 FROM x IN c.arr)", "[10,20,30]"},
		{"ARRAY(SELECT VALUE o.a FROM o IN c.objs WHERE o.b = 2)", "[1]"},
		{"ARRAY(SELECT o.a, o.b FROM o IN c.objs)", `[{"a":1,"b":2},{"a":3}]`},
		{"ARRAY(SELECT VALUE x FROM x IN c.arr ORDER BY x DESC)", "[3,2,1]"},
		{"ARRAY(SELECT TOP 2 VALUE x FROM x IN c.arr)", "[1,2]"},
		{"ARRAY(SELECT VALUE x FROM x IN c.arr OFFSET 1 LIMIT 1)", "[2]"},
		{"ARRAY(SELECT DISTINCT VALUE x.a > 1 FROM x IN c.objs)", "[false,true]"},
		{"(SELECT VALUE COUNT(1) FROM x IN c.arr)", "3"},
		{"(SELECT VALUE SUM(x) FROM x IN c.arr)", "6"},
		{"(SELECT VALUE AVG(x) FROM x IN c.e)", "undefined"},
		{"(SELECT COUNT(1) AS n, MAX(x) AS m FROM x IN c.arr)", `{"n":3,"m":3}`},
		{"ARRAY(SELECT o.a AS a, COUNT(1) AS n FROM o IN [{a:1},{a:2},{a:1}] GROUP BY o.a)", `[{"a":1,"n":2},{"a":2,"n":1}]`},
		{"ARRAY(SELECT VALUE x FROM x IN c.arr JOIN y IN c.arr WHERE x = y)", "[1,2,3]"},
		{"ARRAY(SELECT VALUE [x, y] FROM x IN [1,2] JOIN y IN ['a','b'])", `[[1,"a"],[1,"b"],[2,"a"],[2,"b"]]`},
		{"ARRAY(SELECT * FROM x IN c.arr WHERE x >= c.n - 3)", "[2,3]"},
		{"(SELECT VALUE (SELECT VALUE y FROM y IN c.arr WHERE y = x) FROM x IN c.arr WHERE x = 3)", "3"},
		{"ARRAY(SELECT VALUE t FROM (SELECT VALUE x * 2 FROM x IN c.arr) t WHERE t > 2)", "[4,6]"},
		{"ARRAY(SELECT VALUE o FROM c.o o)", `[{"x":1,"y":"two"}]`},
		{"ARRAY(SELECT VALUE x FROM x IN c.missing)", "[]"},
		{"ARRAY(SELECT VALUE x FROM x IN c.o)", "[]"},
	})
}
