package e2e

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
)

// indexUse runs a query through the SDK, page by page, and returns the
// ids it yields (sorted) and whether every page names a utilized index
// in its index metrics.
func indexUse(t *testing.T, e *env, c *azcosmos.ContainerClient, q string, params ...azcosmos.QueryParameter) ([]string, bool) {
	t.Helper()
	pager := c.NewQueryItemsPager(q, azcosmos.NewPartitionKey(), &azcosmos.QueryOptions{
		PageSizeHint: 7, PopulateIndexMetrics: true, QueryParameters: params,
	})
	var ids []string
	all := true
	for pager.More() {
		page, err := pager.NextPage(e.ctx)
		if err != nil {
			t.Fatalf("query %q: %v", q, err)
		}
		if page.IndexMetrics == nil {
			t.Fatalf("query %q: no index metrics", q)
		}
		m, err := url.QueryUnescape(*page.IndexMetrics)
		if err != nil {
			t.Fatalf("index metrics %q: %v", *page.IndexMetrics, err)
		}
		if !strings.Contains(m, `"UtilizedSingleIndexes":[{`) {
			all = false
		}
		for _, it := range page.Items {
			ids = append(ids, decode(t, it)["id"].(string))
		}
	}
	slices.Sort(ids)
	return ids, all
}

