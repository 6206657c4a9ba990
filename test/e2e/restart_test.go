package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/ebbdb/ebb/internal/server"
)

// TestRestart writes through one server, stops it, starts another on the
// same data directory and finds everything there.
func TestRestart(t *testing.T) {
	dir := t.TempDir()
	e := startWith(t, server.Config{DataDir: dir})
	c := ttlContainer(t, e, "durable", int32p(100))
	for _, body := range []string{`{"id":"a","pk":"p"}`, `{"id":"b","pk":"p","ttl":-1}`, `{"id":"c","pk":"p","ttl":5}`} {
		if _, err := c.CreateItem(e.ctx, pk, []byte(body), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.stop(t); err != nil && err != context.DeadlineExceeded {
		t.Fatal(err)
	}

	e2 := startWith(t, server.Config{DataDir: dir})
	db, _ := e2.client.NewDatabase("db-durable")
	c2, _ := db.NewContainer("durable")
	props, err := c2.Read(e2.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := props.ContainerProperties.DefaultTimeToLive; d == nil || *d != 100 {
		t.Fatalf("defaultTtl after restart: %v", d)
	}
	thr, err := c2.ReadThroughput(e2.ctx, nil)
	if n, _ := thr.ThroughputProperties.ManualThroughput(); err != nil || n != 400 {
		t.Fatalf("offer after restart: %d, %v", n, err)
	}
	for _, id := range []string{"a", "b", "c"} {
		if !visibleEverywhere(t, e2, c2, id) {
			t.Fatalf("item %s missing after restart", id)
		}
	}
	// TTL state survived: c still expires at _ts+5, a at _ts+100.
	e2.clock.Advance(5 * time.Second)
	if visibleEverywhere(t, e2, c2, "c") || !visibleEverywhere(t, e2, c2, "a") {
		t.Fatal("TTL state wrong after restart")
	}
	// New writes continue the container's sequence: no _rid reuse.
	if _, err := c2.CreateItem(e2.ctx, pk, []byte(`{"id":"d","pk":"p"}`), nil); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, row := range queryAll(t, e2, c2, "SELECT * FROM c", azcosmos.NewPartitionKey(), nil) {
		rid := decode(t, row)["_rid"].(string)
		if seen[rid] {
			t.Fatalf("duplicate _rid %s after restart", rid)
		}
		seen[rid] = true
	}
}
