package query

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckErrors(t *testing.T) {
	tests := []struct {
		name, in string
		col      int
		msg      string
	}{
		{"unknown function", "SELECT VALUE FOO(c.a) FROM c", 14, "'FOO' is not a recognized built-in function name"},
		{"too few arguments", "SELECT VALUE ABS() FROM c", 14, "the ABS function requires 1 argument, found 0"},
		{"too many arguments", "SELECT VALUE ABS(1, 2) FROM c", 14, "the ABS function requires 1 argument, found 2"},
		{"range of arguments", "SELECT VALUE CONTAINS('a') FROM c", 14, "the CONTAINS function requires between 2 and 3 arguments, found 1"},
		{"variadic minimum", "SELECT VALUE CONCAT('a') FROM c", 14, "the CONCAT function requires at least 2 arguments, found 1"},
		{"zero-argument function", "SELECT VALUE PI(1)", 14, "the PI function requires 0 arguments, found 1"},
		{"a count between two forms", "SELECT VALUE NOW('ss')", 14, "the NOW function requires 0 or 2 arguments, found 1"},
		{"unresolved identifier", "SELECT VALUE x.a FROM c", 14, "identifier 'x' could not be resolved"},
		{"container name not in scope after alias", "SELECT VALUE c.id FROM root r", 14, "identifier 'c' could not be resolved"},
		{"in-alias hides container", "SELECT VALUE c.id FROM x IN c.arr", 14, "identifier 'c' could not be resolved"},
		{"identifier without from", "SELECT VALUE c", 14, "identifier 'c' could not be resolved"},
		{"join refers to later alias", "SELECT 1 FROM c JOIN a IN b.x JOIN b IN c.y", 27, "identifier 'b' could not be resolved"},
		{"duplicate alias", "SELECT 1 FROM c JOIN c IN c.arr", 22, "duplicate alias 'c'"},
		{"star without from", "SELECT *", 1, "'SELECT *' is not valid if the FROM clause is omitted"},
		{"star with join", "SELECT * FROM c JOIN t IN c.tags", 1, "'SELECT *' is only valid with a single input set"},
		{"duplicate output name", "SELECT c.a, c.b.a FROM c", 13, "duplicate property name 'a' in the SELECT list"},
		{"duplicate alias name", "SELECT c.a AS x, c.b AS x FROM c", 25, "duplicate property name 'x'"},
		{"duplicate object key", "SELECT VALUE {a: 1, a: 2}", 21, "duplicate property name 'a' in object"},
		{"aggregate in where", "SELECT * FROM c WHERE COUNT(1) > 1", 23, "aggregate COUNT is only allowed in the SELECT list"},
		{"aggregate in order by", "SELECT * FROM c ORDER BY MAX(c.a)", 26, "aggregate MAX is only allowed in the SELECT list"},
		{"order by a function", "SELECT * FROM c ORDER BY LOWER(c.a)", 26, "Unsupported ORDER BY clause. ORDER BY item expression could not be mapped to a document path."},
		{"order by arithmetic", "SELECT * FROM c ORDER BY c.a, -c.b", 31, "Unsupported ORDER BY clause. ORDER BY item expression could not be mapped to a document path."},
		{"order by a parameter index", "SELECT * FROM c ORDER BY c[@p]", 26, "Unsupported ORDER BY clause. ORDER BY item expression could not be mapped to a document path."},
		{"nested aggregate", "SELECT VALUE SUM(COUNT(1)) FROM c", 18, "aggregate COUNT cannot be nested in another aggregate"},
		{"aggregate mixed with field", "SELECT c.a, COUNT(1) FROM c", 8, "property reference 'c.a' is invalid"},
		{"aggregate mixed with alias", "SELECT VALUE [c, COUNT(1)] FROM c", 15, "reference to 'c' is invalid in the select list"},
		{"group by non-grouped field", "SELECT c.b FROM c GROUP BY c.a", 8, "property reference 'c.b' is invalid in the select list because it is not contained in an aggregate function or the GROUP BY clause"},
		{"group by star", "SELECT * FROM c GROUP BY c.a", 1, "'SELECT *' is not valid with GROUP BY"},
		{"group by subquery", "SELECT 1 FROM c GROUP BY (SELECT VALUE 1)", 26, "GROUP BY does not allow subqueries"},
		{"order by with group by", "SELECT c.a FROM c GROUP BY c.a ORDER BY c.a", 41, "ORDER BY is not supported together with GROUP BY"},
		{"outer subquery in from", "SELECT * FROM (SELECT * FROM c) x", 15, "a subquery in the FROM clause of the outermost query is not supported"},
		{"count of a subquery", "SELECT VALUE COUNT(1) FROM (SELECT VALUE c.g FROM c)", 29, "a subquery in the FROM clause of the outermost query is supported only as a count of distinct values"},
		{"count of an ordered distinct", "SELECT VALUE COUNT(1) FROM (SELECT DISTINCT VALUE c.g FROM c ORDER BY c.g)", 29, "a subquery in the FROM clause of the outermost query is supported only as a count of distinct values"},
		{"sum over a distinct", "SELECT VALUE SUM(x) FROM (SELECT DISTINCT VALUE c.g FROM c) x", 26, "a subquery in the FROM clause of the outermost query is not supported"},
		{"count of a distinct, filtered", "SELECT VALUE COUNT(1) FROM (SELECT DISTINCT VALUE c.g FROM c) x WHERE x > 1", 28, "a subquery in the FROM clause of the outermost query is not supported"},
		{"distinct count over a subquery of a subquery", "SELECT VALUE COUNT(1) FROM (SELECT DISTINCT VALUE y FROM (SELECT VALUE c.g FROM c) y)", 58, "a subquery in the FROM clause of the outermost query is not supported"},
		{"from expression", "SELECT * FROM c.a + 1", 19, "expected WHERE, JOIN, GROUP BY, ORDER BY, OFFSET or end of query, found '+'"},
		{"subquery unresolved", "SELECT VALUE (SELECT VALUE z FROM t IN c.tags) FROM c", 28, "identifier 'z' could not be resolved"},
		{"subquery alias not visible outside", "SELECT VALUE [(SELECT VALUE 1 FROM t IN c.tags), t] FROM c", 50, "identifier 't' could not be resolved"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(tt.in)
			var qe *Error
			if !errors.As(err, &qe) {
				t.Fatalf("Parse(%q): got %v, want a *Error", tt.in, err)
			}
			if qe.Col != tt.col || !strings.Contains(qe.Msg, tt.msg) {
				t.Errorf("Parse(%q):\n got col %d: %s\nwant col %d: %s", tt.in, qe.Col, qe.Msg, tt.col, tt.msg)
			}
		})
	}
}