func TestIndexedQueries(t *testing.T) {
	e := start(t)
	props := pkProps("indexed", "/pk")
	props.IndexingPolicy = &azcosmos.IndexingPolicy{
		IndexingMode:  azcosmos.IndexingModeConsistent,
		Automatic:     true,
		IncludedPaths: []azcosmos.IncludedPath{{Path: "/*"}},
		ExcludedPaths: []azcosmos.ExcludedPath{{Path: "/\"_etag\"/?"}, {Path: "/blob/*"}},
		CompositeIndexes: [][]azcosmos.CompositeIndex{{
			{Path: "/city", Order: azcosmos.CompositeIndexAscending},
			{Path: "/age", Order: azcosmos.CompositeIndexDescending},
		}},
	}
	c := e.container(t, props)

	// The policy round-trips, composite indexes included.
	read, err := c.Read(e.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := read.ContainerProperties.IndexingPolicy
	if got == nil || len(got.ExcludedPaths) != 2 || got.ExcludedPaths[1].Path != "/blob/*" ||
		len(got.CompositeIndexes) != 1 || got.CompositeIndexes[0][1].Order != azcosmos.CompositeIndexDescending {
		t.Fatalf("indexing policy read back: %+v", got)
	}

	cities := []string{"Oslo", "Lima", "Kyiv", "Pune"}
	for i := 0; i < 120; i++ {
		pk := fmt.Sprintf("p%d", i%6)
		item := map[string]any{"id": fmt.Sprintf("i%03d", i), "pk": pk, "city": cities[i%4], "age": i % 50,
			"tags": []string{fmt.Sprintf("t%d", i%3)}, "blob": map[string]any{"k": i % 2}}
		if _, err := c.CreateItem(e.ctx, azcosmos.NewPartitionKeyString(pk), mustJSON(t, item), nil); err != nil {
			t.Fatal(err)
		}
	}
	want := func(pred func(i int) bool) []string {
		var out []string
		for i := 0; i < 120; i++ {
			if pred(i) {
				out = append(out, fmt.Sprintf("i%03d", i))
			}
		}
		return out
	}
	for _, tc := range []struct {
		q       string
		params  []azcosmos.QueryParameter
		want    []string
		indexed bool
	}{
		{"SELECT * FROM c WHERE c.city = 'Lima'", nil, want(func(i int) bool { return i%4 == 1 }), true},
		{"SELECT * FROM c WHERE c.city = @c AND c.age > 20", []azcosmos.QueryParameter{{Name: "@c", Value: "Kyiv"}}, want(func(i int) bool { return i%4 == 2 && i%50 > 20 }), true},
		{"SELECT c.id FROM c WHERE c.age IN (3, 4)", nil, want(func(i int) bool { return i%50 == 3 || i%50 == 4 }), true},
		{"SELECT c.id FROM c WHERE c.age BETWEEN 10 AND 12", nil, want(func(i int) bool { return i%50 >= 10 && i%50 <= 12 }), true},
		{"SELECT c.id FROM c WHERE STARTSWITH(c.city, 'P')", nil, want(func(i int) bool { return i%4 == 3 }), true},
		{"SELECT c.id FROM c WHERE ARRAY_CONTAINS(c.tags, 't2')", nil, want(func(i int) bool { return i%3 == 2 }), true},
		{"SELECT c.id FROM c WHERE IS_DEFINED(c.age) AND c.age = 7", nil, want(func(i int) bool { return i%50 == 7 }), true},
		{"SELECT c.id FROM c WHERE c.blob.k = 1", nil, want(func(i int) bool { return i%2 == 1 }), false},
		{"SELECT c.id FROM c WHERE c.age % 10 = 0", nil, want(func(i int) bool { return i%10 == 0 }), false},
	} {
		ids, indexed := indexUse(t, e, c, tc.q, tc.params...)
		if !slices.Equal(ids, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.q, ids, tc.want)
		}
		if indexed != tc.indexed {
			t.Errorf("%s: index used %v, want %v", tc.q, indexed, tc.indexed)
		}
	}

	// Query metrics report the index lookup when one served the query.
	pager := c.NewQueryItemsPager("SELECT * FROM c WHERE c.city = 'Oslo'", azcosmos.NewPartitionKey(), nil)
	page, err := pager.NextPage(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if page.QueryMetrics == nil || !strings.Contains(*page.QueryMetrics, "indexUtilizationRatio=1.00") || !strings.Contains(*page.QueryMetrics, "retrievedDocumentCount=30") {
		t.Fatalf("query metrics: %v", page.QueryMetrics)
	}

	// A single-partition query over an index sees only its partition.
	items := queryAll(t, e, c, "SELECT * FROM c WHERE c.city = 'Oslo'", azcosmos.NewPartitionKeyString("p0"), nil)
	if len(items) != 10 {
		t.Fatalf("single-partition indexed query: %d items, want 10", len(items))
	}
	for _, it := range items {
		if m := decode(t, it); m["pk"] != "p0" || m["city"] != "Oslo" {
			t.Fatalf("single-partition indexed query returned %v", m)
		}
	}

	// Changing the policy: queries stay correct during the rebuild, and
	// use the index again once it is done.
	p := *read.ContainerProperties
	p.IndexingPolicy = &azcosmos.IndexingPolicy{IndexingMode: azcosmos.IndexingModeConsistent, Automatic: true,
		IncludedPaths: []azcosmos.IncludedPath{{Path: "/city/?"}, {Path: "/blob/k/?"}},
		ExcludedPaths: []azcosmos.ExcludedPath{{Path: "/*"}}}
	if _, err := c.Replace(e.ctx, p, nil); err != nil {
		t.Fatal(err)
	}
	wantBlob := want(func(i int) bool { return i%2 == 1 })
	deadline := time.Now().Add(10 * time.Second)
	for {
		ids, indexed := indexUse(t, e, c, "SELECT c.id FROM c WHERE c.blob.k = 1")
		if !slices.Equal(ids, wantBlob) {
			t.Fatalf("during the rebuild: %v", ids)
		}
		if indexed {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the index on /blob/k was not used within 10 s")
		}
	}
	if ids, indexed := indexUse(t, e, c, "SELECT c.id FROM c WHERE c.age = 7"); indexed || !slices.Equal(ids, want(func(i int) bool { return i%50 == 7 })) {
		t.Fatalf("age after it was excluded: index %v, %v", indexed, ids)
	}

	// A malformed path is a 400 naming it.
	p.IndexingPolicy = &azcosmos.IndexingPolicy{IndexingMode: azcosmos.IndexingModeConsistent, IncludedPaths: []azcosmos.IncludedPath{{Path: "city"}}}
	_, err = c.Replace(e.ctx, p, nil)
	wantStatus(t, err, http.StatusBadRequest, "malformed indexing path")
	if !contains(err.Error(), "The indexing path 'city' could not be accepted") {
		t.Fatalf("error: %v", err)
	}
}
