package gateway

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ebbdb/ebb/internal/auth"
	"github.com/ebbdb/ebb/internal/engine"
	"github.com/ebbdb/ebb/internal/metrics"
	"github.com/ebbdb/ebb/internal/storage/pebble"
)

// newBenchGateway returns the API handler over in-memory Pebble with a
// database "db" and a container "c" partitioned on /pk, and the verifier
// that signs requests to it.
func newBenchGateway(b *testing.B) (http.Handler, *auth.Verifier) {
	b.Helper()
	store, err := pebble.OpenMemory()
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	eng, err := engine.Open(ctx, store, engine.Options{DisablePurger: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { eng.Close(); store.Close() })
	if _, err := eng.CreateDatabase(ctx, []byte(`{"id":"db"}`), engine.ThroughputHeaders{}); err != nil {
		b.Fatal(err)
	}
	if _, err := eng.CreateContainer(ctx, "db", []byte(`{"id":"c","partitionKey":{"paths":["/pk"]}}`), engine.ThroughputHeaders{}); err != nil {
		b.Fatal(err)
	}
	v, err := auth.NewVerifier(auth.EmulatorKey)
	if err != nil {
		b.Fatal(err)
	}
	g := New(Options{Engine: eng, Verifier: v, Metrics: metrics.New()})
	return g.Handler(), v
}

// BenchmarkUpsertItem measures a 1 KB upsert through the whole HTTP
// handler, signed as the SDKs sign it: auth, routing, body, engine,
// storage and the response. Building the request (not its body) is
// timed too.
func BenchmarkUpsertItem(b *testing.B) {
	h, v := newBenchGateway(b)
	pad := strings.Repeat("x", 1000)
	date := time.Now().UTC().Format(time.RFC1123)
	sig := v.Sign(http.MethodPost, "docs", "dbs/db/colls/c", date)
	bodies := make([][]byte, 1000)
	for i := range bodies {
		bodies[i] = []byte(`{"id":"` + strconv.Itoa(i) + `","pk":"p","pad":"` + pad + `"}`)
	}
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		r := httptest.NewRequest(http.MethodPost, "/dbs/db/colls/c/docs", bytes.NewReader(bodies[i%len(bodies)]))
		r.Header.Set("x-ms-date", date)
		r.Header.Set("authorization", sig)
		r.Header.Set("x-ms-documentdb-partitionkey", `["p"]`)
		r.Header.Set("x-ms-documentdb-is-upsert", "True")
		r.Header.Set("x-ms-version", "2020-07-15")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK && w.Code != http.StatusCreated {
			b.Fatalf("upsert: %d %s", w.Code, w.Body)
		}
		i++
	}
}

// BenchmarkReadItem measures a point read of a 1 KB item through the
// whole HTTP handler, signed as the SDKs sign it.
func BenchmarkReadItem(b *testing.B) {
	h, v := newBenchGateway(b)
	date := time.Now().UTC().Format(time.RFC1123)
	body := []byte(`{"id":"a","pk":"p","pad":"` + strings.Repeat("x", 1000) + `"}`)
	put := httptest.NewRequest(http.MethodPost, "/dbs/db/colls/c/docs", bytes.NewReader(body))
	put.Header.Set("x-ms-date", date)
	put.Header.Set("authorization", v.Sign(http.MethodPost, "docs", "dbs/db/colls/c", date))
	put.Header.Set("x-ms-documentdb-partitionkey", `["p"]`)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, put)
	if w.Code != http.StatusCreated {
		b.Fatalf("create: %d %s", w.Code, w.Body)
	}
	sig := v.Sign(http.MethodGet, "docs", "dbs/db/colls/c/docs/a", date)
	b.ReportAllocs()
	for b.Loop() {
		r := httptest.NewRequest(http.MethodGet, "/dbs/db/colls/c/docs/a", nil)
		r.Header.Set("x-ms-date", date)
		r.Header.Set("authorization", sig)
		r.Header.Set("x-ms-documentdb-partitionkey", `["p"]`)
		r.Header.Set("x-ms-version", "2020-07-15")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			b.Fatalf("read: %d %s", w.Code, w.Body)
		}
	}
}
