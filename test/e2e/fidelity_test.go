package e2e

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
)

// TestIndexingPolicyNormalized: a container's indexing policy reads back
// as the service stores it: automatic filled in, the root included when
// no path is, the legacy root "/" (which older clients send) accepted and
// written "/*", and the system exclusion of _etag added.
func TestIndexingPolicyNormalized(t *testing.T) {
	e := start(t)
	db := e.database(t, "db-policy")
	for _, tc := range []struct {
		name     string
		policy   *azcosmos.IndexingPolicy
		included string
	}{
		{"none given", nil, "/*"},
		{"legacy root", &azcosmos.IndexingPolicy{Automatic: true, IndexingMode: azcosmos.IndexingModeConsistent, IncludedPaths: []azcosmos.IncludedPath{{Path: "/"}}}, "/*"},
		{"excluded only", &azcosmos.IndexingPolicy{Automatic: true, IndexingMode: azcosmos.IndexingModeConsistent, ExcludedPaths: []azcosmos.ExcludedPath{{Path: "/big/*"}}}, "/*"},
	} {
		props := pkProps("p-"+string(rune('a'+len(tc.name))), "/pk")
		props.IndexingPolicy = tc.policy
		if _, err := db.CreateContainer(e.ctx, props, nil); err != nil {
			t.Fatalf("%s: create: %v", tc.name, err)
		}
		c, _ := db.NewContainer(props.ID)
		r, err := c.Read(e.ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		p := r.ContainerProperties.IndexingPolicy
		if p == nil || !p.Automatic || !strings.EqualFold(string(p.IndexingMode), "consistent") {
			t.Fatalf("%s: policy read back as %+v", tc.name, p)
		}
		if len(p.IncludedPaths) != 1 || p.IncludedPaths[0].Path != tc.included {
			t.Errorf("%s: includedPaths %+v, want [%s]", tc.name, p.IncludedPaths, tc.included)
		}
		etag := false
		for _, x := range p.ExcludedPaths {
			etag = etag || x.Path == `/"_etag"/?`
		}
		if !etag {
			t.Errorf("%s: excludedPaths %+v lack the system exclusion of _etag", tc.name, p.ExcludedPaths)
		}
	}
}

// TestInvalidContinuationToken: a query continuation this server did not
// issue is 400 with the service's "Invalid Continuation Token".
func TestInvalidContinuationToken(t *testing.T) {
	e := start(t)
	c := e.container(t, pkProps("tokens", "/pk"))
	for _, id := range []string{"a", "b", "c"} {
		if _, err := c.CreateItem(e.ctx, azcosmos.NewPartitionKeyString("p"), []byte(`{"id":"`+id+`","pk":"p"}`), nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, tok := range []string{"not a token!", "W1t7InRva2VuIjoiKyJ9XV0"} {
		pager := c.NewQueryItemsPager("SELECT * FROM c", azcosmos.NewPartitionKeyString("p"), &azcosmos.QueryOptions{ContinuationToken: &tok})
		_, err := pager.NextPage(e.ctx)
		wantStatus(t, err, 400, "query from continuation "+tok)
		if !strings.Contains(err.Error(), "Invalid Continuation Token") {
			t.Errorf("continuation %q: the error does not say Invalid Continuation Token: %v", tok, err)
		}
	}
}

// TestMalformedOfferPath: an offer address that cannot be one is 400,
// where a well-formed id of no offer is 404.
func TestMalformedOfferPath(t *testing.T) {
	e := start(t)
	rc := newRest(t, e)
	for _, tc := range []struct {
		method, path string
		status       int
	}{
		{"GET", "/offers/not-an-offer", 400},
		{"GET", "/offers/AbCD/extra", 400},
		{"PUT", "/offers/AbCD/extra/more", 400},
		{"GET", "/offers/AAAA", 404},
	} {
		var body []byte
		if tc.method == "PUT" {
			body = []byte(`{"content":{"offerThroughput":400}}`)
		}
		if r := rc.do(t, tc.method, tc.path, nil, body); r.status != tc.status {
			t.Errorf("%s %s: got %d %s, want %d", tc.method, tc.path, r.status, r.body, tc.status)
		}
	}
}

// TestContainerQuotaInfo: a container read with PopulateQuotaInfo has
// the service's quota and usage headers, with the container's real item
// count and document bytes, and the index transformation progress.
func TestContainerQuotaInfo(t *testing.T) {
	e := start(t)
	c := e.container(t, pkProps("quota", "/pk"))
	var docBytes, firstBytes int
	for i := range 40 {
		body := fmt.Sprintf(`{"id":"%d","pk":"p","pad":%q}`, i, strings.Repeat("x", 100))
		r, err := c.CreateItem(e.ctx, azcosmos.NewPartitionKeyString("p"), []byte(body), &azcosmos.ItemOptions{EnableContentResponseOnWrite: true})
		if err != nil {
			t.Fatal(err)
		}
		docBytes += len(r.Value)
		if i == 0 {
			firstBytes = len(r.Value)
		}
	}
	if _, err := c.DeleteItem(e.ctx, azcosmos.NewPartitionKeyString("p"), "0", nil); err != nil {
		t.Fatal(err)
	}
	r, err := c.Read(e.ctx, &azcosmos.ReadContainerOptions{PopulateQuotaInfo: true})
	if err != nil {
		t.Fatal(err)
	}
	h := r.RawResponse.Header
	wantQuota := "functions=25;storedProcedures=100;triggers=25;documentSize=51200;documentsSize=52428800;documentsCount=-1;collectionSize=52428800;"
	if got := h.Get("x-ms-resource-quota"); got != wantQuota {
		t.Errorf("x-ms-resource-quota %q, want %q", got, wantQuota)
	}
	usage := map[string]int{}
	for _, kv := range strings.Split(strings.TrimSuffix(h.Get("x-ms-resource-usage"), ";"), ";") {
		name, v, ok := strings.Cut(kv, "=")
		n, err := strconv.Atoi(v)
		if !ok || err != nil {
			t.Fatalf("x-ms-resource-usage %q: bad pair %q", h.Get("x-ms-resource-usage"), kv)
		}
		usage[name] = n
	}
	kb := (docBytes - firstBytes) / 1024 // the 39 documents left
	want := map[string]int{"functions": 0, "storedProcedures": 0, "triggers": 0, "documentSize": kb / 1024, "documentsSize": kb, "documentsCount": 39, "collectionSize": kb}
	if fmt.Sprint(usage) != fmt.Sprint(want) {
		t.Errorf("x-ms-resource-usage %q: got %v, want %v", h.Get("x-ms-resource-usage"), usage, want)
	}
	if got := h.Get("x-ms-documentdb-collection-index-transformation-progress"); got != "100" {
		t.Errorf("index transformation progress %q, want 100", got)
	}
	plain, err := c.Read(e.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if v := plain.RawResponse.Header.Get("x-ms-resource-usage"); v != "" {
		t.Errorf("a read without PopulateQuotaInfo has x-ms-resource-usage %q", v)
	}
}
