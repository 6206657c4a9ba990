package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ebbdb/ebb/internal/server"
	"github.com/ebbdb/ebb/internal/storage"
)

// TestHealth checks the two open health answers: liveness says the
// process serves whatever the store does; readiness reads the store and
// says 503 when it cannot, naming the kind of store and why in one word,
// never what the store's error said.
func TestHealth(t *testing.T) {
	outage := &outageStore{}
	e := startWith(t, server.Config{Memory: true, WrapStore: outage.wrap})
	backend := "memory"
	if onPostgres() {
		backend = "postgres"
	}
	for _, path := range []string{"/_ebb/health", "/_ebb/health/live"} {
		wantLive(t, e, path)
	}
	wantReady(t, e, http.StatusOK, backend, "")

	outage.down.Store(true)
	for _, path := range []string{"/_ebb/health", "/_ebb/health/live"} {
		wantLive(t, e, path)
	}
	body := wantReady(t, e, http.StatusServiceUnavailable, backend, "unreachable")
	for _, secret := range []string{"alice", "secretdb", "db.internal", "6543"} {
		if strings.Contains(body, secret) {
			t.Errorf("readiness names the store's %q: %s", secret, body)
		}
	}

	outage.down.Store(false)
	wantReady(t, e, http.StatusOK, backend, "")
}

// outageStore makes the store's point reads fail as an unreachable
// database's do, while down is set.
type outageStore struct {
	down atomic.Bool
}

func (o *outageStore) wrap(s storage.Store) storage.Store { return &outageGets{Store: s, o: o} }

type outageGets struct {
	storage.Store
	o *outageStore
}

func (s *outageGets) Get(ctx context.Context, key []byte) ([]byte, error) {
	if s.o.down.Load() {
		return nil, fmt.Errorf("postgres: get: %w: failed to connect to `user=alice database=secretdb`: db.internal:6543: connection refused", storage.ErrUnavailable)
	}
	return s.Store.Get(ctx, key)
}

func (s *outageGets) Lend(ctx context.Context, key []byte, fn func([]byte) error) error {
	if s.o.down.Load() {
		_, err := s.Get(ctx, key)
		return err
	}
	return s.Store.Lend(ctx, key, fn)
}

// getOpen sends an unsigned GET, as an orchestrator's probe or a
// stranger would.
func getOpen(t testing.TB, url string, header map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	c := insecureTransport()
	defer c.CloseIdleConnections()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

func wantLive(t testing.TB, e *env, path string) {
	t.Helper()
	status, body := getOpen(t, strings.TrimSuffix(e.srv.URL, "/")+path, nil)
	if status != http.StatusOK || body != `{"status":"ok"}` {
		t.Fatalf("GET %s: got %d %s, want 200 {\"status\":\"ok\"}", path, status, body)
	}
}

// wantReady checks GET /_ebb/health/ready and returns its body.
func wantReady(t testing.TB, e *env, status int, backend, reason string) string {
	t.Helper()
	got, body := getOpen(t, e.srv.URL+"_ebb/health/ready", nil)
	var r struct {
		Status string
		Checks struct {
			Store struct {
				Status    string
				Backend   string
				LatencyMs *float64
				Reason    string
			}
		}
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatalf("GET /_ebb/health/ready: %d %q is not JSON: %v", got, body, err)
	}
	want := "ok"
	if status != http.StatusOK {
		want = "unavailable"
	}
	st := r.Checks.Store
	if got != status || r.Status != want || st.Status != want || st.Backend != backend || st.LatencyMs == nil || st.Reason != reason {
		t.Fatalf("GET /_ebb/health/ready: got %d %s\nwant %d with status %q, store {status %q, backend %q, latencyMs, reason %q}",
			got, body, status, want, want, backend, reason)
	}
	return body
}
