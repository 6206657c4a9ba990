package e2e

import (
	"net/http"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
)

func TestDatabaseLifecycle(t *testing.T) {
	e := start(t)
	resp, err := e.client.CreateDatabase(e.ctx, azcosmos.DatabaseProperties{ID: "shop"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.DatabaseProperties == nil || resp.DatabaseProperties.ID != "shop" || resp.DatabaseProperties.ResourceID == "" {
		t.Fatalf("create returned %+v", resp.DatabaseProperties)
	}
	_, err = e.client.CreateDatabase(e.ctx, azcosmos.DatabaseProperties{ID: "shop"}, nil)
	wantStatus(t, err, http.StatusConflict, "duplicate database")

	db, _ := e.client.NewDatabase("shop")
	read, err := db.Read(e.ctx, nil)
	if err != nil || read.DatabaseProperties.ID != "shop" {
		t.Fatalf("read: %+v, %v", read.DatabaseProperties, err)
	}
	// Without throughput a database has no offer: the SDK reports 404.
	_, err = db.ReadThroughput(e.ctx, nil)
	wantStatus(t, err, http.StatusNotFound, "throughput of a database without an offer")

	pager := e.client.NewQueryDatabasesPager("SELECT * FROM root r WHERE r.id = @id", &azcosmos.QueryDatabasesOptions{
		QueryParameters: []azcosmos.QueryParameter{{Name: "@id", Value: "shop"}},
	})
	var ids []string
	for pager.More() {
		page, err := pager.NextPage(e.ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range page.Databases {
			ids = append(ids, d.ID)
		}
	}
	if len(ids) != 1 || ids[0] != "shop" {
		t.Fatalf("query databases: got %v, want [shop]", ids)
	}

	if _, err := db.Delete(e.ctx, nil); err != nil {
		t.Fatal(err)
	}
	_, err = db.Read(e.ctx, nil)
	wantStatus(t, err, http.StatusNotFound, "read deleted database")
}

func TestDatabaseThroughput(t *testing.T) {
	e := start(t)
	tp := azcosmos.NewManualThroughputProperties(400)
	if _, err := e.client.CreateDatabase(e.ctx, azcosmos.DatabaseProperties{ID: "shared"}, &azcosmos.CreateDatabaseOptions{ThroughputProperties: &tp}); err != nil {
		t.Fatal(err)
	}
	db, _ := e.client.NewDatabase("shared")
	got, err := db.ReadThroughput(e.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n, ok := got.ThroughputProperties.ManualThroughput(); !ok || n != 400 {
		t.Fatalf("manual throughput = %d, %v; want 400", n, ok)
	}
	if _, err := db.ReplaceThroughput(e.ctx, azcosmos.NewManualThroughputProperties(500), nil); err != nil {
		t.Fatal(err)
	}
	got, err = db.ReadThroughput(e.ctx, nil)
	if n, _ := got.ThroughputProperties.ManualThroughput(); err != nil || n != 500 {
		t.Fatalf("after replace: %d, %v; want 500", n, err)
	}
	_, err = db.ReplaceThroughput(e.ctx, azcosmos.NewManualThroughputProperties(10), nil)
	wantStatus(t, err, http.StatusBadRequest, "throughput below the minimum")

	// A container in a shared-throughput database has no offer of its own.
	if _, err := db.CreateContainer(e.ctx, pkProps("c", "/pk"), nil); err != nil {
		t.Fatal(err)
	}
	c, _ := db.NewContainer("c")
	_, err = c.ReadThroughput(e.ctx, nil)
	wantStatus(t, err, http.StatusNotFound, "throughput of a container in a shared database")
}

func TestContainerLifecycle(t *testing.T) {
	e := start(t)
	db := e.database(t, "db")
	props := pkProps("orders", "/customer")
	props.DefaultTimeToLive = int32p(3600)
	tp := azcosmos.NewManualThroughputProperties(400)
	created, err := db.CreateContainer(e.ctx, props, &azcosmos.CreateContainerOptions{ThroughputProperties: &tp})
	if err != nil {
		t.Fatal(err)
	}
	cp := created.ContainerProperties
	if cp.DefaultTimeToLive == nil || *cp.DefaultTimeToLive != 3600 {
		t.Fatalf("defaultTtl on create: got %v, want 3600", cp.DefaultTimeToLive)
	}
	if cp.IndexingPolicy == nil || !cp.IndexingPolicy.Automatic || !strings.EqualFold(string(cp.IndexingPolicy.IndexingMode), string(azcosmos.IndexingModeConsistent)) {
		t.Fatalf("default indexing policy not filled in: %+v", cp.IndexingPolicy)
	}
	_, err = db.CreateContainer(e.ctx, props, nil)
	wantStatus(t, err, http.StatusConflict, "duplicate container")

	c, _ := db.NewContainer("orders")
	thr, err := c.ReadThroughput(e.ctx, nil)
	if n, _ := thr.ThroughputProperties.ManualThroughput(); err != nil || n != 400 {
		t.Fatalf("container throughput: %d, %v", n, err)
	}
	if _, err := c.ReplaceThroughput(e.ctx, azcosmos.NewManualThroughputProperties(500), nil); err != nil {
		t.Fatal(err)
	}
	thr, _ = c.ReadThroughput(e.ctx, nil)
	if n, _ := thr.ThroughputProperties.ManualThroughput(); n != 500 {
		t.Fatalf("after replace: %d, want 500", n)
	}

	// Replace is a full replacement: no DefaultTimeToLive turns TTL off.
	read, err := c.Read(e.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := *read.ContainerProperties
	p.DefaultTimeToLive = nil
	rep, err := c.Replace(e.ctx, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.ContainerProperties.DefaultTimeToLive != nil {
		t.Fatalf("defaultTtl after replace without it: %v, want absent", *rep.ContainerProperties.DefaultTimeToLive)
	}
	p.PartitionKeyDefinition.Paths = []string{"/other"}
	_, err = c.Replace(e.ctx, p, nil)
	wantStatus(t, err, http.StatusBadRequest, "changing the partition key")

	// indexingMode none with automatic false is accepted without TTL...
	none := *read.ContainerProperties
	none.DefaultTimeToLive = nil
	none.IndexingPolicy = &azcosmos.IndexingPolicy{IndexingMode: azcosmos.IndexingModeNone, Automatic: false}
	if _, err := c.Replace(e.ctx, none, nil); err != nil {
		t.Fatalf("indexing none: %v", err)
	}
	// ...but not together with TTL, either way round.
	none.DefaultTimeToLive = int32p(10)
	_, err = c.Replace(e.ctx, none, nil)
	wantStatus(t, err, http.StatusBadRequest, "TTL on a container with indexing none")

	pager := db.NewQueryContainersPager("SELECT * FROM c", nil)
	n := 0
	for pager.More() {
		page, err := pager.NextPage(e.ctx)
		if err != nil {
			t.Fatal(err)
		}
		n += len(page.Containers)
	}
	if n != 1 {
		t.Fatalf("query containers: %d, want 1", n)
	}
	if _, err := c.Delete(e.ctx, nil); err != nil {
		t.Fatal(err)
	}
	_, err = c.Read(e.ctx, nil)
	wantStatus(t, err, http.StatusNotFound, "read deleted container")
}

func TestAutoscaleThroughput(t *testing.T) {
	e := start(t)
	db := e.database(t, "db")
	tp := azcosmos.NewAutoscaleThroughputProperties(5000)
	if _, err := db.CreateContainer(e.ctx, pkProps("auto", "/pk"), &azcosmos.CreateContainerOptions{ThroughputProperties: &tp}); err != nil {
		t.Fatal(err)
	}
	c, _ := db.NewContainer("auto")
	got, err := c.ReadThroughput(e.ctx, nil)
	if max, ok := got.ThroughputProperties.AutoscaleMaxThroughput(); err != nil || !ok || max != 5000 {
		t.Fatalf("autoscale max: %d, %v, %v", max, ok, err)
	}
	if _, err := c.ReplaceThroughput(e.ctx, azcosmos.NewAutoscaleThroughputProperties(10000), nil); err != nil {
		t.Fatal(err)
	}
	got, _ = c.ReadThroughput(e.ctx, nil)
	if max, _ := got.ThroughputProperties.AutoscaleMaxThroughput(); max != 10000 {
		t.Fatalf("after replace: %d, want 10000", max)
	}
}

func TestContainerValidation(t *testing.T) {
	e := start(t)
	db := e.database(t, "db")
	for _, tc := range []struct {
		name string
		ttl  int32
	}{{"zero", 0}, {"minus ten", -10}} {
		p := pkProps("c-"+tc.name, "/pk")
		p.DefaultTimeToLive = int32p(tc.ttl)
		_, err := db.CreateContainer(e.ctx, p, nil)
		wantStatus(t, err, http.StatusBadRequest, "defaultTtl "+tc.name)
	}
	p := pkProps("ttl-none", "/pk")
	p.DefaultTimeToLive = int32p(10)
	p.IndexingPolicy = &azcosmos.IndexingPolicy{IndexingMode: azcosmos.IndexingModeNone}
	_, err := db.CreateContainer(e.ctx, p, nil)
	wantStatus(t, err, http.StatusBadRequest, "defaultTtl with indexing none")
	if err == nil || !contains(err.Error(), "Indexing mode value cannot be 'none' when 'defaultTtl' is specified in the collection") {
		t.Fatalf("error text: %v", err)
	}
	p = pkProps("max", "/pk")
	p.DefaultTimeToLive = int32p(2147483647)
	if _, err := db.CreateContainer(e.ctx, p, nil); err != nil {
		t.Fatalf("defaultTtl max: %v", err)
	}
}

func TestPartitionKeyRanges(t *testing.T) {
	e := start(t)
	c := e.container(t, pkProps("ranges", "/pk"))
	ranges, err := c.ReadFeedRanges(e.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(ranges) != 1 {
		t.Fatalf("feed ranges: %d, want 1", len(ranges))
	}
}
