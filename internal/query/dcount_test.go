package query

import "testing"

// TestDistinctCount runs counts of distinct values, the service's COUNT
// over a DISTINCT subquery in the FROM clause.
func TestDistinctCount(t *testing.T) {
	src := docs(
		`{"id":"1","g":"a","h":1,"tags":["x","y"]}`,
		`{"id":"2","g":"b","h":1,"tags":["x"]}`,
		`{"id":"3","g":"a","h":2}`,
		`{"id":"4","h":2,"tags":[]}`,
		`{"id":"5","g":"a","h":1,"tags":["y","z"]}`,
	)
	checkQueries(t, src, []queryCase{
		{"SELECT VALUE COUNT(1) FROM (SELECT DISTINCT VALUE c.g FROM c)", "2"},
		{"select value count(1) from (select distinct value c.g from c) as x", "2"},
		{"SELECT VALUE COUNT(x) FROM (SELECT DISTINCT VALUE c.h FROM c) x", "2"},
		{"SELECT COUNT(1) AS n FROM (SELECT DISTINCT c.g, c.h FROM c)", `{"n":4}`},
		{"SELECT COUNT(1) FROM (SELECT DISTINCT c.g FROM c)", `{"$1":3}`},
		{"SELECT VALUE COUNT(1) FROM (SELECT DISTINCT VALUE c.g FROM c WHERE c.h = 2)", "1"},
		{"SELECT VALUE COUNT(1) FROM (SELECT DISTINCT VALUE t FROM c JOIN t IN c.tags)", "3"},
		{"SELECT VALUE COUNT(1) FROM (SELECT DISTINCT VALUE c.g FROM c WHERE c.h > 5)", "0"},
	})
	checkString(t, "SELECT VALUE COUNT(1) FROM (SELECT DISTINCT VALUE c.g FROM c) AS x", "SELECT VALUE COUNT(1) FROM (SELECT DISTINCT VALUE c.g FROM c) x")
}
