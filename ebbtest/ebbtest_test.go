package ebbtest_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/ebbdb/ebb/ebbtest"
)

// TestAsAUserWould uses the package as a user's own test does: one server
// per test, the SDK client it returns, the clock moved instead of slept.
func TestAsAUserWould(t *testing.T) {
	epoch := time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)
	srv := ebbtest.New(t, ebbtest.StartingAt(epoch))
	ctx := context.Background()
	if _, err := srv.Client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "shop"}, nil); err != nil {
		t.Fatal(err)
	}
	db, _ := srv.Client.NewDatabase("shop")
	ttl := int32(60)
	props := azcosmos.ContainerProperties{ID: "carts", PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}}, DefaultTimeToLive: &ttl}
	if _, err := db.CreateContainer(ctx, props, nil); err != nil {
		t.Fatal(err)
	}
	carts, _ := db.NewContainer("carts")
	pk := azcosmos.NewPartitionKeyString("p")
	if _, err := carts.UpsertItem(ctx, pk, []byte(`{"id":"c1","pk":"p"}`), nil); err != nil {
		t.Fatal(err)
	}
	read, err := carts.ReadItem(ctx, pk, "c1", nil)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TS int64 `json:"_ts"`
	}
	if err := json.Unmarshal(read.Value, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.TS != epoch.Unix() {
		t.Errorf("_ts = %d, want the server's clock, %d", doc.TS, epoch.Unix())
	}

	srv.Advance(time.Minute)
	if got := srv.Now(); !got.Equal(epoch.Add(time.Minute)) {
		t.Errorf("Now() = %v after Advance(1m), want %v", got, epoch.Add(time.Minute))
	}
	if _, err := carts.ReadItem(ctx, pk, "c1", nil); err == nil {
		t.Fatal("the cart is readable after its default TTL of 60 s has passed")
	}
	pager := carts.NewQueryItemsPager("SELECT * FROM c", pk, nil)
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Items) != 0 {
			t.Fatalf("query returned %d expired items", len(page.Items))
		}
	}
}

// TestHTTPClientTrustsTheServer checks that the server's certificate is
// verified, not skipped: HTTPClient reaches it, a default client does not.
func TestHTTPClientTrustsTheServer(t *testing.T) {
	srv := ebbtest.New(t)
	resp, err := srv.HTTPClient().Get(srv.Endpoint + "_ebb/health")
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("health: status %d", resp.StatusCode)
	}
	if _, err := http.Get(srv.Endpoint + "_ebb/health"); err == nil {
		t.Error("a client that does not trust the server's certificate connected")
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if err := srv.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}
