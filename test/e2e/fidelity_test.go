package e2e

import (
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
