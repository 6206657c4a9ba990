package gateway

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	dto "github.com/prometheus/client_model/go"

	"github.com/ebbdb/ebb/internal/engine"
	"github.com/ebbdb/ebb/internal/metrics"
	"github.com/ebbdb/ebb/internal/query"
)

// TestSetCharge checks that the charge a handler reports is the number
// the metrics add up, and that the header says the same.
func TestSetCharge(t *testing.T) {
	tests := []struct {
		name   string
		h      handler
		header string
		ru     float64
	}{
		{"resource", func(w http.ResponseWriter, r *http.Request) error {
			return writeResource(w, http.StatusOK, engine.Resource{Body: []byte(`{}`), Charge: 2.5})
		}, "2.5", 2.5},
		{"feed", func(w http.ResponseWriter, r *http.Request) error {
			return writeFeed(w, "Documents", "", rowList(nil), 7.25, "")
		}, "7.25", 7.25},
		{"zero charge", func(w http.ResponseWriter, r *http.Request) error {
			return writeResource(w, http.StatusOK, engine.Resource{Body: []byte(`{}`)})
		}, "1", 1},
		{"error after a charge", func(w http.ResponseWriter, r *http.Request) error {
			setCharge(w, 9)
			return engine.ErrNotFound
		}, "1", 1},
		{"no charge", func(w http.ResponseWriter, r *http.Request) error {
			return nil
		}, "", 0},
	}
	for _, tt := range tests {
		m := metrics.New()
		rec := httptest.NewRecorder()
		New(Options{Metrics: m}).wrap("op", tt.h, accessOpen).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/x", nil))
		var d dto.Metric
		if err := m.RequestUnits.WithLabelValues("op").Write(&d); err != nil {
			t.Fatal(err)
		}
		header, ru := rec.Header().Get("x-ms-request-charge"), d.GetCounter().GetValue()
		if header != tt.header || ru != tt.ru {
			t.Errorf("%s: got header %q, %v RU in the metrics; want %q, %v", tt.name, header, ru, tt.header, tt.ru)
		}
	}
}

// TestFormatCharge: the integer path renders what FormatFloat renders.
func TestFormatCharge(t *testing.T) {
	for _, c := range []float64{1, 2, 5.71, 10.29, 99, 100, 1e6 + 0.5, 123456789, 1 << 52, 1 << 53, 1e300, math.SmallestNonzeroFloat64, math.MaxFloat64} {
		if got, want := formatCharge(c), strconv.FormatFloat(c, 'f', -1, 64); got != want {
			t.Errorf("formatCharge(%v) = %q, want %q", c, got, want)
		}
	}
}

// sliceSource is a query.Source over documents held in memory, keyed by
// their position.
type sliceSource [][]byte

func (s sliceSource) Scan(after []byte, yield func(key, doc []byte) bool) error {
	start := 0
	if after != nil {
		start = int(after[0]) + 1
	}
	for i := start; i < len(s); i++ {
		if !yield([]byte{byte(i)}, s[i]) {
			break
		}
	}
	return nil
}

// TestWriteFeed pins the envelope of a feed and its Content-Length, for
// a list of resources and for a page of query results, which the
// response takes from the query's own buffers.
func TestWriteFeed(t *testing.T) {
	page := func(text string, docs ...string) feedRows {
		q, err := query.Parse(text)
		if err != nil {
			t.Fatal(err)
		}
		p, err := q.Bind(nil)
		if err != nil {
			t.Fatal(err)
		}
		var src sliceSource
		for _, d := range docs {
			src = append(src, []byte(d))
		}
		pg, err := p.Page(context.Background(), src, query.PageRequest{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pg.Body.Release)
		return pg.Body
	}
	for _, tc := range []struct {
		name string
		rows feedRows
		want string
	}{
		{"empty list", rowList(nil), `{"_rid":"r1","Documents":[],"_count":0}`},
		{"list", rowList{[]byte(`{"id":"a"}`), []byte(`{"id":"b"}`)}, `{"_rid":"r1","Documents":[{"id":"a"},{"id":"b"}],"_count":2}`},
		{"empty page", page("SELECT * FROM c"), `{"_rid":"r1","Documents":[],"_count":0}`},
		{"page of stored items", page("SELECT * FROM c", `{"id":"a"}`, `{"id":"b"}`, `{"id":"c"}`), `{"_rid":"r1","Documents":[{"id":"a"},{"id":"b"},{"id":"c"}],"_count":3}`},
		{"page of values", page("SELECT VALUE c.id FROM c WHERE c.id != 'b'", `{"id":"a"}`, `{"id":"b"}`, `{"id":"c"}`), `{"_rid":"r1","Documents":["a","c"],"_count":2}`},
	} {
		rec := httptest.NewRecorder()
		if err := writeFeed(rec, "Documents", "r1", tc.rows, 1, ""); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got := rec.Body.String()
		if got != tc.want || rec.Header().Get("Content-Length") != strconv.Itoa(len(got)) || rec.Header().Get("x-ms-item-count") != strconv.Itoa(tc.rows.Len()) {
			t.Errorf("%s: got %s (Content-Length %s, x-ms-item-count %s), want %s (%d bytes)", tc.name, got,
				rec.Header().Get("Content-Length"), rec.Header().Get("x-ms-item-count"), tc.want, len(tc.want))
		}
	}
}