func TestCheckAccepts(t *testing.T) {
	for _, q := range []string{
		"SELECT c.a, COUNT(1) AS n, SUM(c.x) FROM c GROUP BY c.a",
		"SELECT UPPER(c.a) AS u, MAX(c.x) AS m FROM c GROUP BY UPPER(c.a)",
		"SELECT c.a.b, 'lit' AS l FROM c GROUP BY c.a.b",
		"SELECT VALUE {n: COUNT(1), s: SUM(c.x) / COUNT(1)} FROM c",
		"SELECT COUNT(1) AS n, (SELECT VALUE 1) AS one FROM c",
		"SELECT VALUE (SELECT VALUE COUNT(1) FROM t IN c.tags) FROM c",
		"SELECT VALUE t FROM c JOIN t IN c.tags WHERE EXISTS(SELECT VALUE s FROM s IN t.subs WHERE s = c.id)",
		"SELECT * FROM c WHERE ARRAY_CONTAINS(@list, c.id)",
		"SELECT VALUE [(SELECT VALUE 1 FROM t IN c.a), (SELECT VALUE 2 FROM u IN c.b)] FROM c",
		"SELECT c.id, c.id AS id2 FROM c",
		"select value count(1) from c",
	} {
		if _, err := Parse(q); err != nil {
			t.Errorf("Parse(%q): %v", q, err)
		}
	}
}

func TestBindErrors(t *testing.T) {
	tests := []struct {
		name, in string
		params   []Param
		col      int
		msg      string
	}{
		{"top missing", "SELECT TOP @n * FROM c", nil, 12, "the value of @n must be a non-negative integer, found no value"},
		{"top negative", "SELECT TOP @n * FROM c", []Param{{"@n", NumberValue(-1)}}, 12, "found -1"},
		{"top fraction", "SELECT TOP @n * FROM c", []Param{{"@n", NumberValue(1.5)}}, 12, "found 1.5"},
		{"limit string", "SELECT * FROM c OFFSET 0 LIMIT @l", []Param{{"@l", StringValue("5")}}, 32, `found "5"`},
		{"offset in subquery", "SELECT VALUE ARRAY(SELECT VALUE t FROM t IN c.tags OFFSET @o LIMIT 1) FROM c", nil, 59, "@o must be"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := Parse(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			_, err = q.Bind(tt.params)
			var qe *Error
			if !errors.As(err, &qe) {
				t.Fatalf("Bind: got %v, want a *Error", err)
			}
			if qe.Col != tt.col || !strings.Contains(qe.Msg, tt.msg) {
				t.Errorf("Bind(%q):\n got col %d: %s\nwant col %d: %s", tt.in, qe.Col, qe.Msg, tt.col, tt.msg)
			}
		})
	}
}
