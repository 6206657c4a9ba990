package e2e

import (
	"cmp"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/ebbdb/ebb/internal/clock/clocktest"
)

// indexUse runs a query through the SDK, page by page, and returns the
// ids it yields (sorted) and whether every page names a utilized index
// in its index metrics.
func indexUse(t *testing.T, e *env, c *azcosmos.ContainerClient, q string, params ...azcosmos.QueryParameter) ([]string, bool) {
	t.Helper()
	ids, all := indexedIDs(t, e, c, q, 7, params...)
	slices.Sort(ids)
	return ids, all
}

// indexedIDs runs q across partitions in pages of pageSize and returns
// the ids of its rows in order, and whether an index (single or
// composite) served every page.
func indexedIDs(t *testing.T, e *env, c *azcosmos.ContainerClient, q string, pageSize int32, params ...azcosmos.QueryParameter) ([]string, bool) {
	t.Helper()
	pager := c.NewQueryItemsPager(q, azcosmos.NewPartitionKey(), &azcosmos.QueryOptions{
		PageSizeHint: pageSize, PopulateIndexMetrics: true, QueryParameters: params,
	})
	var ids []string
	all := true
	for pager.More() {
		page, err := pager.NextPage(e.planCtx)
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
		if !strings.Contains(m, `"UtilizedSingleIndexes":[{`) && !strings.Contains(m, `"UtilizedCompositeIndexes":[{`) {
			all = false
		}
		for _, it := range page.Items {
			ids = append(ids, decode(t, it)["id"].(string))
		}
	}
	return ids, all
}

// withComposite is the default indexing policy plus one composite index.
func withComposite(paths ...azcosmos.CompositeIndex) *azcosmos.IndexingPolicy {
	return &azcosmos.IndexingPolicy{IndexingMode: azcosmos.IndexingModeConsistent, Automatic: true,
		IncludedPaths:    []azcosmos.IncludedPath{{Path: "/*"}},
		CompositeIndexes: [][]azcosmos.CompositeIndex{paths}}
}

// TestIndexedOrderBy reads ORDER BY queries in order from the range and
// composite indexes through the SDK's pager, in small pages, with items
// lacking the sort paths (first when ascending, last when descending)
// and ties broken the same way whatever serves the query.
func TestIndexedOrderBy(t *testing.T) {
	e := start(t)
	props := pkProps("orderby", "/pk")
	props.IndexingPolicy = withComposite(
		azcosmos.CompositeIndex{Path: "/city", Order: azcosmos.CompositeIndexAscending},
		azcosmos.CompositeIndex{Path: "/age", Order: azcosmos.CompositeIndexDescending})
	c := e.container(t, props)
	type item struct {
		ID   string `json:"id"`
		PK   string `json:"pk"`
		City string `json:"city,omitempty"`
		Age  *int   `json:"age,omitempty"`
	}
	cities := []string{"Oslo", "Lima", "Kyiv", "Pune"}
	var items []item
	for i := 0; i < 60; i++ {
		it := item{ID: fmt.Sprintf("i%02d", i), PK: fmt.Sprintf("p%d", i%5)}
		if i%10 != 3 {
			it.City = cities[i%4]
		}
		if i%10 != 7 {
			age := i % 13
			it.Age = &age
		}
		items = append(items, it)
		if _, err := c.CreateItem(e.ctx, azcosmos.NewPartitionKeyString(it.PK), mustJSON(t, it), nil); err != nil {
			t.Fatal(err)
		}
	}
	// want sorts the items by city then age (undefined first, in either
	// direction), ties by (pk, id) the way the first key goes.
	want := func(cityDesc, ageDesc bool, withAge bool) []string {
		s := slices.Clone(items)
		dir := func(r int, desc bool) int {
			if desc {
				return -r
			}
			return r
		}
		slices.SortFunc(s, func(a, b item) int {
			if r := cmp.Compare(a.City, b.City); r != 0 { // "" (undefined) first
				return dir(r, cityDesc)
			}
			if withAge {
				ag, bg := -1, -1
				if a.Age != nil {
					ag = *a.Age
				}
				if b.Age != nil {
					bg = *b.Age
				}
				if r := cmp.Compare(ag, bg); r != 0 {
					return dir(r, ageDesc)
				}
			}
			return dir(cmp.Or(cmp.Compare(a.PK, b.PK), cmp.Compare(a.ID, b.ID)), cityDesc)
		})
		var ids []string
		for _, it := range s {
			ids = append(ids, it.ID)
		}
		return ids
	}
	for _, tc := range []struct {
		q                 string
		cityDesc, ageDesc bool
		withAge           bool
	}{
		{"SELECT c.id FROM c ORDER BY c.city", false, false, false},
		{"SELECT c.id FROM c ORDER BY c.city DESC", true, false, false},
		{"SELECT * FROM c ORDER BY c.city ASC, c.age DESC", false, true, true},    // the composite index
		{"SELECT * FROM c ORDER BY c.city DESC, c.age ASC", true, false, true},    // backwards
		{"SELECT c.id FROM c ORDER BY c.city DESC, c.age DESC", true, true, true}, // the city index and a heap per city
	} {
		for _, size := range []int32{1, 4, 100} {
			ids, indexed := indexedIDs(t, e, c, tc.q, size)
			if w := want(tc.cityDesc, tc.ageDesc, tc.withAge); !slices.Equal(ids, w) {
				t.Fatalf("%s (pages of %d):\n got %v\nwant %v", tc.q, size, ids, w)
			}
			if !indexed {
				t.Errorf("%s: not served from an index", tc.q)
			}
		}
	}
	// TOP through the index: the first rows only.
	ids, _ := indexedIDs(t, e, c, "SELECT TOP 3 c.id FROM c WHERE c.age > 10 ORDER BY c.age DESC", 2)
	if !slices.Equal(ids, []string{"i38", "i12", "i51"}) { // ties: (pk, id) descending
		t.Fatalf("TOP 3 by age descending: %v", ids)
	}
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
	page, err := pager.NextPage(e.planCtx)
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
	clocktest.WaitUntil(t, "the index on /blob/k to be used", func() bool {
		ids, indexed := indexUse(t, e, c, "SELECT c.id FROM c WHERE c.blob.k = 1")
		if !slices.Equal(ids, wantBlob) {
			t.Fatalf("during the rebuild: %v", ids)
		}
		return indexed
	})
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
