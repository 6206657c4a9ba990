package query

import (
	"encoding/json"
	"testing"
)

// TestHybridSearch: the hybrid-search section of a plan names its scores
// as the service's plans do (the SDKs fill in the placeholders and order
// by these expressions), and queries whose results the SDK cannot fuse
// have none.
func TestHybridSearch(t *testing.T) {
	plan := func(text string) *Plan { return mustPlan(t, text) }
	analyzed := func(path string) bool { return path != "/plain" }
	info, ok := plan("SELECT TOP 10 * FROM c ORDER BY RANK FullTextScore(c.text, 'swim', 'run')").HybridSearch(analyzed)
	if !ok || len(info.ComponentQueryInfos) != 1 || !info.RequiresGlobalStatistics || *info.Take != 10 || info.Skip != nil {
		t.Fatalf("%+v", info)
	}
	ci := info.ComponentQueryInfos[0]
	const score = `_FullTextScore(c.text, ["swim", "run"], {documentdb-formattablehybridsearchquery-totaldocumentcount}, ` +
		`{documentdb-formattablehybridsearchquery-totalwordcount-0}, {documentdb-formattablehybridsearchquery-hitcountsarray-0})`
	if *ci.Top != 120 || ci.OrderBy[0] != "Descending" || ci.OrderByExpressions[0] != score || !ci.HasNonStreamingOrderBy {
		b, _ := json.Marshal(ci)
		t.Fatalf("component %s", b)
	}
	want := `SELECT TOP 120 c._rid, [{"item": ` + score + `}] AS orderByItems, {"payload": c, "componentScores": [` + score + `]} AS payload` +
		` FROM c WHERE ({documentdb-formattableorderbyquery-filter}) ORDER BY ` + score + ` DESC`
	if ci.RewrittenQuery != want {
		t.Fatalf("component query\n got %s\nwant %s", ci.RewrittenQuery, want)
	}
	if want := `SELECT COUNTIF(IS_STRING(c.text)) AS documentCount, [{"totalWordCount": SUM(_FullTextWordCount(c.text)), "hitCounts": ` +
		`[COUNTIF(FullTextContains(c.text, "swim")), COUNTIF(FullTextContains(c.text, "run"))]}] AS fullTextStatistics` + "\nFROM c"; info.GlobalStatisticsQuery != want {
		t.Fatalf("global statistics query\n got %s\nwant %s", info.GlobalStatisticsQuery, want)
	}

	info, ok = plan("SELECT c.id FROM c ORDER BY RANK RRF(VectorDistance(c.v, [1, 2], false, {'distanceFunction': 'euclidean'}), FullTextScore(c.a, 'x'), FullTextScore(c.b, 'y'), [1, 0.5, 2]) OFFSET 1 LIMIT 2").HybridSearch(analyzed)
	if !ok || len(info.ComponentQueryInfos) != 3 || *info.Skip != 1 || *info.Take != 2 || len(info.ComponentWeights) != 3 || info.ComponentWeights[1] != 0.5 {
		t.Fatalf("%+v", info)
	}
	if v := info.ComponentQueryInfos[0]; v.OrderBy[0] != "Ascending" || *v.Top != 36 {
		t.Fatalf("a Euclidean component: %+v", v)
	}
	if want := `SELECT COUNT(1) AS documentCount, [{"totalWordCount": SUM(_FullTextWordCount(c.a)), "hitCounts": [COUNTIF(FullTextContains(c.a, "x"))]}, ` +
		`{"totalWordCount": SUM(_FullTextWordCount(c.b)), "hitCounts": [COUNTIF(FullTextContains(c.b, "y"))]}] AS fullTextStatistics` + "\nFROM c"; info.GlobalStatisticsQuery != want {
		t.Fatalf("global statistics query of two paths\n got %s\nwant %s", info.GlobalStatisticsQuery, want)
	}

	for _, text := range []string{
		"SELECT TOP 10 VALUE c.id FROM c ORDER BY RANK FullTextScore(c.text, 'swim')",
		"SELECT TOP 10 c.id FROM c JOIN t IN c.tags ORDER BY RANK FullTextScore(c.text, 'swim')",
		"SELECT TOP 10 c.id FROM c ORDER BY c.id",
		"SELECT TOP 10 c.id FROM c ORDER BY RANK FullTextScore(c.plain, 'swim')",
	} {
		if _, ok := plan(text).HybridSearch(analyzed); ok {
			t.Errorf("%s: a hybrid-search section", text)
		}
	}
}
