package query

import (
	"errors"
	"strings"
	"testing"
)

// TestParseCanonical parses valid queries and prints them back in canonical
// form: it pins what each construct parses to, including precedence.
func TestParseCanonical(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"star", "SELECT * FROM c", "SELECT * FROM c"},
		{"keywords any case", "select * from c where c.a = 1", "SELECT * FROM c WHERE c.a = 1"},
		{"root alias", "SELECT * FROM root r", "SELECT * FROM root r"},
		{"container alias with AS", "SELECT * FROM docs AS c", "SELECT * FROM docs c"},
		{"value", "SELECT VALUE c.id FROM c", "SELECT VALUE c.id FROM c"},
		{"list with aliases", "SELECT c.id, c.a AS x, c.b y FROM c", "SELECT c.id, c.a AS x, c.b AS y FROM c"},
		{"distinct top", "SELECT DISTINCT TOP 5 c.a FROM c", "SELECT DISTINCT TOP 5 c.a FROM c"},
		{"top param", "SELECT TOP @n * FROM c", "SELECT TOP @n * FROM c"},
		{"from path", "SELECT * FROM c.children ch", "SELECT * FROM c.children ch"},
		{"from path inferred alias", "SELECT * FROM c.children", "SELECT * FROM c.children"},
		{"from in", "SELECT * FROM x IN c.arr", "SELECT * FROM x IN c.arr"},
		{"joins", "SELECT c.id FROM c JOIN t IN c.tags JOIN s IN t.subs", "SELECT c.id FROM c JOIN t IN c.tags JOIN s IN t.subs"},
		{"join subquery", "SELECT VALUE c.id FROM c JOIN (SELECT VALUE t FROM t IN c.tags WHERE t = 'a') x", "SELECT VALUE c.id FROM c JOIN (SELECT VALUE t FROM t IN c.tags WHERE t = \"a\") x"},
		{"group by", "SELECT c.a, COUNT(1) AS n FROM c GROUP BY c.a", "SELECT c.a, COUNT(1) AS n FROM c GROUP BY c.a"},
		{"order by many", "SELECT * FROM c ORDER BY c.a, c.b DESC, c.c ASC", "SELECT * FROM c ORDER BY c.a, c.b DESC, c.c"},
		{"offset limit", "SELECT * FROM c OFFSET 10 LIMIT @l", "SELECT * FROM c OFFSET 10 LIMIT @l"},
		{"no from", "SELECT VALUE 1+1", "SELECT VALUE 1 + 1"},
		{"brackets", `SELECT c["x y"], c[0], c[@p] FROM c`, `SELECT c["x y"], c[0], c[@p] FROM c`},
		{"keyword property", `SELECT c["value"], c["select"] FROM c`, `SELECT c["value"], c["select"] FROM c`},
		{"precedence arithmetic", "SELECT VALUE 1 + 2 * 3 - 4 / 2 % 3", "SELECT VALUE 1 + (2 * 3) - (4 / 2 % 3)"},
		{"precedence logic", "SELECT VALUE c.a OR c.b AND NOT c.c = 1 FROM c", "SELECT VALUE c.a OR (c.b AND (NOT (c.c = 1))) FROM c"},
		{"precedence bitwise", "SELECT VALUE 1 | 2 ^ 3 & 4 << 1 FROM c", "SELECT VALUE 1 | (2 ^ (3 & (4 << 1))) FROM c"},
		{"concat below arithmetic", "SELECT VALUE 'a' || 'b' = 'ab' FROM c", `SELECT VALUE ("a" || "b") = "ab" FROM c`},
		{"coalesce and ternary", "SELECT VALUE c.a ?? c.b ? 1 : 2 FROM c", "SELECT VALUE (c.a ?? c.b) ? 1 : 2 FROM c"},
		{"nested ternary", "SELECT VALUE c.a ? 1 : c.b ? 2 : 3 FROM c", "SELECT VALUE c.a ? 1 : c.b ? 2 : 3 FROM c"},
		{"in not in", "SELECT * FROM c WHERE c.a IN (1, 2) AND c.b NOT IN ('x')", `SELECT * FROM c WHERE (c.a IN (1, 2)) AND (c.b NOT IN ("x"))`},
		{"between", "SELECT * FROM c WHERE c.a BETWEEN 1 AND 5 AND c.b NOT BETWEEN 2 AND 3", "SELECT * FROM c WHERE (c.a BETWEEN 1 AND 5) AND (c.b NOT BETWEEN 2 AND 3)"},
		{"like escape", `SELECT * FROM c WHERE c.s LIKE '10!%%' ESCAPE '!' OR c.s NOT LIKE "a_"`, `SELECT * FROM c WHERE (c.s LIKE "10!%%" ESCAPE "!") OR (c.s NOT LIKE "a_")`},
		{"unary", "SELECT VALUE -c.a + +c.b - ~c.c FROM c", "SELECT VALUE (-c.a) + (+c.b) - (~c.c) FROM c"},
		{"nested prefix operators", "SELECT VALUE - -1 + - - c.a FROM c", "SELECT VALUE 1 + (- -c.a) FROM c"},
		{"negative literal folded", "SELECT VALUE -1", "SELECT VALUE -1"},
		{"shifts", "SELECT VALUE 1 << 2 >> 1 >>> 0", "SELECT VALUE 1 << 2 >> 1 >>> 0"},
		{"not equal spellings", "SELECT VALUE 1 != 2 AND 1 <> 2", "SELECT VALUE (1 != 2) AND (1 != 2)"},
		{"object and array", `SELECT VALUE {a: 1, "b c": [c.x, 'y'], 'd': {}} FROM c`, `SELECT VALUE {"a": 1, "b c": [c.x, "y"], "d": {}} FROM c`},
		{"literals", "SELECT VALUE [true, false, null, undefined, 0x1F, 1.5e3, 'it\\'s']", `SELECT VALUE [true, false, null, undefined, 31, 1500, "it's"]`},
		{"function names canonical", "SELECT VALUE is_defined(c.a) AND StartsWith(c.s, 'x') FROM c", `SELECT VALUE IS_DEFINED(c.a) AND STARTSWITH(c.s, "x") FROM c`},
		{"subqueries", "SELECT VALUE [(SELECT VALUE 1), EXISTS(SELECT * FROM t IN c.tags), ARRAY(SELECT VALUE t FROM t IN c.tags)] FROM c", "SELECT VALUE [(SELECT VALUE 1), EXISTS(SELECT * FROM t IN c.tags), ARRAY(SELECT VALUE t FROM t IN c.tags)] FROM c"},
		{"comments", "SELECT -- the fields\n c.id /* all */ FROM c", "SELECT c.id FROM c"},
		{"aggregate value", "SELECT VALUE COUNT(1) FROM c", "SELECT VALUE COUNT(1) FROM c"},
		{"countif", "SELECT COUNTIF(c.a > 1) AS n FROM c", "SELECT CountIf(c.a > 1) AS n FROM c"},
		{"unicode identifier", "SELECT VALUE é.x FROM é", "SELECT VALUE é.x FROM é"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := Parse(tt.in)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.in, err)
			}
			if got := q.String(); got != tt.want {
				t.Errorf("Parse(%q):\n got %s\nwant %s", tt.in, got, tt.want)
			}
			// The canonical form parses to itself.
			if err := checkCanonical(q); err != nil {
				t.Errorf("Parse(%q) ok, but %v", tt.in, err)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, in  string
		line, col int
		msg       string
	}{
		// As the service's grammar refuses them.
		{"object trailing comma", "SELECT VALUE {'a': 1, }", 1, 23, "expected property name, found '}'"},
		{"number and a letter after its point", "SELECT VALUE -0.E", 1, 15, `invalid number "0.E"`},
		{"between after between", "SELECT VALUE 1 BETWEEN 2 AND 3 BETWEEN 4 AND 5", 1, 32, "BETWEEN cannot follow BETWEEN: put one of them in parentheses"},
		{"misspelt FROM", "SELECT c.name FORM c", 1, 15, "expected FROM, found 'FORM'"},
		// Cosmos DB reserves keywords after '.', and has no "==".
		{"keyword property", "SELECT c.value FROM c", 1, 10, `incorrect syntax near 'value': a reserved word cannot follow '.'; write ["value"] instead`},
		{"double equals", "SELECT * FROM c WHERE c.a == 1", 1, 28, "expected expression, found '='"},
		{"misspelt FROM after star", "SELECT * FORM c", 1, 10, "expected FROM, found 'FORM'"},
		{"misspelt WHERE", "SELECT * FROM c WHRE c.x = 1", 1, 17, "expected WHERE, JOIN, GROUP BY, ORDER BY, OFFSET or end of query, found 'WHRE'"},
		{"empty", "", 1, 1, "expected SELECT, found end of query"},
		{"not select", "DELETE FROM c", 1, 1, "expected SELECT, found 'DELETE'"},
		{"nothing selected", "SELECT FROM c", 1, 8, "expected '*', VALUE or an expression after SELECT, found 'FROM'"},
		{"missing where expr", "SELECT * FROM c WHERE", 1, 22, "expected expression, found end of query"},
		{"missing from source", "SELECT * FROM", 1, 14, "expected a container name, an alias or a subquery, found end of query"},
		{"keyword as source", "SELECT * FROM WHERE", 1, 15, "expected a container name, an alias or a subquery, found 'WHERE'"},
		{"dangling operator", "SELECT * FROM c WHERE c.a =", 1, 28, "expected expression, found end of query"},
		{"second line", "SELECT *\nFROM c\nWHERE c.a = = 1", 3, 13, "expected expression, found '='"},
		{"unclosed paren", "SELECT * FROM c WHERE (c.a = 1", 1, 31, "expected ')' to close parenthesis opened at line 1, column 23, found end of query"},
		{"unclosed call", "SELECT VALUE LOWER(c.a FROM c", 1, 24, "expected ')' to close argument list opened at line 1, column 19, found 'FROM'"},
		{"unclosed bracket", "SELECT VALUE c[0 FROM c", 1, 18, "expected ']' to close index opened at line 1, column 15, found 'FROM'"},
		{"unclosed object", "SELECT VALUE {a: 1", 1, 19, "expected '}' to close object opened at line 1, column 14, found end of query"},
		{"object bad key", "SELECT VALUE {1: 2}", 1, 15, "expected property name, found '1'"},
		{"empty in list", "SELECT * FROM c WHERE c.a IN ()", 1, 31, "expected expression, found ')'"},
		{"in without parens", "SELECT * FROM c WHERE c.a IN 1", 1, 30, "expected '(', found '1'"},
		{"not without predicate", "SELECT * FROM c WHERE c.a NOT 1", 1, 31, "expected IN, LIKE or BETWEEN after NOT, found '1'"},
		{"between without and", "SELECT * FROM c WHERE c.a BETWEEN 1 OR 2", 1, 37, "expected AND, found 'OR'"},
		{"order without by", "SELECT * FROM c ORDER c.a", 1, 23, "expected BY, found 'c'"},
		{"offset without limit", "SELECT * FROM c OFFSET 1", 1, 25, "expected LIMIT, found end of query"},
		{"limit without offset", "SELECT * FROM c LIMIT 1", 1, 17, "LIMIT requires OFFSET"},
		{"top not a number", "SELECT TOP x * FROM c", 1, 12, "expected integer or parameter after TOP, found 'x'"},
		{"top negative", "SELECT TOP -1 * FROM c", 1, 12, "expected integer or parameter after TOP, found '-'"},
		{"top fraction", "SELECT TOP 1.5 * FROM c", 1, 12, "the TOP count must be a non-negative integer"},
		{"trailing garbage", "SELECT * FROM c ORDER BY c.a DESC x", 1, 35, "expected end of query, found 'x'"},
		{"two statements", "SELECT * FROM c SELECT 1", 1, 17, "expected end of query, found 'SELECT'"},
		{"extra close paren", "SELECT VALUE 1)", 1, 15, "expected end of query, found ')'"},
		{"property after dot", "SELECT * FROM c WHERE c.", 1, 25, "expected property name after '.', found end of query"},
		{"number after dot", "SELECT VALUE c.1 FROM c", 1, 16, "expected property name after '.', found '1'"},
		{"illegal character", "SELECT VALUE c.a # 1 FROM c", 1, 18, "expected FROM, found '#'"},
		{"bang alone", "SELECT * FROM c WHERE !c.a", 1, 23, "expected expression, found '!'"},
		{"unterminated string", "SELECT VALUE 'abc", 1, 14, "string literal not terminated"},
		{"bad escape", `SELECT VALUE "a\qb"`, 1, 16, `invalid escape sequence '\q' in string`},
		{"bad hex", "SELECT VALUE 0x", 1, 14, `invalid hexadecimal number "0x"`},
		{"number glued to word", "SELECT VALUE 12abc", 1, 14, `invalid number "12abc"`},
		{"unterminated comment", "SELECT VALUE 1 /* x", 1, 16, "comment not terminated"},
		{"value with alias", "SELECT VALUE c.a AS x FROM c", 1, 18, "SELECT VALUE cannot have an alias"},
		{"as without name", "SELECT c.a AS FROM c", 1, 15, "expected identifier, found 'FROM'"},
		{"udf without name", "SELECT VALUE udf.(1)", 1, 18, "expected function name after udf., found '('"},
		{"exists without subquery", "SELECT VALUE EXISTS(1)", 1, 21, "expected SELECT, found '1'"},
		{"huge number", "SELECT VALUE 1e999", 1, 14, `number "1e999" is out of range`},
		{"param in from", "SELECT * FROM @p", 1, 15, "expected a container name, an alias or a subquery, found '@p'"},
		{"lone at", "SELECT VALUE @", 1, 14, "expected expression, found '@'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(tt.in)
			var qe *Error
			if !errors.As(err, &qe) {
				t.Fatalf("Parse(%q): got %v, want a *Error", tt.in, err)
			}
			if qe.Kind != SyntaxError {
				t.Errorf("Parse(%q): got kind %v, want a syntax error", tt.in, qe.Kind)
			}
			if qe.Line != tt.line || qe.Col != tt.col || !strings.Contains(qe.Msg, tt.msg) {
				t.Errorf("Parse(%q):\n got %d:%d %s\nwant %d:%d %s", tt.in, qe.Line, qe.Col, qe.Msg, tt.line, tt.col, tt.msg)
			}
		})
	}
}

