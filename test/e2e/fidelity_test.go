package e2e

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
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

// TestRequestOptionsNotIgnored: request headers that would change what a
// request does are honoured or refused, never ignored.
func TestRequestOptionsNotIgnored(t *testing.T) {
	e := start(t)
	rc := newRest(t, e)
	ttlContainer(t, e, "opts", nil)
	item := []byte(`{"id":"1","pk":"p"}`)
	path := "/dbs/db-opts/colls/opts/docs"
	pk := `["p"]`
	for _, tc := range []struct {
		hdr    map[string]string
		status int
		text   string
	}{
		{map[string]string{"x-ms-consistency-level": "Strong"}, 400, "ConsistencyLevel Strong specified in the request is invalid when service is configured with consistency level Session."},
		{map[string]string{"x-ms-consistency-level": "Eventual"}, 201, ""},
		{map[string]string{"x-ms-consistency-level": "Sometimes"}, 400, "x-ms-consistency-level"},
		{map[string]string{"x-ms-documentdb-pre-trigger-include": "t1"}, 404, "The trigger 't1' does not exist."},
		{map[string]string{"x-ms-documentdb-post-trigger-include": "t1"}, 404, "The trigger 't1' does not exist."},
		{map[string]string{"x-ms-documentdb-pre-trigger-include": "t1", "x-ms-documentdb-isquery": "true"}, 400, "Triggers run on item creates, upserts, replaces and deletes only"},
		{map[string]string{"x-ms-indexing-directive": "Exclude"}, 501, "x-ms-indexing-directive"},
		{map[string]string{"x-ms-indexing-directive": "Maybe"}, 400, "x-ms-indexing-directive"},
	} {
		tc.hdr["x-ms-documentdb-partitionkey"] = pk
		tc.hdr["x-ms-documentdb-is-upsert"] = "true"
		r := rc.do(t, "POST", path, tc.hdr, item)
		want := tc.status
		if want == 201 && r.status == 200 {
			want = 200 // the upsert replaced the item
		}
		if r.status != want || !strings.Contains(string(r.body), tc.text) {
			t.Errorf("%v: %d %s, want %d naming %q", tc.hdr, r.status, r.body, tc.status, tc.text)
		}
	}
}

// TestUnsupportedContainerPropertiesRefused: a container property whose
// meaning Ebb does not implement is refused, naming it, instead of being
// stored and then ignored.
func TestUnsupportedContainerPropertiesRefused(t *testing.T) {
	e := start(t)
	rc := newRest(t, e)
	e.database(t, "db-props")
	for _, tc := range []struct {
		extra  string
		status int
		name   string
	}{
		{`"vectorEmbeddingPolicy":{"vectorEmbeddings":[{"path":"/v","dataType":"float32","dimensions":3,"distanceFunction":"cosine"}]}`, 201, "vectorEmbeddingPolicy"},
		{`"fullTextPolicy":{"defaultLanguage":"en-US","fullTextPaths":[{"path":"/t","language":"en-US"}]}`, 201, "fullTextPolicy"},
		{`"fullTextPolicy":{"defaultLanguage":"de-DE","fullTextPaths":[{"path":"/t"}]}`, 400, "de-DE"},
		{`"indexingPolicy":{"fullTextIndexes":[{"path":"/t"}]}`, 400, "fullTextPolicy"},
		{`"indexingPolicy":{"vectorIndexes":[{"path":"/v","type":"flat"}]}`, 400, "vectorEmbeddingPolicy"},
		{`"analyticalStorageTtl":-1`, 400, "analyticalStorageTtl"},
		{`"geospatialConfig":{"type":"Geometry"}`, 501, "Geography"},
		{`"geospatialConfig":{"type":"Geography"}`, 201, ""},
		{`"conflictResolutionPolicy":{"mode":"LastWriterWins","conflictResolutionPath":"/_ts"}`, 201, ""},
	} {
		body := `{"id":"c` + string(rune('a'+len(tc.extra)%26)) + string(rune('a'+tc.status%26)) + `","partitionKey":{"paths":["/pk"]},` + tc.extra + `}`
		r := rc.do(t, "POST", "/dbs/db-props/colls", nil, []byte(body))
		if r.status != tc.status || !strings.Contains(string(r.body), tc.name) {
			t.Errorf("%s: %d %s, want %d naming %q", tc.extra, r.status, r.body, tc.status, tc.name)
		}
	}
}

