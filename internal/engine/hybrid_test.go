package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ebbdb/ebb/internal/query"
)

// TestHybridSearchPlan: a query plan asked for by an SDK that runs
// hybrid search carries the hybrid-search section, and running it as the
// SDK does (the global statistics summed, the placeholders filled in,
// each component's items fused by reciprocal rank) gives what Ebb
// answers when it ranks the query itself. Without the SDK's feature the
// plan has none.
func TestHybridSearchPlan(t *testing.T) {
	e, clk := newTestEngine(t)
	mustCreate(t, e, "db", "c", `{"id":"c","partitionKey":{"paths":["/pk"]},"defaultTtl":-1,`+
		`"fullTextPolicy":{"defaultLanguage":"en-US","fullTextPaths":[{"path":"/t"}]},`+
		`"vectorEmbeddingPolicy":{"vectorEmbeddings":[{"path":"/v","dataType":"float32","distanceFunction":"euclidean","dimensions":2}]}}`)
	words := strings.Fields("alpha beta gamma delta runner running")
	for i := range 40 {
		var text []string
		for j := range 1 + i%9 {
			text = append(text, words[(i*7+j*3)%len(words)])
		}
		doc := fmt.Sprintf(`{"id":"d%02d","pk":"p%d","t":%q,"v":[%d,%d]}`, i, i%3, strings.Join(text, " "), i%11, i%7)
		if i%10 == 9 {
			doc = fmt.Sprintf(`{"id":"d%02d","pk":"p%d","v":[%d,%d]}`, i, i%3, i, i) // no text
		}
		writeAny(t, e, "c", doc)
	}
	writeAny(t, e, "c", `{"id":"gone","pk":"p0","t":"alpha alpha alpha","v":[0,0],"ttl":5}`)
	clk.Advance(6 * time.Second)

	ctx := context.Background()
	for _, text := range []string{
		"SELECT TOP 5 c.id FROM c ORDER BY RANK FullTextScore(c.t, 'alpha', 'running')",
		"SELECT c.id FROM c WHERE c.id != 'd03' ORDER BY RANK FullTextScore(c.t, ['beta']) OFFSET 2 LIMIT 6",
		"SELECT TOP 8 * FROM c ORDER BY RANK RRF(FullTextScore(c.t, 'gamma'), VectorDistance(c.v, [3, 4]), [2, 1])",
		"SELECT TOP 8 VALUE {\"id\": c.id} FROM c ORDER BY RANK RRF(VectorDistance(c.v, [1, 1]), FullTextScore(c.t, 'delta'), FullTextScore(c.t, 'runs'))",
	} {
		if plain, err := e.QueryPlan(ctx, ItemRef{DB: "db", Coll: "c"}, queryBody(text), false); err != nil || strings.Contains(string(plain), "hybridSearchQueryInfo") {
			t.Fatalf("%s: a plan for an SDK without hybrid search: %s %v", text, plain, err)
		}
		raw, err := e.QueryPlan(ctx, ItemRef{DB: "db", Coll: "c"}, queryBody(text), true)
		if err != nil {
			t.Fatal(err)
		}
		var plan struct {
			Info *query.HybridSearchQueryInfo `json:"hybridSearchQueryInfo"`
		}
		if err := json.Unmarshal(raw, &plan); err != nil || plan.Info == nil {
			t.Fatalf("%s: plan %s: %v", text, raw, err)
		}
		got, score := runHybridPlan(t, e, plan.Info)
		// Items of one fused score may come in any order through the
		// plan (the SDK's sort leaves ties as its last ranking left
		// them; Ebb orders them by key): the scores must agree.
		want := unquoteIDs(t, queryAcross(t, e, text))
		same := len(got) == len(want)
		for i := 0; same && i < len(got); i++ {
			gs, ok1 := score[got[i]]
			ws, ok2 := score[want[i]]
			same = ok1 && ok2 && gs == ws
		}
		if !same || len(got) == 0 {
			t.Fatalf("%s:\n through the plan %v\n directly         %v", text, got, want)
		}
	}
}