// TestCanonicalKeepsDepth: the canonical form of a query nests no deeper
// than its text, so it parses whenever the query did. Chains parse flat,
// and a parenthesis per operator would nest past MaxDepth; a query plan's
// rewritten query (which the SDKs send back per range) is written the
// same way.
func TestCanonicalKeepsDepth(t *testing.T) {
	chain := func(first, link string, n int) string { return first + strings.Repeat(link, n) }
	for _, text := range []string{
		"SELECT VALUE " + chain("1", " + 1 - 2", 150),
		"SELECT VALUE " + chain("1", " * 2 / 3 % 4", 150),
		"SELECT VALUE " + chain("1", " << 1 >> 1 >>> 1", 150),
		"SELECT VALUE " + chain("1", " & 1 | 2 ^ 3", 150),
		"SELECT VALUE " + chain("'a'", " || 'b'", 150),
		"SELECT VALUE " + chain("c.a", " ?? c.b", 150) + " FROM c",
		"SELECT * FROM c WHERE " + chain("c.a = 1", " AND c.b = 2 OR c.c != 3", 150),
		"SELECT VALUE " + chain("c.a", " = c.b", 150) + " FROM c",
		"SELECT VALUE " + chain("", "c.a ? 1 : ", 90) + "2 FROM c",
		"SELECT VALUE " + chain("", "- + ~", 30) + "c.a FROM c",
		"SELECT VALUE " + chain("", "+", 90) + "0",
		"SELECT * FROM c WHERE " + chain("", "NOT ", 90) + "c.a",
	} {
		q, err := Parse(text)
		if err != nil {
			t.Errorf("Parse(%.60q…): %v", text, err)
			continue
		}
		if err := checkCanonical(q); err != nil {
			t.Errorf("Parse(%.60q…) ok, but %.300v", text, err)
		}
	}
}

