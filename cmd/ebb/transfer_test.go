package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/ebbdb/ebb/ebbtest"
	"github.com/ebbdb/ebb/internal/auth"
	"github.com/ebbdb/ebb/internal/clock"
)

var transferEpoch = time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)

// TestExportImportRoundTrip: a database exported from one server and
// imported into another comes back with its containers' definitions and
// offers, and its items with their _ts and ttl, so they expire when they
// would have; items expired at the export are not exported.
func TestExportImportRoundTrip(t *testing.T) {
	ctx := context.Background()
	src := ebbtest.New(t, ebbtest.StartingAt(transferEpoch))
	if _, err := src.Client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "shop"}, nil); err != nil {
		t.Fatal(err)
	}
	db, _ := src.Client.NewDatabase("shop")
	hour := int32(3600)
	carts := azcosmos.ContainerProperties{
		ID: "carts", PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/user"}}, DefaultTimeToLive: &hour,
		UniqueKeyPolicy: &azcosmos.UniqueKeyPolicy{UniqueKeys: []azcosmos.UniqueKey{{Paths: []string{"/email"}}}},
	}
	autoscale := azcosmos.NewAutoscaleThroughputProperties(4000)
	if _, err := db.CreateContainer(ctx, carts, &azcosmos.CreateContainerOptions{ThroughputProperties: &autoscale}); err != nil {
		t.Fatal(err)
	}
	manual := azcosmos.NewManualThroughputProperties(500)
	orders := azcosmos.ContainerProperties{ID: "orders/2026 · Q4", PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/user"}}}
	orders.ID = "orders 2026 · Q4" // any id a file name cannot hold as it is
	if _, err := db.CreateContainer(ctx, orders, &azcosmos.CreateContainerOptions{ThroughputProperties: &manual}); err != nil {
		t.Fatal(err)
	}
	cc, _ := db.NewContainer("carts")
	oc, _ := db.NewContainer(orders.ID)
	for i := range 10 {
		ttl := ""
		if i%3 == 0 {
			ttl = `,"ttl":60`
		}
		item := fmt.Sprintf(`{"id":"c%d","user":"u%d","email":"u%d@example.com"%s}`, i, i, i, ttl)
		if _, err := cc.CreateItem(ctx, azcosmos.NewPartitionKeyString(fmt.Sprintf("u%d", i)), []byte(item), nil); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 2500 {
		item := fmt.Sprintf(`{"id":"o%d","user":"u%d","n":%d}`, i, i%10, i)
		if _, err := oc.CreateItem(ctx, azcosmos.NewPartitionKeyString(fmt.Sprintf("u%d", i%10)), []byte(item), nil); err != nil {
			t.Fatal(err)
		}
	}
	src.Advance(30 * time.Second)
	if _, err := cc.UpsertItem(ctx, azcosmos.NewPartitionKeyString("u4"), []byte(`{"id":"c4","user":"u4","email":"u4@example.com","v":2}`), nil); err != nil {
		t.Fatal(err)
	}
	src.Advance(40 * time.Second) // c0, c3, c6, c9 (ttl 60) have expired

	dir := filepath.Join(t.TempDir(), "export")
	var out bytes.Buffer
	if err := runExport([]string{"--out", dir, "shop", "--endpoint", src.Endpoint}, &out); err != nil {
		t.Fatalf("ebb export: %v", err)
	}
	lines, _ := os.ReadFile(filepath.Join(dir, "shop", "carts.ndjson"))
	if n := strings.Count(string(lines), "\n"); n != 6 {
		t.Fatalf("exported %d carts, want the 6 not expired:\n%s", n, lines)
	}

	dst := ebbtest.New(t, ebbtest.StartingAt(transferEpoch.Add(70*time.Second)))
	if err := runImport([]string{dir, "--endpoint", dst.Endpoint}, &out); err != nil {
		t.Fatalf("ebb import: %v", err)
	}
	if !strings.Contains(out.String(), "imported 2506 items into 2 container(s)") {
		t.Errorf("import said:\n%s", out.String())
	}
	dcarts, _ := dst.Client.NewContainer("shop", "carts")
	props, err := dcarts.Read(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p := props.ContainerProperties; *p.DefaultTimeToLive != 3600 || len(p.UniqueKeyPolicy.UniqueKeys) != 1 {
		t.Errorf("imported carts: defaultTtl %v, unique keys %+v", *p.DefaultTimeToLive, p.UniqueKeyPolicy)
	}
	tp, err := dcarts.ReadThroughput(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if max, ok := tp.ThroughputProperties.AutoscaleMaxThroughput(); !ok || max != 4000 {
		t.Errorf("imported carts offer: autoscale %v %v, want 4000", max, ok)
	}
	ts := func(c *azcosmos.ContainerClient, pk, id string) int64 {
		t.Helper()
		r, err := c.ReadItem(ctx, azcosmos.NewPartitionKeyString(pk), id, nil)
		if err != nil {
			t.Fatalf("read %s: %v", id, err)
		}
		var doc struct {
			TS int64 `json:"_ts"`
		}
		json.Unmarshal(r.Value, &doc)
		return doc.TS
	}
	if got, want := ts(dcarts, "u4", "c4"), transferEpoch.Unix()+30; got != want {
		t.Errorf("imported c4 _ts %d, want its own %d", got, want)
	}
	if got := ts(dcarts, "u1", "c1"); got != transferEpoch.Unix() {
		t.Errorf("imported c1 _ts %d, want %d", got, transferEpoch.Unix())
	}
	dorders, _ := dst.Client.NewContainer("shop", orders.ID)
	if got := countItems(t, dorders); got != 2500 {
		t.Errorf("imported %d orders, want 2500", got)
	}
	// An hour after they were written where they came from, the carts
	// expire here too; c4, rewritten 30 s later, lives 30 s longer.
	dst.Advance(3600*time.Second - 70*time.Second)
	if got := countItems(t, dcarts); got != 1 {
		t.Errorf("%d carts left an hour after they were written, want 1 (c4)", got)
	}
	dst.Advance(30 * time.Second)
	if got := countItems(t, dcarts); got != 0 {
		t.Errorf("%d carts left after c4's hour, want 0", got)
	}

	// One container to a file, and back from it into an existing one.
	file := filepath.Join(t.TempDir(), "orders.ndjson")
	if err := runExport([]string{"--out", file, "shop/" + orders.ID, "--endpoint", src.Endpoint}, &out); err != nil {
		t.Fatal(err)
	}
	if err := runImport([]string{"--mode", "create", "--to", "shop/" + orders.ID, file, "--endpoint", dst.Endpoint}, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "2500 already there kept") {
		t.Errorf("a create-only import over the same items said:\n%s", out.String())
	}
}

// TestImportResumes: an import that stops at a bad item says which line,
// keeps what it wrote, and when run again after the line is fixed resumes
// after it instead of starting over; progress saved for a source that no
// longer begins with the same items is refused.
func TestImportResumes(t *testing.T) {
	ctx := context.Background()
	srv := ebbtest.New(t, ebbtest.StartingAt(transferEpoch))
	c := createContainer(t, srv, "db", "c")
	var items []string
	for i := range 2500 {
		items = append(items, fmt.Sprintf(`{"id":"i%d","pk":"p","n":%d}`, i, i))
	}
	items[1800] = `{"id":"i1800","pk":"p","ttl":0}`
	file := filepath.Join(t.TempDir(), "items.ndjson")
	os.WriteFile(file, []byte(strings.Join(items, "\n")+"\n"), 0o644)
	var out bytes.Buffer
	err := runImport([]string{"--to", "db/c", file, "--endpoint", srv.Endpoint}, &out)
	if err == nil || !strings.Contains(err.Error(), "line 1801") || !strings.Contains(err.Error(), "The input ttl '0' is invalid") {
		t.Fatalf("import with a bad ttl on line 1801: %v", err)
	}
	// The first request is written; the one after the bad one may be
	// too, since two are in flight.
	if got := countItems(t, c); got != 1000 && got != 1500 {
		t.Fatalf("%d items written before the bad request, want the first request's 1000 (or 1500)", got)
	}
	items[1800] = `{"id":"i1800","pk":"p","ttl":10}`
	os.WriteFile(file, []byte(strings.Join(items, "\n")+"\n"), 0o644)
	out.Reset()
	if err := runImport([]string{"--to", "db/c", file, "--endpoint", srv.Endpoint}, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "imported 1500 items") {
		t.Errorf("the resumed import said %q, want 1500 items", out.String())
	}
	if got := countItems(t, c); got != 2500 {
		t.Errorf("%d items after the resumed import, want 2500", got)
	}
	if _, err := os.Stat(file + ".ebb-import"); !os.IsNotExist(err) {
		t.Errorf("saved progress left behind after a complete import: %v", err)
	}

	// Progress saved for another file is not trusted.
	items[1800] = `{"id":"i1800","pk":"p","ttl":0}`
	os.WriteFile(file, []byte(strings.Join(items, "\n")+"\n"), 0o644)
	runImport([]string{"--to", "db/c", file, "--endpoint", srv.Endpoint}, &out)
	items[0] = `{"id":"other","pk":"p"}`
	os.WriteFile(file, []byte(strings.Join(items, "\n")+"\n"), 0o644)
	err = runImport([]string{"--to", "db/c", file, "--endpoint", srv.Endpoint}, &out)
	if err == nil || !strings.Contains(err.Error(), "are not those a previous run imported") {
		t.Errorf("resume over a changed source: %v", err)
	}
	_ = ctx
}

// TestImportCosmiumAndArrays: a cosmium state file becomes containers and
// items and scripts; a JSON array file imports
// like NDJSON.
func TestImportCosmiumAndArrays(t *testing.T) {
	srv := ebbtest.New(t, ebbtest.StartingAt(transferEpoch))
	state := `{
	"databases": {"app": {"id": "app", "_ts": 1700000000}},
	"collections": {"app": {"users": {"id": "users", "partitionKey": {"paths": ["/tenant"], "kind": "Hash", "Version": 2},
		"indexingPolicy": {"indexingMode": "consistent", "automatic": true,
			"includedPaths": [{"path": "/*", "indexes": [{"kind": "Range", "dataType": "String", "precision": -1}]}],
			"excludedPaths": [{"path": "/\"_etag\"/?"}]}}}},
	"documents": {"app": {"users": {
		"u1": {"id": "u1", "tenant": "t1", "name": "Ana", "_ts": 1790000000, "_rid": "x", "_etag": "\"y\""},
		"u2": {"id": "u2", "tenant": "t2", "name": "Bo", "_ts": 1790000001}}}},
	"sprocs": {"app": {"users": {"sp1": {"id": "sp1", "body": "function () {}"}}}}
}`
	file := filepath.Join(t.TempDir(), "state.json")
	os.WriteFile(file, []byte(state), 0o644)
	var out bytes.Buffer
	if err := runImport([]string{"--cosmium", file, "--endpoint", srv.Endpoint}, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "imported 2 items into 1 container(s)") {
		t.Errorf("import said:\n%s", out.String())
	}
	endpoint, _ := url.Parse(srv.Endpoint)
	signer, _ := auth.NewVerifier(srv.Key)
	admin := &adminClient{clock: clock.NewSystem(), endpoint: endpoint, signer: signer, http: srv.HTTPClient()}
	if body, _, err := admin.do(context.Background(), http.MethodGet, "/dbs/app/colls/users/sprocs/sp1", nil, nil); err != nil || !strings.Contains(string(body), `"body":"function () {}"`) {
		t.Errorf("the cosmium file's stored procedure: %s, %v", body, err)
	}
	users, _ := srv.Client.NewContainer("app", "users")
	r, err := users.ReadItem(context.Background(), azcosmos.NewPartitionKeyString("t1"), "u1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(r.Value), `"_ts":1790000000`) || !strings.Contains(string(r.Value), `"name":"Ana"`) {
		t.Errorf("imported u1: %s", r.Value)
	}

	arr := filepath.Join(t.TempDir(), "more.json")
	os.WriteFile(arr, []byte(`[ {"id": "u3", "tenant": "t1"},
		{"id": "u4", "tenant": "t1", "nested": {"a": [1, 2]}} ]`), 0o644)
	out.Reset()
	if err := runImport([]string{"--to", "app/users", arr, "--endpoint", srv.Endpoint}, &out); err != nil {
		t.Fatal(err)
	}
	if got := countItems(t, users); got != 4 {
		t.Errorf("%d users after the array import, want 4", got)
	}
}

func createContainer(t *testing.T, srv *ebbtest.Server, db, coll string) *azcosmos.ContainerClient {
	t.Helper()
	ctx := context.Background()
	if _, err := srv.Client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: db}, nil); err != nil {
		t.Fatal(err)
	}
	d, _ := srv.Client.NewDatabase(db)
	if _, err := d.CreateContainer(ctx, azcosmos.ContainerProperties{ID: coll, PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}}}, nil); err != nil {
		t.Fatal(err)
	}
	c, _ := d.NewContainer(coll)
	return c
}

func countItems(t *testing.T, c *azcosmos.ContainerClient) int {
	t.Helper()
	n := 0
	pager := c.NewQueryItemsPager("SELECT c.id FROM c", azcosmos.PartitionKey{}, nil)
	for pager.More() {
		page, err := pager.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		n += len(page.Items)
	}
	return n
}