// runHybridPlan runs a hybrid-search plan as the JS SDK does and returns
// the ids of the results, and the fused score of every item the
// components returned, by id.
func runHybridPlan(t *testing.T, e *Engine, info *query.HybridSearchQueryInfo) ([]string, map[string]float64) {
	t.Helper()
	var stats struct {
		DocumentCount      int `json:"documentCount"`
		FullTextStatistics []struct {
			TotalWordCount int   `json:"totalWordCount"`
			HitCounts      []int `json:"hitCounts"`
		} `json:"fullTextStatistics"`
	}
	rows := queryAcross(t, e, info.GlobalStatisticsQuery)
	if len(rows) != 1 || json.Unmarshal([]byte(rows[0]), &stats) != nil {
		t.Fatalf("global statistics: %v", rows)
	}
	type result struct {
		rid    string
		id     string
		scores []float64
	}
	byRID := map[string]*result{}
	var results []*result
	for _, ci := range info.ComponentQueryInfos {
		q := strings.ReplaceAll(ci.RewrittenQuery, "{documentdb-formattableorderbyquery-filter}", "true")
		q = strings.ReplaceAll(q, "{documentdb-formattablehybridsearchquery-totaldocumentcount}", fmt.Sprint(stats.DocumentCount))
		for i, s := range stats.FullTextStatistics {
			hits, _ := json.Marshal(s.HitCounts)
			q = strings.ReplaceAll(q, fmt.Sprintf("{documentdb-formattablehybridsearchquery-totalwordcount-%d}", i), fmt.Sprint(s.TotalWordCount))
			q = strings.ReplaceAll(q, fmt.Sprintf("{documentdb-formattablehybridsearchquery-hitcountsarray-%d}", i), string(hits))
		}
		if strings.Contains(q, "{documentdb-") {
			t.Fatalf("a placeholder left in %s", q)
		}
		for _, row := range queryAcross(t, e, q) {
			var r struct {
				RID     string `json:"_rid"`
				Payload struct {
					Payload struct {
						ID string `json:"id"`
					} `json:"payload"`
					ComponentScores []float64 `json:"componentScores"`
				} `json:"payload"`
			}
			if err := json.Unmarshal([]byte(row), &r); err != nil || r.RID == "" {
				t.Fatalf("component row %s: %v", row, err)
			}
			if byRID[r.RID] == nil {
				byRID[r.RID] = &result{rid: r.RID, id: r.Payload.Payload.ID, scores: r.Payload.ComponentScores}
				results = append(results, byRID[r.RID])
			}
		}
	}
	// Reciprocal rank fusion, each component ranking its items densely.
	fused := map[string]float64{}
	for i, ci := range info.ComponentQueryInfos {
		slices.SortStableFunc(results, func(a, b *result) int {
			if ci.OrderBy[0] == "Ascending" {
				return cmp.Compare(a.scores[i], b.scores[i])
			}
			return cmp.Compare(b.scores[i], a.scores[i])
		})
		weight := 1.0
		if len(info.ComponentWeights) > 0 {
			weight = info.ComponentWeights[i]
		}
		rank := 0
		for j, r := range results {
			if j == 0 || r.scores[i] != results[j-1].scores[i] {
				rank++
			}
			fused[r.rid] += weight / float64(60+rank)
		}
	}
	slices.SortStableFunc(results, func(a, b *result) int { return cmp.Compare(fused[b.rid], fused[a.rid]) })
	var ids []string
	byID := map[string]float64{}
	for _, r := range results {
		ids = append(ids, r.id)
		byID[r.id] = fused[r.rid]
	}
	if info.Skip != nil {
		ids = ids[min(*info.Skip, len(ids)):]
	}
	if info.Take != nil {
		ids = ids[:min(*info.Take, len(ids))]
	}
	return ids, byID
}

// unquoteIDs reads the ids of rows that are items or {"id": …} objects.
func unquoteIDs(t *testing.T, rows []string) []string {
	t.Helper()
	ids := make([]string, len(rows))
	for i, r := range rows {
		var v struct{ ID string }
		if err := json.Unmarshal([]byte(r), &v); err != nil {
			t.Fatal(err)
		}
		ids[i] = v.ID
	}
	return ids
}
