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
