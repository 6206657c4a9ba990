package query

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestQueryInfo(t *testing.T) {
	tests := []struct {
		name, query string
		params      []Param
		want        string
	}{
		{"plain", "SELECT * FROM c",
			nil, `{"distinctType":"None","top":null,"offset":null,"limit":null,"orderBy":[],"orderByExpressions":[],"groupByExpressions":[],"groupByAliases":[],"aggregates":[],"groupByAliasToAggregateType":{},"rewrittenQuery":"","hasSelectValue":false,"dCountInfo":null,"hasNonStreamingOrderBy":false}`},
		{"order by", "SELECT TOP @n c.id FROM c WHERE c.a = 1 ORDER BY c.id, c.b DESC",
			[]Param{{"@n", NumberValue(5)}}, `{"distinctType":"None","top":5,"offset":null,"limit":null,"orderBy":["Ascending","Descending"],"orderByExpressions":["c.id","c.b"],"groupByExpressions":[],"groupByAliases":[],"aggregates":[],"groupByAliasToAggregateType":{},"rewrittenQuery":"SELECT TOP 5 c._rid, [{\"item\": c.id}, {\"item\": c.b}] AS orderByItems, {\"id\": c.id} AS payload FROM c WHERE (c.a = 1) AND ({documentdb-formattableorderbyquery-filter}) ORDER BY c.id ASC, c.b DESC","hasSelectValue":false,"dCountInfo":null,"hasNonStreamingOrderBy":false}`},
		{"order by star", "SELECT * FROM root r ORDER BY r.id",
			nil, `{"distinctType":"None","top":null,"offset":null,"limit":null,"orderBy":["Ascending"],"orderByExpressions":["r.id"],"groupByExpressions":[],"groupByAliases":[],"aggregates":[],"groupByAliasToAggregateType":{},"rewrittenQuery":"SELECT r._rid, [{\"item\": r.id}] AS orderByItems, r AS payload FROM root r WHERE ({documentdb-formattableorderbyquery-filter}) ORDER BY r.id ASC","hasSelectValue":false,"dCountInfo":null,"hasNonStreamingOrderBy":false}`},
		{"value aggregate", "SELECT VALUE COUNT(1) FROM c WHERE c.x = 1",
			nil, `{"distinctType":"None","top":null,"offset":null,"limit":null,"orderBy":[],"orderByExpressions":[],"groupByExpressions":[],"groupByAliases":[],"aggregates":["Count"],"groupByAliasToAggregateType":{},"rewrittenQuery":"SELECT VALUE [{\"item\": COUNT(1)}] FROM c WHERE c.x = 1","hasSelectValue":true,"dCountInfo":null,"hasNonStreamingOrderBy":false}`},
		{"avg", "SELECT VALUE AVG(c.x) FROM c",
			nil, `{"distinctType":"None","top":null,"offset":null,"limit":null,"orderBy":[],"orderByExpressions":[],"groupByExpressions":[],"groupByAliases":[],"aggregates":["Average"],"groupByAliasToAggregateType":{},"rewrittenQuery":"SELECT VALUE [{\"item\": {\"sum\": SUM(c.x), \"count\": COUNT(c.x)}}] FROM c","hasSelectValue":true,"dCountInfo":null,"hasNonStreamingOrderBy":false}`},
		{"group by", "SELECT c.g, COUNT(1) AS n, MAX(c.x) AS m FROM c GROUP BY c.g",
			nil, `{"distinctType":"None","top":null,"offset":null,"limit":null,"orderBy":[],"orderByExpressions":[],"groupByExpressions":["c.g"],"groupByAliases":["g","n","m"],"aggregates":[],"groupByAliasToAggregateType":{"g":null,"m":"Max","n":"Count"},"rewrittenQuery":"SELECT [{\"item\": c.g}] AS groupByItems, {\"g\": c.g, \"n\": {\"item\": COUNT(1)}, \"m\": {\"item\": {\"max\": MAX(c.x), \"count\": COUNT(c.x)}}} AS payload FROM c GROUP BY c.g","hasSelectValue":false,"dCountInfo":null,"hasNonStreamingOrderBy":false}`},
		// The service lists a VALUE aggregate's type under a GROUP BY too
		// (the SDK's GROUP BY VALUE merge reads aggregates[0]).
		{"group by value", "SELECT VALUE COUNT(1) FROM c GROUP BY c.g",
			nil, `{"distinctType":"None","top":null,"offset":null,"limit":null,"orderBy":[],"orderByExpressions":[],"groupByExpressions":["c.g"],"groupByAliases":[],"aggregates":["Count"],"groupByAliasToAggregateType":{},"rewrittenQuery":"SELECT [{\"item\": c.g}] AS groupByItems, [{\"item\": COUNT(1)}] AS payload FROM c GROUP BY c.g","hasSelectValue":true,"dCountInfo":null,"hasNonStreamingOrderBy":false}`},
		{"offset limit", "SELECT VALUE c.id FROM c WHERE c.a = 1 OFFSET @o LIMIT 3",
			[]Param{{"@o", NumberValue(15)}}, `{"distinctType":"None","top":null,"offset":15,"limit":3,"orderBy":[],"orderByExpressions":[],"groupByExpressions":[],"groupByAliases":[],"aggregates":[],"groupByAliasToAggregateType":{},"rewrittenQuery":"SELECT VALUE c.id FROM c WHERE c.a = 1 OFFSET 0 LIMIT 18","hasSelectValue":true,"dCountInfo":null,"hasNonStreamingOrderBy":false}`},
		{"distinct offset limit unordered", "SELECT DISTINCT c.a FROM c OFFSET 2147483647 LIMIT 2147483647",
			nil, `{"distinctType":"Unordered","top":null,"offset":2147483647,"limit":2147483647,"orderBy":[],"orderByExpressions":[],"groupByExpressions":[],"groupByAliases":[],"aggregates":[],"groupByAliasToAggregateType":{},"rewrittenQuery":"SELECT DISTINCT c.a FROM c OFFSET 0 LIMIT 2147483647","hasSelectValue":false,"dCountInfo":null,"hasNonStreamingOrderBy":false}`},
		// A count of distinct values: the inner query per range, its rows
		// made distinct across ranges and counted (dCountInfo).
		{"dcount", "SELECT VALUE COUNT(1) FROM (SELECT DISTINCT VALUE c.g FROM c WHERE c.a = 1) AS x",
			nil, `{"distinctType":"Unordered","top":null,"offset":null,"limit":null,"orderBy":[],"orderByExpressions":[],"groupByExpressions":[],"groupByAliases":[],"aggregates":[],"groupByAliasToAggregateType":{},"rewrittenQuery":"SELECT DISTINCT VALUE c.g FROM c WHERE c.a = 1","hasSelectValue":true,"dCountInfo":{"dCountAlias":""},"hasNonStreamingOrderBy":false}`},
		{"dcount alias", "SELECT COUNT(t) AS n FROM (SELECT DISTINCT c.g, c.h FROM c) t",
			nil, `{"distinctType":"Unordered","top":null,"offset":null,"limit":null,"orderBy":[],"orderByExpressions":[],"groupByExpressions":[],"groupByAliases":[],"aggregates":[],"groupByAliasToAggregateType":{},"rewrittenQuery":"SELECT DISTINCT c.g, c.h FROM c","hasSelectValue":false,"dCountInfo":{"dCountAlias":"n"},"hasNonStreamingOrderBy":false}`},
		// As the service plans a vector search: not streamed, TOP and
		// OFFSET plus LIMIT on every range.
		{"vector search", "SELECT c.id FROM c ORDER BY VectorDistance(c.v, [1, 2]) OFFSET 5 LIMIT 7",
			nil, `{"distinctType":"None","top":null,"offset":5,"limit":7,"orderBy":["Descending"],"orderByExpressions":["VectorDistance(c.v, [1, 2])"],"groupByExpressions":[],"groupByAliases":[],"aggregates":[],"groupByAliasToAggregateType":{},"rewrittenQuery":"SELECT c._rid, [{\"item\": VectorDistance(c.v, [1, 2])}] AS orderByItems, {\"id\": c.id} AS payload FROM c WHERE ({documentdb-formattableorderbyquery-filter}) ORDER BY VectorDistance(c.v, [1, 2]) DESC OFFSET 0 LIMIT 12","hasSelectValue":false,"dCountInfo":null,"hasNonStreamingOrderBy":true}`},
		// As the service plans MAKELIST and MAKESET (QueryPlanRetrieverTests).
		{"makelist", "SELECT VALUE MAKELIST(c.id) FROM c",
			nil, `{"distinctType":"None","top":null,"offset":null,"limit":null,"orderBy":[],"orderByExpressions":[],"groupByExpressions":[],"groupByAliases":[],"aggregates":["MakeList"],"groupByAliasToAggregateType":{},"rewrittenQuery":"SELECT VALUE [{\"item\": MAKELIST(c.id)}] FROM c","hasSelectValue":true,"dCountInfo":null,"hasNonStreamingOrderBy":false}`},
		{"makeset grouped", "SELECT MAKESET(c.id) FROM c GROUP BY c.zipcode",
			nil, `{"distinctType":"None","top":null,"offset":null,"limit":null,"orderBy":[],"orderByExpressions":[],"groupByExpressions":["c.zipcode"],"groupByAliases":["$1"],"aggregates":[],"groupByAliasToAggregateType":{"$1":"MakeSet"},"rewrittenQuery":"SELECT [{\"item\": c.zipcode}] AS groupByItems, {\"$1\": {\"item\": MAKESET(c.id)}} AS payload FROM c GROUP BY c.zipcode","hasSelectValue":false,"dCountInfo":null,"hasNonStreamingOrderBy":false}`},
		{"distinct offset limit", "SELECT DISTINCT VALUE c.a FROM c ORDER BY c.a OFFSET 2 LIMIT 3",
			nil, `{"distinctType":"Ordered","top":null,"offset":2,"limit":3,"orderBy":["Ascending"],"orderByExpressions":["c.a"],"groupByExpressions":[],"groupByAliases":[],"aggregates":[],"groupByAliasToAggregateType":{},"rewrittenQuery":"SELECT DISTINCT c._rid, [{\"item\": c.a}] AS orderByItems, c.a AS payload FROM c WHERE ({documentdb-formattableorderbyquery-filter}) ORDER BY c.a ASC","hasSelectValue":true,"dCountInfo":null,"hasNonStreamingOrderBy":false}`},
		{"distinct unordered", "SELECT DISTINCT c.a FROM c",
			nil, `{"distinctType":"Unordered","top":null,"offset":null,"limit":null,"orderBy":[],"orderByExpressions":[],"groupByExpressions":[],"groupByAliases":[],"aggregates":[],"groupByAliasToAggregateType":{},"rewrittenQuery":"","hasSelectValue":false,"dCountInfo":null,"hasNonStreamingOrderBy":false}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := Parse(tt.query)
			if err != nil {
				t.Fatal(err)
			}
			p, err := q.Bind(tt.params)
			if err != nil {
				t.Fatal(err)
			}
			b, err := json.Marshal(p.QueryInfo())
			if err != nil {
				t.Fatal(err)
			}
			if got := string(b); got != tt.want {
				t.Errorf("%s:\n got %s\nwant %s", tt.query, got, tt.want)
			}
		})
	}
	// The rewritten ORDER BY query, with the filter placeholder replaced as
	// the SDK does, runs and yields the pipelined row shape.
	q, _ := Parse("SELECT c.id FROM c ORDER BY c.id DESC")
	p, _ := q.Bind(nil)
	rw := p.QueryInfo().RewrittenQuery
	rw = replaceAll(rw, "{documentdb-formattableorderbyquery-filter}", "true")
	rows := runQuery(t, rw, docs(`{"id":"a","_rid":"r1"}`, `{"id":"b","_rid":"r2"}`))
	if len(rows) != 2 || rows[0] != `{"_rid":"r2","orderByItems":[{"item":"b"}],"payload":{"id":"b"}}` {
		t.Errorf("rewritten query rows: got %v", rows)
	}
	// A long OR chain, as a client builds for many ids, parses flat; its
	// rewritten query must too.
	ids := "c.id = 'a'" + strings.Repeat(" OR c.id = 'b'", 150)
	q, _ = Parse("SELECT c.id FROM c WHERE " + ids + " ORDER BY c.id")
	p, _ = q.Bind(nil)
	rw = replaceAll(p.QueryInfo().RewrittenQuery, "{documentdb-formattableorderbyquery-filter}", "true")
	if rows := runQuery(t, rw, docs(`{"id":"a","_rid":"r1"}`, `{"id":"c","_rid":"r3"}`)); len(rows) != 1 {
		t.Errorf("rewritten query of a long OR chain: got %v", rows)
	}
}

func replaceAll(s, old, new string) string {
	out := ""
	for {
		i := indexOf(s, old)
		if i < 0 {
			return out + s
		}
		out += s[:i] + new
		s = s[i+len(old):]
	}
}

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

// TestDistributionError: an aggregate inside a larger expression cannot
// be merged across partitions, as the service's query plan refuses it.
func TestDistributionError(t *testing.T) {
	for _, tc := range []struct {
		query string
		bad   bool
	}{
		{"SELECT VALUE FLOOR(AVG(c.n)) FROM c", true},
		{"SELECT MIN(c.n) / 2 FROM c", true},
		{"SELECT MIN(c.n), MAX(c.n) / 2 FROM c", true},
		{`SELECT VALUE {"s": SUM(c.n)} FROM c`, true},
		{"SELECT VALUE [SUM(c.n)] FROM c", true},
		{"SELECT c.g, ABS(AVG(c.n)) AS a FROM c GROUP BY c.g", true},
		{"SELECT VALUE AVG(c.n) FROM c", false},
		{"SELECT MIN(c.n) AS lo, MAX(c.n) AS hi FROM c", false},
		{"SELECT c.g, COUNT(1) AS n FROM c GROUP BY c.g", false},
		{"SELECT VALUE COUNT(1) FROM (SELECT DISTINCT VALUE c.g FROM c)", false},
		{"SELECT c.id, ARRAY(SELECT VALUE MAX(t) FROM t IN c.tags) AS m FROM c", false},
	} {
		q, err := Parse(tc.query)
		if err != nil {
			t.Fatal(err)
		}
		p, _ := q.Bind(nil)
		if got := p.DistributionError(); (got != "") != tc.bad {
			t.Errorf("%s: DistributionError %q", tc.query, got)
		}
	}
}
