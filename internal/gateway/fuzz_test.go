package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ebbdb/ebb/internal/auth"
	"github.com/ebbdb/ebb/internal/engine"
	"github.com/ebbdb/ebb/internal/metrics"
)

// FuzzGateway sends arbitrary requests, signed as the SDKs sign them,
// through the whole API handler over a database "db" with a container
// "c" (partitioned on /pk, two ranges) holding an item "a" and a stored
// procedure "sp", a container "u" with a unique key and one "h" with a
// hierarchical key. Whatever the method, path, headers and body, the
// answer is never a 500 (the handler turns a panic into one), and every
// error is a JSON object with a code and a message, as the SDKs parse it.
//
// headers is lines of "name: value".
func FuzzGateway(f *testing.F) {
	for _, s := range []struct {
		method          byte
		path, hdrs, bod string
	}{
		{0, "/dbs/db/colls/c/docs/a", "x-ms-documentdb-partitionkey: [\"p\"]", ""},
		{1, "/dbs/db/colls/c/docs", "x-ms-documentdb-partitionkey: [\"p\"]\nx-ms-documentdb-is-upsert: true", `{"id":"b","pk":"p","ttl":5}`},
		{1, "/dbs/db/colls/c/docs", "content-type: application/query+json\nx-ms-documentdb-isquery: true\nx-ms-documentdb-query-enablecrosspartition: true\nx-ms-max-item-count: 1", `{"query":"SELECT * FROM c WHERE c.pk = @p ORDER BY c.id","parameters":[{"name":"@p","value":"p"}]}`},
		{3, "/dbs/db/colls/c/docs/a", "x-ms-documentdb-partitionkey: [\"p\"]\nif-match: \"x\"", `[{"op":"incr","path":"/n","value":1}]`},
		{1, "/dbs/db/colls/c/docs", "x-ms-documentdb-partitionkey: [\"p\"]\nx-ms-cosmos-is-batch-request: true\nx-ms-cosmos-batch-atomic: true", `[{"operationType":"Read","id":"a"},{"operationType":"Create","resourceBody":{"id":"z","pk":"p"}}]`},
		{0, "/dbs/db/colls/c/docs", "a-im: Incremental Feed\nx-ms-documentdb-partitionkeyrangeid: 0\nif-none-match: \"3\"", ""},
		{2, "/dbs/db/colls/c", "", `{"id":"c","partitionKey":{"paths":["/pk"],"version":2},"defaultTtl":10,"indexingPolicy":{"indexingMode":"consistent","includedPaths":[{"path":"/*"}]}}`},
		{1, "/dbs/db/colls/c/sprocs/sp", "x-ms-documentdb-partitionkey: [\"p\"]", `["x"]`},
		{0, "/dbs/db/colls/c/pkranges", "if-none-match: \"x\"\nx-ms-max-item-count: -1", ""},
		{1, "/dbs/db/colls/u/docs", "x-ms-documentdb-partitionkey: [\"p\"]", `{"id":"1","pk":"p","email":"a@b"}`},
		{1, "/offers", "content-type: application/query+json\nx-ms-documentdb-isquery: true", `{"query":"SELECT * FROM root r WHERE r.resource = 'x'"}`},
		{1, "/dbs/db/colls/h/docs", "x-ms-documentdb-partitionkey: [\"t\",\"u\"]", `{"id":"1","a":"t","b":"u"}`},
		{1, "/dbs/db/colls/h/docs", "content-type: application/query+json\nx-ms-documentdb-isquery: true\nx-ms-documentdb-partitionkey: [\"t\"]", `{"query":"SELECT VALUE COUNT(1) FROM c"}`},
		{4, "/dbs/db/colls/h/docs/1", "x-ms-documentdb-partitionkey: [\"t\",\"u\"]", ""},
		{1, "/dbs/db/colls/c/operations/partitionkeydelete", "x-ms-documentdb-partitionkey: [\"p\"]", ""},
		{2, "/dbs//0", "", "0"},
		{0, "/dbs/db/colls/c/docs/../docs/a", "", ""},
	} {
		f.Add(s.method, s.path, s.hdrs, []byte(s.bod))
	}
	h, v := newFuzzGateway(f)
	methods := []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}
	f.Fuzz(func(t *testing.T, method byte, path, hdrs string, body []byte) {
		if len(path) > 512 || len(hdrs) > 2048 || len(body) > 8192 {
			return
		}
		m := methods[int(method)%len(methods)]
		req, err := http.NewRequest(m, "http://ebb.test"+path, bytes.NewReader(body))
		if err != nil || !strings.HasPrefix(path, "/") {
			return
		}
		typ, link, _ := auth.ResourceOf(req.URL.EscapedPath())
		date := time.Now().UTC().Format(http.TimeFormat)
		req.Header.Set("x-ms-date", date)
		req.Header.Set("authorization", v.Sign(m, typ, link, date))
		req.Header.Set("x-ms-version", "2020-07-15")
		for _, line := range strings.Split(hdrs, "\n") {
			name, value, ok := strings.Cut(line, ":")
			if ok && name != "" {
				req.Header.Set(strings.TrimSpace(name), strings.TrimSpace(value))
			}
		}
		// The SDKs never send a body the length does not match; the
		// server reads what Content-Length says.
		req.ContentLength = int64(len(body))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		// 501 (a feature Ebb does not have) and 503 (the store away) are
		// answers; 500 is a bug.
		if rec.Code == http.StatusInternalServerError {
			t.Fatalf("%s %s %q %q: %d %s", m, path, hdrs, body, rec.Code, rec.Body)
		}
		// The SDKs read these on every response of the API, errors
		// included (wire contract §17).
		if strings.HasPrefix(req.URL.Path, "/dbs") || strings.HasPrefix(req.URL.Path, "/offers") {
			hdr := rec.Header()
			if hdr.Get("x-ms-activity-id") == "" || hdr.Get("x-ms-request-charge") == "" {
				t.Fatalf("%s %s %q %q: %d without x-ms-activity-id or x-ms-request-charge: %v", m, path, hdrs, body, rec.Code, hdr)
			}
			if rec.Body.Len() > 0 && !strings.HasPrefix(hdr.Get("Content-Type"), "application/json") {
				t.Fatalf("%s %s %q %q: %d with Content-Type %q", m, path, hdrs, body, rec.Code, hdr.Get("Content-Type"))
			}
		}
		if rec.Code >= 400 {
			var e struct{ Code, Message string }
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Code == "" || e.Message == "" {
				t.Fatalf("%s %s %q %q: %d with body %q, want a JSON object with a code and a message", m, path, hdrs, body, rec.Code, rec.Body)
			}
		}
	})
}

