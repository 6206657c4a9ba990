package gateway

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ebbdb/ebb/internal/auth"
	"github.com/ebbdb/ebb/internal/metrics"
)

const testReadOnlyKey = "cmVhZC1vbmx5LWtleS1mb3ItdGVzdHMtcnJycnJycnJycnI="

// TestEveryRouteChecksAccess sends every route in the gateway's table
// requests that must not pass: no authorization, a bad signature, a stale
// date, a signature for another resource or verb, and a read-only key on
// every write and on Ebb's administration. Each must be 401 before its
// handler runs: the gateway has no engine, so a handler that ran would
// fail with 500. It also pins which routes are open to anyone.
func TestEveryRouteChecksAccess(t *testing.T) {
	v, err := auth.NewVerifierKeys(auth.Keys{Primary: auth.EmulatorKey, ReadOnly: testReadOnlyKey})
	if err != nil {
		t.Fatal(err)
	}
	g := New(Options{Verifier: v, Metrics: metrics.New(), Logger: slog.New(slog.DiscardHandler)})
	h := g.Handler()
	primary, _ := auth.NewVerifier(auth.EmulatorKey)
	readOnly, _ := auth.NewVerifier(testReadOnlyKey)
	now := time.Now().UTC()
	date := now.Format(http.TimeFormat)

	var open []string
	checked := 0
	for _, rt := range g.routes() {
		if rt.access == accessOpen {
			open = append(open, rt.pattern)
			continue
		}
		for _, req := range concreteRequests(rt.pattern) {
			resType, link, err := auth.ResourceOf(req.path)
			if err != nil {
				t.Fatalf("%s: %v", rt.pattern, err)
			}
			cases := map[string]func(*http.Request){
				"no authorization": func(r *http.Request) { r.Header.Set("x-ms-date", date) },
				"bad signature": func(r *http.Request) {
					r.Header.Set("x-ms-date", date)
					r.Header.Set("authorization", "type%3Dmaster%26ver%3D1.0%26sig%3DAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA%3D")
				},
				"stale date": func(r *http.Request) {
					old := now.Add(-20 * time.Minute).Format(http.TimeFormat)
					r.Header.Set("x-ms-date", old)
					r.Header.Set("authorization", primary.Sign(req.method, resType, link, old))
				},
				"another resource": func(r *http.Request) {
					r.Header.Set("x-ms-date", date)
					r.Header.Set("authorization", primary.Sign(req.method, resType, link+"x", date))
				},
				"another verb": func(r *http.Request) {
					r.Header.Set("x-ms-date", date)
					r.Header.Set("authorization", primary.Sign("OPTIONS", resType, link, date))
				},
			}
			probe := httptest.NewRequest(req.method, req.path, nil)
			if rt.access == accessAdmin || writes(probe) {
				cases["read-only key"] = func(r *http.Request) {
					r.Header.Set("x-ms-date", date)
					r.Header.Set("authorization", readOnly.Sign(req.method, resType, link, date))
				}
			}
			for name, set := range cases {
				r := httptest.NewRequest(req.method, req.path, bytes.NewReader([]byte(`{"id":"x"}`)))
				set(r)
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, r)
				checked++
				if rec.Code != http.StatusUnauthorized || !strings.Contains(rec.Body.String(), `"code":"Unauthorized"`) {
					t.Errorf("%s %s (%s), %s: %d %s, want 401", req.method, req.path, rt.pattern, name, rec.Code, rec.Body.String())
				}
			}
		}
	}
	t.Logf("%d refused requests checked", checked)
	slices.Sort(open)
	want := []string{"/", "GET /_ebb/health", "GET /_ebb/health/live", "GET /_ebb/health/ready", "GET /_explorer/emulator.pem"}
	if !slices.Equal(open, want) {
		t.Errorf("routes open without a key: %q, want %q (and the explorer's static files)", open, want)
	}
}

type concreteRequest struct{ method, path string }

// concreteRequests turns a route pattern into requests that match it.
func concreteRequests(pattern string) []concreteRequest {
	method, path, ok := strings.Cut(pattern, " ")
	methods := []string{method}
	if !ok {
		path, methods = pattern, []string{http.MethodGet, http.MethodPost}
	}
	path = strings.NewReplacer("{$}", "", "{db}", "db1", "{coll}", "c1", "{id}", "x", "{rest...}", "a/b", "{user}", "u1").Replace(path)
	if strings.HasSuffix(path, "/") && path != "/" {
		path += "x"
	}
	var out []concreteRequest
	for _, m := range methods {
		out = append(out, concreteRequest{m, path})
	}
	return out
}