func TestErrorFormat(t *testing.T) {
	_, err := Parse("SELECT c.name FORM c")
	if got, want := err.Error(), "Syntax error at line 1, column 15: expected FROM, found 'FORM'"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	_, err = Parse("SELECT * FROM c WHERE c.a = AND c.b = )")
	var qe *Error
	if !errors.As(err, &qe) || len(qe.List) < 2 {
		t.Fatalf("got %v, want several errors", err)
	}
	if !strings.Contains(err.Error(), "more error") {
		t.Errorf("message %q does not mention the other errors", err)
	}
	for i := 1; i < len(qe.List); i++ {
		if qe.List[i].Pos < qe.List[i-1].Pos {
			t.Errorf("errors not sorted: %v", qe.List)
		}
	}
}

// TestParseLimits checks that hostile input gives errors, not crashes or
// hangs.
func TestParseLimits(t *testing.T) {
	deep := "SELECT VALUE " + strings.Repeat("(", 5000) + "1" + strings.Repeat(")", 5000)
	_, err := Parse(deep)
	if err == nil || !strings.Contains(err.Error(), "nested too deeply") {
		t.Errorf("deep parentheses: got %v", err)
	}
	deepNot := "SELECT * FROM c WHERE " + strings.Repeat("NOT ", 5000) + "true"
	if _, err := Parse(deepNot); err == nil || !strings.Contains(err.Error(), "nested too deeply") {
		t.Errorf("deep NOT: got %v", err)
	}
	deepMinus := "SELECT VALUE " + strings.Repeat("-", 5000) + "1"
	if _, err := Parse(deepMinus); err == nil {
		t.Errorf("deep unary minus: got no error")
	}
	deepSub := "SELECT VALUE " + strings.Repeat("(SELECT VALUE ", 200) + "1" + strings.Repeat(")", 200)
	if _, err := Parse(deepSub); err == nil {
		t.Errorf("deep subqueries: got no error")
	}
	deepArr := "SELECT VALUE " + strings.Repeat("[", 5000)
	if _, err := Parse(deepArr); err == nil {
		t.Errorf("deep arrays: got no error")
	}
	many := "SELECT " + strings.Repeat("= ", 1000) + "FROM c"
	_, err = Parse(many)
	var qe *Error
	if !errors.As(err, &qe) || len(qe.List) > MaxErrors {
		t.Errorf("many errors: got %v (%d errors)", err, len(qe.List))
	}
	long := "SELECT VALUE " + strings.Repeat("1 + ", 20000) + "1"
	if _, err := Parse(long); err != nil {
		t.Errorf("long flat expression: %v", err)
	}
}
