package e2e

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/ebbdb/ebb/internal/bench"
)

// TestGatewayQueriesAgree runs random queries of the kind the Go SDK
// sends across partitions (filters and projections, which the gateway
// runs range by range and merges) over a container of four ranges, and
// the same queries in one logical partition holding the same documents,
// where Ebb's executor answers them whole. Each runs in pages of three,
// through the SDK's pager and again resumed from every page's
// continuation token by a new pager; every way gives the same rows.
// The JS SDK suite's querydiff does the same for the queries the SDKs
// merge from the query plan.
func TestGatewayQueriesAgree(t *testing.T) {
	e := start(t)
	db := e.database(t, "db-gwdiff")
	if _, err := db.CreateContainer(e.ctx, pkProps("one", "/pk"), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateContainer(bench.WithPartitionCount(e.ctx, 4), pkProps("four", "/pk"), nil); err != nil {
		t.Fatal(err)
	}
	one, _ := db.NewContainer("one")
	four, _ := db.NewContainer("four")

	r := rand.New(rand.NewPCG(20261126, 1))
	strs := []string{"a", "ab", "b", "B", "", "a b"}
	for i := range 80 {
		doc := map[string]any{"id": fmt.Sprintf("d%02d", i), "g": r.IntN(4), "o": map[string]any{"x": r.IntN(5)}}
		if r.IntN(10) < 9 {
			doc["n"] = r.IntN(25) - 5
		}
		if r.IntN(10) < 8 {
			doc["s"] = strs[r.IntN(len(strs))]
		}
		arr := make([]int, r.IntN(4))
		for j := range arr {
			arr[j] = r.IntN(6)
		}
		doc["arr"] = arr
		doc["pk"] = "all"
		body, _ := json.Marshal(doc)
		if _, err := one.CreateItem(e.ctx, azcosmos.NewPartitionKeyString("all"), body, nil); err != nil {
			t.Fatal(err)
		}
		doc["pk"] = doc["id"]
		body, _ = json.Marshal(doc)
		if _, err := four.CreateItem(e.ctx, azcosmos.NewPartitionKeyString(doc["id"].(string)), body, nil); err != nil {
			t.Fatal(err)
		}
	}

	atoms := []func() string{
		func() string { return fmt.Sprintf("c.n > %d", r.IntN(25)-5) },
		func() string { return fmt.Sprintf("c.n <= %d", r.IntN(25)-5) },
		func() string { return fmt.Sprintf("c.s = %q", strs[r.IntN(len(strs))]) },
		func() string { return fmt.Sprintf("STARTSWITH(c.s, %q)", strs[r.IntN(3)]) },
		func() string { return fmt.Sprintf("ARRAY_CONTAINS(c.arr, %d)", r.IntN(6)) },
		func() string { return fmt.Sprintf("c.o.x >= %d", r.IntN(5)) },
		func() string { return fmt.Sprintf("c.g IN (%d, %d)", r.IntN(4), r.IntN(4)) },
		func() string { return "IS_DEFINED(c.n)" },
		func() string { return "c.n > c.o.x" },
	}
	var pred func(depth int) string
	pred = func(depth int) string {
		if depth > 1 || r.IntN(2) == 0 {
			return atoms[r.IntN(len(atoms))]()
		}
		switch r.IntN(3) {
		case 0:
			return "NOT (" + pred(depth+1) + ")"
		case 1:
			return "(" + pred(depth+1) + " AND " + pred(depth+1) + ")"
		}
		return "(" + pred(depth+1) + " OR " + pred(depth+1) + ")"
	}
	selects := []string{
		"SELECT * FROM c",
		"SELECT c.id, c.n, c.o.x AS x FROM c",
		"SELECT VALUE c.id FROM c",
		"SELECT VALUE {\"id\": c.id, \"len\": ARRAY_LENGTH(c.arr)} FROM c",
		"SELECT c.id, a FROM c JOIN a IN c.arr",
		"SELECT c.id, ARRAY(SELECT VALUE a FROM a IN c.arr WHERE a > 2) AS big FROM c",
	}

	rows := func(c *azcosmos.ContainerClient, q string, pk azcosmos.PartitionKey, resume bool) []string {
		t.Helper()
		var out []string
		var token *string
		pager := c.NewQueryItemsPager(q, pk, &azcosmos.QueryOptions{PageSizeHint: 3})
		for pages := 0; pager.More(); pages++ {
			if pages > 100 {
				t.Fatalf("%s: still paging after %d pages", q, pages)
			}
			page, err := pager.NextPage(e.ctx)
			if err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			for _, raw := range page.Items {
				var row any
				if err := json.Unmarshal(raw, &row); err != nil {
					t.Fatal(err)
				}
				if m, ok := row.(map[string]any); ok {
					for _, sys := range []string{"_rid", "_self", "_etag", "_attachments", "_ts", "pk"} {
						delete(m, sys)
					}
				}
				b, _ := json.Marshal(row)
				out = append(out, string(b))
			}
			token = page.ContinuationToken
			if resume && token != nil {
				pager = c.NewQueryItemsPager(q, pk, &azcosmos.QueryOptions{PageSizeHint: 3, ContinuationToken: token})
			}
		}
		slices.Sort(out)
		return out
	}
	for i := range 60 {
		q := selects[r.IntN(len(selects))]
		if r.IntN(4) > 0 {
			q += " WHERE " + pred(0)
		}
		want := rows(one, q, azcosmos.NewPartitionKeyString("all"), false)
		for _, resume := range []bool{false, true} {
			if got := rows(four, q, azcosmos.NewPartitionKey(), resume); !slices.Equal(got, want) {
				t.Errorf("query %d (resumed from tokens: %v): %s\n got %d rows %v\nwant %d rows %v", i, resume, q, len(got), got, len(want), want)
			}
		}
	}
}
