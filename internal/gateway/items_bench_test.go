package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ebbdb/ebb/internal/auth"
	"github.com/ebbdb/ebb/internal/engine"
	"github.com/ebbdb/ebb/internal/metrics"
)

// newBenchGateway returns the API handler over in-memory Pebble with a
// database "db" and a container "c" partitioned on /pk, and the verifier
// that signs requests to it.
func newBenchGateway(b *testing.B) (http.Handler, *auth.Verifier, *engine.Engine) {
	b.Helper()
	ctx := context.Background()
	eng, v := newTestEngine(b, engine.Options{DisablePurger: true})
	if _, err := eng.CreateDatabase(ctx, []byte(`{"id":"db"}`), engine.ThroughputHeaders{}); err != nil {
		b.Fatal(err)
	}
	if _, err := eng.CreateContainer(ctx, "db", []byte(`{"id":"c","partitionKey":{"paths":["/pk"]}}`), engine.ThroughputHeaders{}); err != nil {
		b.Fatal(err)
	}
	g := New(Options{Engine: eng, Verifier: v, Metrics: metrics.New()})
	return g.Handler(), v, eng
}

// benchWriter is a ResponseWriter that keeps the status and drops the
// body, so that a benchmark counts the server's allocations and not a
// recorder's.
type benchWriter struct {
	h      http.Header
	status int
}

func (w *benchWriter) Header() http.Header         { return w.h }
func (w *benchWriter) WriteHeader(status int)      { w.status = status }
func (w *benchWriter) Write(b []byte) (int, error) { return len(b), nil }

// reset readies w for the next request, keeping its header map.
func (w *benchWriter) reset() {
	clear(w.h)
	w.status = 0
}

// signedHeader returns the headers of a request signed as the SDKs sign
// it, under the canonical keys net/http's server produces.
func signedHeader(v *auth.Verifier, verb, resType, link string) http.Header {
	date := time.Now().UTC().Format(time.RFC1123)
	return http.Header{
		"X-Ms-Date":                    {date},
		"Authorization":                {v.Sign(verb, resType, link, date)},
		"X-Ms-Documentdb-Partitionkey": {`["p"]`},
		"X-Ms-Version":                 {"2020-07-15"},
	}
}

// BenchmarkUpsertItem measures a 1 KB upsert through the whole HTTP
// handler, signed as the SDKs sign it: auth, routing, body, engine,
// storage and the response. Each request is built as net/http's server
// would hand it over (its header map is shared, which the handler only
// reads).
func BenchmarkUpsertItem(b *testing.B) {
	h, v, _ := newBenchGateway(b)
	pad := strings.Repeat("x", 1000)
	bodies := make([][]byte, 1000)
	for i := range bodies {
		bodies[i] = []byte(`{"id":"` + strconv.Itoa(i) + `","pk":"p","pad":"` + pad + `"}`)
	}
	hdr := signedHeader(v, http.MethodPost, "docs", "dbs/db/colls/c")
	hdr["X-Ms-Documentdb-Is-Upsert"] = []string{"True"}
	w := &benchWriter{h: http.Header{}}
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		r, err := http.NewRequest(http.MethodPost, "/dbs/db/colls/c/docs", bytes.NewReader(bodies[i%len(bodies)]))
		if err != nil {
			b.Fatal(err)
		}
		r.Header = hdr
		w.reset()
		h.ServeHTTP(w, r)
		if w.status != http.StatusOK && w.status != http.StatusCreated {
			b.Fatalf("upsert: %d", w.status)
		}
		i++
	}
}

// BenchmarkReadItem measures a point read of a 1 KB item through the
// whole HTTP handler, signed as the SDKs sign it.
func BenchmarkReadItem(b *testing.B) {
	for _, signer := range []string{"master-key", "resource-token"} {
		b.Run(signer, func(b *testing.B) { benchmarkReadItem(b, signer == "resource-token") })
	}
}

// benchmarkReadItem reads a 1 KB item, signed with the master key or
// with a resource token for its container.
func benchmarkReadItem(b *testing.B, withToken bool) {
	h, v, eng := newBenchGateway(b)
	body := []byte(`{"id":"a","pk":"p","pad":"` + strings.Repeat("x", 1000) + `"}`)
	put, err := http.NewRequest(http.MethodPost, "/dbs/db/colls/c/docs", bytes.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	put.Header = signedHeader(v, http.MethodPost, "docs", "dbs/db/colls/c")
	w := &benchWriter{h: http.Header{}}
	h.ServeHTTP(w, put)
	if w.status != http.StatusCreated {
		b.Fatalf("create: %d", w.status)
	}
	hdr := signedHeader(v, http.MethodGet, "docs", "dbs/db/colls/c/docs/a")
	if withToken {
		hdr.Set("Authorization", url.QueryEscape(containerToken(b, eng)))
	}
	b.ReportAllocs()
	for b.Loop() {
		r, err := http.NewRequest(http.MethodGet, "/dbs/db/colls/c/docs/a", nil)
		if err != nil {
			b.Fatal(err)
		}
		r.Header = hdr
		w.reset()
		h.ServeHTTP(w, r)
		if w.status != http.StatusOK {
			b.Fatalf("read: %d", w.status)
		}
	}
}

// containerToken is the resource token of an All permission on
// dbs/db/colls/c.
func containerToken(b *testing.B, eng *engine.Engine) string {
	ctx := context.Background()
	if _, err := eng.CreateUser(ctx, "db", []byte(`{"id":"u"}`)); err != nil {
		b.Fatal(err)
	}
	res, err := eng.CreatePermission(ctx, "db", "u", []byte(`{"id":"p","permissionMode":"All","resource":"dbs/db/colls/c"}`), time.Hour)
	if err != nil {
		b.Fatal(err)
	}
	var p struct {
		Token string `json:"_token"`
	}
	if err := json.Unmarshal(res.Body, &p); err != nil {
		b.Fatal(err)
	}
	return p.Token
}
