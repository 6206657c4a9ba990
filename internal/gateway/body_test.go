package gateway

import (
	"bytes"
	"net/http/httptest"
	"testing"
)

// BenchmarkReadBody reads a 1 KB request body as every write handler
// does. Building the request is timed too; it costs the same whichever
// way the body is read.
func BenchmarkReadBody(b *testing.B) {
	body := bytes.Repeat([]byte("x"), 1024)
	w := httptest.NewRecorder()
	b.ReportAllocs()
	for b.Loop() {
		r := httptest.NewRequest("POST", "/dbs/db/colls/c/docs", bytes.NewReader(body))
		if got, err := readBody(w, r, bodyLimit); err != nil || len(got) != len(body) {
			b.Fatal(len(got), err)
		}
	}
}
