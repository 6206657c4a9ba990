package e2e

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/ebbdb/ebb/internal/auth"
	"github.com/ebbdb/ebb/internal/bench"
	"github.com/ebbdb/ebb/internal/clock"
	"github.com/ebbdb/ebb/internal/server"
)

// TestMetricsNeedKey checks that /metrics on the API listener, which
// names every database and container with traffic, answers only the
// holder of the master key: with a signature as on any route, or as a
// bearer token (what Prometheus can send); anyone else gets the Cosmos
// 401 and no figure.
func TestMetricsNeedKey(t *testing.T) {
	e := start(t)
	c := e.container(t, pkProps("metricsecret", "/pk"))
	if _, err := c.CreateItem(e.ctx, pk, []byte(`{"id":"x","pk":"p"}`), nil); err != nil {
		t.Fatal(err)
	}
	url := e.srv.URL + "metrics"
	for _, tt := range []struct {
		name   string
		header map[string]string
	}{
		{"no key", nil},
		{"another key as bearer", map[string]string{"Authorization": "Bearer bm90IHRoZSBrZXk="}},
		{"a signature with another key", otherKeySignature(t)},
	} {
		status, body := getOpen(t, url, tt.header)
		if status != http.StatusUnauthorized || !strings.Contains(body, `"code":"Unauthorized"`) {
			t.Errorf("%s: got %d %.200s, want 401 with the Cosmos body", tt.name, status, body)
		}
		if strings.Contains(body, "ebb_") || strings.Contains(body, "metricsecret") {
			t.Errorf("%s: the 401 body shows metrics: %.300s", tt.name, body)
		}
	}

	status, body := getOpen(t, url, map[string]string{"Authorization": "Bearer " + auth.EmulatorKey})
	if status != http.StatusOK || !strings.Contains(body, "ebb_request_duration_seconds") {
		t.Errorf("bearer master key: got %d %.200s, want 200 with the metrics", status, body)
	}
	res := newRest(t, e).do(t, "GET", "/metrics", nil, nil)
	if res.status != http.StatusOK || !strings.Contains(string(res.body), "ebb_request_duration_seconds") {
		t.Errorf("master-key signature: got %d %.200s, want 200 with the metrics", res.status, res.body)
	}
}

// TestMetricsListener checks that --metrics-listen serves /metrics with
// no key, on its own address, and that the API listener then has none.
func TestMetricsListener(t *testing.T) {
	e := startWith(t, server.Config{Memory: true, MetricsListen: "127.0.0.1:0"})
	status, body := getOpen(t, fmt.Sprintf("http://%s/metrics", e.srv.MetricsAddr()), nil)
	if status != http.StatusOK || !strings.Contains(body, "ebb_ttl_purger_wakeups_total") {
		t.Errorf("metrics listener: got %d %.200s, want 200 with the metrics", status, body)
	}
	status, body = getOpen(t, e.srv.URL+"metrics", map[string]string{"Authorization": "Bearer " + auth.EmulatorKey})
	if status != http.StatusNotFound || strings.Contains(body, "ebb_") {
		t.Errorf("API listener with a metrics listener: got %d %.200s, want 404", status, body)
	}
}

// otherKeySignature is the headers of GET /metrics signed with a key
// that is not the server's.
func otherKeySignature(t testing.TB) map[string]string {
	t.Helper()
	v, err := auth.NewVerifier("bm90IHRoZSBrZXk=")
	if err != nil {
		t.Fatal(err)
	}
	date := clock.NewSystem().Now().UTC().Format(http.TimeFormat)
	return map[string]string{"Authorization": v.Sign("GET", "metrics", "", date), "x-ms-date": date}
}

// TestSharedStoreMetrics checks, on PostgreSQL, that /metrics counts the
// shared store's write transactions and the point writes it ran in
// groups: writes to eight partitions from more writers at once than the
// node has groups in flight are grouped.
func TestSharedStoreMetrics(t *testing.T) {
	if !onPostgres() {
		t.Skip("the shared store's counts: EBB_E2E_STORE=postgres")
	}
	e := start(t)
	db := e.database(t, "db-sharedcounts")
	if _, err := db.CreateContainer(bench.WithPartitionCount(e.ctx, 8), pkProps("counts", "/pk"), nil); err != nil {
		t.Fatal(err)
	}
	c, _ := db.NewContainer("counts")
	const writers, each = 16, 20
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			key := azcosmos.NewPartitionKeyString(fmt.Sprintf("p%d", w))
			for i := range each {
				doc := fmt.Appendf(nil, `{"id":"x","pk":"p%d","n":%d}`, w, i)
				if _, err := c.UpsertItem(e.ctx, key, doc, nil); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	_, body := getOpen(t, e.srv.URL+"metrics", map[string]string{"Authorization": "Bearer " + auth.EmulatorKey})
	counts := map[string]float64{}
	for _, line := range strings.Split(body, "\n") {
		if name, value, ok := strings.Cut(line, " "); ok && strings.HasPrefix(name, "ebb_storage_") {
			counts[name], _ = strconv.ParseFloat(value, 64)
		}
	}
	t.Logf("the shared store's counts: %v", counts)
	if counts["ebb_storage_updates_total"] < writers*each {
		t.Errorf("ebb_storage_updates_total = %v, want at least %d: %v", counts["ebb_storage_updates_total"], writers*each, counts)
	}
	if counts["ebb_storage_grouped_updates_total"] == 0 {
		t.Errorf("no point write of %d writers at once ran in a group: %v", writers, counts)
	}
	if _, ok := counts["ebb_storage_regrouped_updates_total"]; !ok {
		t.Errorf("ebb_storage_regrouped_updates_total is missing: %v", counts)
	}
}
