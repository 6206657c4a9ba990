package gateway

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ebbdb/ebb/internal/engine"
)

// discard is a ResponseWriter that keeps only what a benchmark checks,
// so the figures are the handler's own.
type discard struct {
	h      http.Header
	status int
	n      int
}

func (d *discard) Header() http.Header { return d.h }
func (d *discard) WriteHeader(status int) {
	if d.status == 0 {
		d.status = status
	}
}
func (d *discard) Write(b []byte) (int, error) {
	d.WriteHeader(http.StatusOK)
	d.n += len(b)
	return len(b), nil
}

// BenchmarkQueryItems runs SELECT * FROM c over 5,000 items of 1 KB in
// one partition through the gateway's handler (signature check,
// routing, the engine, the response body), every page until the last
// with x-ms-max-item-count -1, into a writer that discards the bytes.
func BenchmarkQueryItems(b *testing.B) {
	const items = 5000
	ctx := context.Background()
	h, v, e := newBenchGateway(b)
	ref := engine.ItemRef{DB: "db", Coll: "c", PK: `["bench"]`, HasPK: true}
	for start := 0; start < items; start += engine.MaxBatchOperations {
		var body strings.Builder
		body.WriteByte('[')
		for i := start; i < min(items, start+engine.MaxBatchOperations); i++ {
			if i > start {
				body.WriteByte(',')
			}
			fmt.Fprintf(&body, `{"operationType":"Create","resourceBody":{"id":"item-%06d","pk":"bench","n":%d,"payload":"%s"}}`, i, i, strings.Repeat("x", 850))
		}
		body.WriteByte(']')
		res, err := e.ExecuteBatch(ctx, ref, []byte(body.String()), engine.BatchOptions{Atomic: true})
		if err != nil || res.Failed {
			b.Fatalf("load: %v", err)
		}
	}
	const path = "/dbs/db/colls/c/docs"
	body := `{"query":"SELECT * FROM c","parameters":[]}`
	var size int
	b.ReportAllocs()
	for b.Loop() {
		cont, rows := "", 0
		size = 0
		for {
			date := time.Now().UTC().Format(http.TimeFormat)
			r, err := http.NewRequestWithContext(ctx, http.MethodPost, path, strings.NewReader(body))
			if err != nil {
				b.Fatal(err)
			}
			r.ContentLength = int64(len(body))
			r.Header.Set("Content-Type", "application/query+json")
			r.Header.Set("x-ms-documentdb-isquery", "True")
			r.Header.Set("x-ms-documentdb-partitionkey", `["bench"]`)
			r.Header.Set("x-ms-max-item-count", "-1")
			r.Header.Set("x-ms-date", date)
			r.Header.Set("authorization", v.Sign(http.MethodPost, "docs", "dbs/db/colls/c", date))
			if cont != "" {
				r.Header.Set("x-ms-continuation", cont)
			}
			w := &discard{h: http.Header{}}
			h.ServeHTTP(w, r)
			if w.status != http.StatusOK {
				b.Fatalf("status %d", w.status)
			}
			if got := w.h.Get("Content-Length"); got != strconv.Itoa(w.n) {
				b.Fatalf("Content-Length %s, body of %d bytes", got, w.n)
			}
			n, _ := strconv.Atoi(w.h.Get("x-ms-item-count"))
			rows += n
			size += w.n
			if cont = w.h.Get("x-ms-continuation"); cont == "" {
				break
			}
		}
		if rows != items {
			b.Fatalf("%d rows, want %d", rows, items)
		}
	}
	b.SetBytes(int64(size))
}
