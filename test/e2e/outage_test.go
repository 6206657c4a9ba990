package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/ebbdb/ebb/internal/auth"
	"github.com/ebbdb/ebb/internal/clock/clocktest"
	"github.com/ebbdb/ebb/internal/server"
	"github.com/ebbdb/ebb/internal/storage/postgres/pgtest"
)

// TestDatabaseOutage cuts Ebb off from its PostgreSQL database: requests
// fail with 503 and a message saying so, and succeed again once the
// database is back, without restarting Ebb.
func TestDatabaseOutage(t *testing.T) {
	url := pgtest.FreshSchema(t)
	proxy := pgtest.StartProxy(t, url)
	e := startWith(t, server.Config{Store: proxy.URL(t, url), PGStatementTimeout: 5 * time.Second})
	c := e.container(t, pkProps("outage", "/pk"))
	if _, err := c.CreateItem(e.ctx, pk, []byte(`{"id":"x","pk":"p"}`), nil); err != nil {
		t.Fatal(err)
	}
	// A client that does not retry, to see each answer.
	cred, _ := azcosmos.NewKeyCredential(auth.EmulatorKey)
	client, _ := azcosmos.NewClientWithKey(e.srv.URL, cred, &azcosmos.ClientOptions{ClientOptions: azcore.ClientOptions{
		Transport: insecureTransport(), Retry: policy.RetryOptions{MaxRetries: -1},
	}})
	direct, _ := client.NewContainer("db-outage", "outage")
	if _, err := direct.ReadItem(e.ctx, pk, "x", nil); err != nil {
		t.Fatal(err)
	}

	proxy.SetMode(pgtest.Refuse)
	_, err := direct.ReadItem(e.ctx, pk, "x", nil)
	wantStatus(t, err, http.StatusServiceUnavailable, "read while the database is away")
	if !strings.Contains(err.Error(), "unavailable") {
		t.Fatalf("503 without a clear message: %v", err)
	}
	_, err = direct.UpsertItem(e.ctx, pk, []byte(`{"id":"y","pk":"p"}`), nil)
	wantStatus(t, err, http.StatusServiceUnavailable, "write while the database is away")

	proxy.SetMode(pgtest.Forward)
	clocktest.WaitUntil(t, "reads to succeed once the database is back", func() bool {
		_, err := direct.ReadItem(e.ctx, pk, "x", nil)
		return err == nil
	})
	if _, err := direct.UpsertItem(e.ctx, pk, []byte(`{"id":"y","pk":"p"}`), nil); err != nil {
		t.Fatalf("write after the outage: %v", err)
	}
}
