package e2e

import (
	"bytes"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/jackc/pgx/v5/pgconn"

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
	logs := &logBuffer{}
	e := startWith(t, server.Config{Store: proxy.URL(t, url), PGStatementTimeout: 5 * time.Second, Logger: logs.logger()})
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

	// The client is told the store is unavailable, and nothing about
	// where it is; the log has the driver's detail under the activity id.
	// The id has no digit run that could pass for a port.
	const activity = "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee"
	res := newRest(t, e).do(t, "GET", "/dbs/db-outage/colls/outage/docs/x",
		map[string]string{"x-ms-documentdb-partitionkey": `["p"]`, "x-ms-activity-id": activity}, nil)
	if res.status != http.StatusServiceUnavailable || !strings.Contains(string(res.body), `"code":"ServiceUnavailable"`) {
		t.Fatalf("read while the database is away: got %d %s, want 503 ServiceUnavailable", res.status, res.body)
	}
	// The SDKs wait x-ms-retry-after-ms before retrying.
	if got := res.header.Get("x-ms-retry-after-ms"); got != "1000" {
		t.Errorf("the 503 has x-ms-retry-after-ms %q, want 1000", got)
	}
	for _, secret := range pgCoordinates(t, url, proxy.URL(t, url)) {
		if strings.Contains(string(res.body), secret) {
			t.Errorf("the 503 body names the database's %q: %s", secret, res.body)
		}
	}
	if line := logs.line("activity=" + activity); !strings.Contains(line, "store unavailable") || !strings.Contains(line, "postgres") {
		t.Errorf("the log has no line with the outage's detail for activity %s; log:\n%s", activity, logs.String())
	}

	proxy.SetMode(pgtest.Forward)
	clocktest.WaitUntil(t, "reads to succeed once the database is back", func() bool {
		_, err := direct.ReadItem(e.ctx, pk, "x", nil)
		return err == nil
	})
	if _, err := direct.UpsertItem(e.ctx, pk, []byte(`{"id":"y","pk":"p"}`), nil); err != nil {
		t.Fatalf("write after the outage: %v", err)
	}
}

// pgCoordinates are what must never reach a client about the database
// behind each URL: its user, database name, host and port.
func pgCoordinates(t *testing.T, urls ...string) []string {
	t.Helper()
	var out []string
	for _, u := range urls {
		cfg, err := pgconn.ParseConfig(u)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, cfg.User, cfg.Database, cfg.Host, strconv.Itoa(int(cfg.Port)))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// logBuffer collects a server's log for a test to read.
type logBuffer struct {
	mu  sync.Mutex // guards buf
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *logBuffer) logger() *slog.Logger { return slog.New(slog.NewTextHandler(b, nil)) }

// line returns the first logged line holding s, or "".
func (b *logBuffer) line(s string) string {
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	return ""
}

// TestReadinessDuringOutage cuts Ebb off from PostgreSQL: liveness stays
// 200, readiness answers 503 without naming the database, both when the
// database refuses connections and when it never answers (the check is
// bounded by its own timeout), and 200 again once it is back.
func TestReadinessDuringOutage(t *testing.T) {
	url := pgtest.FreshSchema(t)
	proxy := pgtest.StartProxy(t, url)
	e := startWith(t, server.Config{Store: proxy.URL(t, url), PGStatementTimeout: 5 * time.Second})
	wantReady(t, e, http.StatusOK, "postgres", "")
	secrets := pgCoordinates(t, url, proxy.URL(t, url))

	for _, c := range []struct {
		mode   pgtest.ProxyMode
		reason string
	}{
		{pgtest.Refuse, "unreachable"},
		{pgtest.Blackhole, "timeout"},
	} {
		proxy.SetMode(c.mode)
		wantLive(t, e, "/_ebb/health")
		// A pooled connection the proxy cut may fail the first check in
		// its own way; every answer must be a 503 that names nothing.
		clocktest.WaitUntil(t, "readiness to say "+c.reason, func() bool {
			status, body := getOpen(t, e.srv.URL+"_ebb/health/ready", nil)
			if status != http.StatusServiceUnavailable {
				t.Fatalf("readiness while the database is away: got %d %s, want 503", status, body)
			}
			// The kind of store may be named; the test database's user
			// may be called the same.
			named := strings.Replace(body, `"backend":"postgres"`, "", 1)
			for _, secret := range secrets {
				if strings.Contains(named, secret) {
					t.Fatalf("readiness names the database's %q: %s", secret, body)
				}
			}
			return strings.Contains(body, `"reason":"`+c.reason+`"`)
		})
	}

	proxy.SetMode(pgtest.Forward)
	clocktest.WaitUntil(t, "readiness once the database is back", func() bool {
		status, _ := getOpen(t, e.srv.URL+"_ebb/health/ready", nil)
		return status == http.StatusOK
	})
	wantReady(t, e, http.StatusOK, "postgres", "")
}