// TestCrossPartitionQueryNeedsPlan: as the service's gateway, Ebb refuses
// a cross-partition query that needs its results merged when it comes
// without a query plan, as the Go SDK sends it: 400, substatus 1004, the
// service's message and the plan in additionalErrorInfo. Projections and
// filters are served, and so is everything within one partition. (The JS
// SDK fetches a plan and queries Ebb's one range; its suite runs these
// queries.)
func TestCrossPartitionQueryNeedsPlan(t *testing.T) {
	e := start(t)
	c := ttlContainer(t, e, "xpq", nil)
	for _, body := range []string{`{"id":"a","pk":"p","n":1}`, `{"id":"b","pk":"p","n":2}`} {
		createTs(t, e, c, body)
	}
	all := azcosmos.NewPartitionKey()
	for _, q := range []string{
		"SELECT * FROM c ORDER BY c.n",
		"SELECT VALUE COUNT(1) FROM c",
		"SELECT DISTINCT VALUE c.pk FROM c",
		"SELECT TOP 1 * FROM c",
		"SELECT * FROM c OFFSET 1 LIMIT 1",
		"SELECT c.pk, COUNT(1) AS n FROM c GROUP BY c.pk",
		"SELECT VALUE COUNT(1) FROM (SELECT DISTINCT VALUE c.n FROM c) AS x",
	} {
		_, err := c.NewQueryItemsPager(q, all, nil).NextPage(e.ctx)
		var re *azcore.ResponseError
		if !errors.As(err, &re) || re.StatusCode != 400 || re.RawResponse.Header.Get("x-ms-substatus") != "1004" {
			t.Fatalf("%s across partitions without a plan: %v, want 400 with substatus 1004", q, err)
		}
		var body struct {
			Message    string
			Additional struct {
				QueryInfo struct{ RewrittenQuery string } `json:"queryInfo"`
			} `json:"additionalErrorInfo"`
		}
		raw, _ := io.ReadAll(re.RawResponse.Body)
		if json.Unmarshal(raw, &body) != nil || !strings.HasPrefix(body.Message, "The provided cross partition query can not be directly served by the gateway.") {
			t.Fatalf("%s: body %s", q, raw)
		}
		if got := queryAll(t, e, c, q, pk, nil); len(got) == 0 {
			t.Fatalf("%s within one partition returned nothing", q)
		}
	}
	// An aggregate inside an expression runs in one partition, and
	// across partitions is the service's 400.
	if got := queryAll(t, e, c, "SELECT VALUE FLOOR(AVG(c.n)) FROM c", pk, nil); len(got) != 1 || string(got[0]) != "1" {
		t.Errorf("FLOOR(AVG) in one partition: %s", got)
	}
	_, err := c.NewQueryItemsPager("SELECT VALUE FLOOR(AVG(c.n)) FROM c", all, nil).NextPage(e.ctx)
	var re *azcore.ResponseError
	if !errors.As(err, &re) || re.StatusCode != 400 || !strings.Contains(err.Error(), "Compositions of aggregates and other expressions are not allowed.") {
		t.Errorf("FLOOR(AVG) across partitions: %v, want the service's 400", err)
	}
	// A count of distinct values in one partition: Ebb counts them.
	if got := queryAll(t, e, c, "SELECT VALUE COUNT(1) FROM (SELECT DISTINCT VALUE c.pk FROM c)", pk, nil); len(got) != 1 || string(got[0]) != "1" {
		t.Errorf("a count of distinct values in one partition: %s", got)
	}
	page, err := c.NewQueryItemsPager("SELECT c.id FROM c WHERE c.n > 0", all, nil).NextPage(e.ctx)
	if err != nil || len(page.Items) != 2 {
		t.Fatalf("a cross-partition filter without a plan: %v, %d rows", err, len(page.Items))
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

// TestDocumentID: DocumentId(c) is the item's integer id within its
// physical partition, the last eight bytes of its _rid, as the service
// answers it.
func TestDocumentID(t *testing.T) {
	e := start(t)
	c := ttlContainer(t, e, "docid", nil)
	for _, body := range []string{`{"id":"a","pk":"p"}`, `{"id":"b","pk":"p"}`, `{"id":"c","pk":"p"}`} {
		createTs(t, e, c, body)
	}
	seen := map[float64]bool{}
	for _, raw := range queryAll(t, e, c, "SELECT c._rid, DocumentId(c) AS n FROM c WHERE DocumentId(c) >= 1", azcosmos.NewPartitionKeyString("p"), nil) {
		var row struct {
			RID string `json:"_rid"`
			N   float64
		}
		if err := json.Unmarshal(raw, &row); err != nil {
			t.Fatal(err)
		}
		b, err := base64.StdEncoding.DecodeString(strings.ReplaceAll(row.RID, "-", "/"))
		if err != nil || len(b) != 16 || float64(binary.LittleEndian.Uint64(b[8:])) != row.N || seen[row.N] {
			t.Errorf("DocumentId %v of _rid %s", row.N, row.RID)
		}
		seen[row.N] = true
	}
	if len(seen) != 3 {
		t.Errorf("DocumentId(c) >= 1 found %d items, want 3", len(seen))
	}
}