// newFuzzGateway returns the API handler over in-memory Pebble with
// FuzzGateway's fixture, and the verifier that signs requests to it.
func newFuzzGateway(f *testing.F) (http.Handler, *auth.Verifier) {
	f.Helper()
	ctx := context.Background()
	eng, v := newTestEngine(f, engine.Options{})
	for _, step := range []func() error{
		func() error {
			_, err := eng.CreateDatabase(ctx, []byte(`{"id":"db"}`), engine.ThroughputHeaders{})
			return err
		},
		func() error {
			_, err := eng.CreateContainer(ctx, "db", []byte(`{"id":"c","partitionKey":{"paths":["/pk"],"kind":"Hash","version":2},"defaultTtl":-1}`), engine.ThroughputHeaders{Partitions: "2"})
			return err
		},
		func() error {
			_, err := eng.CreateContainer(ctx, "db", []byte(`{"id":"u","partitionKey":{"paths":["/pk"]},"uniqueKeyPolicy":{"uniqueKeys":[{"paths":["/email"]}]}}`), engine.ThroughputHeaders{})
			return err
		},
		func() error {
			_, err := eng.CreateContainer(ctx, "db", []byte(`{"id":"h","partitionKey":{"paths":["/a","/b"],"kind":"MultiHash","version":2}}`), engine.ThroughputHeaders{})
			return err
		},
		func() error {
			_, err := eng.WriteItem(ctx, engine.ItemRef{DB: "db", Coll: "c", ID: "a", PK: `["p"]`, HasPK: true}, engine.Create, []byte(`{"id":"a","pk":"p","n":1,"tags":["x"]}`), "")
			return err
		},
	} {
		if err := step(); err != nil {
			f.Fatal(err)
		}
	}
	sp := `{"id":"sp","body":"function (x) { var c = getContext(); c.getResponse().setBody(x); }"}`
	req := httptest.NewRequest(http.MethodPost, "/dbs/db/colls/c/sprocs", strings.NewReader(sp))
	date := time.Now().UTC().Format(http.TimeFormat)
	req.Header.Set("x-ms-date", date)
	req.Header.Set("authorization", v.Sign(http.MethodPost, "sprocs", "dbs/db/colls/c", date))
	g := New(Options{Engine: eng, Verifier: v, Metrics: metrics.New(), Logger: slog.New(slog.DiscardHandler)})
	h := g.Handler()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusCreated {
		f.Fatalf("create the stored procedure: %d %s", rec.Code, rec.Body)
	}
	return h, v
}
