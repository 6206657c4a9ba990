package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// pageItems is how many items BenchmarkQueryPage reads, all in one
// logical partition.
const pageItems = 5000

// pageDoc is item i of BenchmarkQueryPage: about 1 KB as stored, system
// properties included.
func pageDoc(i int) string {
	return fmt.Sprintf(`{"id":"item-%06d","pk":"bench","n":%d,"payload":"%s"}`, i, i, strings.Repeat("abcdefghijklmnopqrstuvwxyz"[i%26:i%26+1], 850))
}

// BenchmarkQueryPage runs SELECT * over 5,000 items of 1 KB in one
// partition through the engine, every page until the last (pages of up
// to 4 MB of output, as for x-ms-max-item-count -1): the server's work
// for a query without HTTP. The container indexes nothing, so star-where
// evaluates its WHERE (which every item passes) on each item of a scan
// rather than reading an index.
func BenchmarkQueryPage(b *testing.B) {
	e, _ := newTestEngine(b)
	mustCreate(b, e, "db", "c", `{"id":"c","partitionKey":{"paths":["/pk"]},"indexingPolicy":{"indexingMode":"none"}}`)
	ctx := context.Background()
	ref := ItemRef{DB: "db", Coll: "c", PK: `["bench"]`, HasPK: true}
	for start := 0; start < pageItems; start += MaxBatchOperations {
		var body strings.Builder
		body.WriteByte('[')
		for i := start; i < min(pageItems, start+MaxBatchOperations); i++ {
			if i > start {
				body.WriteByte(',')
			}
			body.WriteString(`{"operationType":"Create","resourceBody":` + pageDoc(i) + `}`)
		}
		body.WriteByte(']')
		res, err := e.ExecuteBatch(ctx, ref, []byte(body.String()), BatchOptions{Atomic: true})
		if err != nil || res.Failed {
			b.Fatalf("load: %v", err)
		}
	}
	for _, bc := range []struct{ name, query string }{
		{"star", "SELECT * FROM c"},
		{"star-where", "SELECT * FROM c WHERE c.n >= 0"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			body := queryBody(bc.query)
			var size int64
			b.ReportAllocs()
			for b.Loop() {
				req := QueryRequest{Ref: ref, Body: body, MaxItemCount: -1}
				rows := 0
				size = 0
				for {
					res, err := e.QueryItems(ctx, req)
					if err != nil {
						b.Fatal(err)
					}
					rows += res.Body.Len()
					res.Body.Release() // as the gateway does once it has sent the rows
					size += parseMetric(res.Metrics, "outputDocumentSize")
					if res.Continuation == "" {
						break
					}
					req.Continuation = res.Continuation
				}
				if rows != pageItems {
					b.Fatalf("%d rows, want %d", rows, pageItems)
				}
			}
			b.SetBytes(size)
		})
	}
}

// BenchmarkQueryFirstPage asks for the first 10 rows of a query of the
// length applications send, with parameters: the work of a request
// besides its rows (the body, the query's parse and binding, the scope).
func BenchmarkQueryFirstPage(b *testing.B) {
	e, _ := newTestEngine(b)
	mustCreate(b, e, "db", "c", `{"id":"c","partitionKey":{"paths":["/pk"]},"indexingPolicy":{"indexingMode":"none"}}`)
	ctx := context.Background()
	ref := ItemRef{DB: "db", Coll: "c", PK: `["bench"]`, HasPK: true}
	for i := range 20 {
		if _, err := e.WriteItem(ctx, ref, Upsert, []byte(pageDoc(i)), ""); err != nil {
			b.Fatal(err)
		}
	}
	body := queryBody(`SELECT c.id, c.n, LOWER(SUBSTRING(c.payload, 0, 8)) AS head FROM c WHERE c.n >= @lo AND c.n < @hi AND (STARTSWITH(c.id, @prefix) OR c.id IN ("a", "b", "c")) ORDER BY c.n`,
		"@lo", 0, "@hi", 1000, "@prefix", "item-")
	b.ReportAllocs()
	for b.Loop() {
		res, err := e.QueryItems(ctx, QueryRequest{Ref: ref, Body: body, MaxItemCount: 10})
		if err != nil || res.Body.Len() != 10 {
			b.Fatalf("%d rows, %v", res.Body.Len(), err)
		}
		res.Body.Release()
	}
}
