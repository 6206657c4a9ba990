package gateway

import (
	"net/http"
	"net/http/httptest"
	"testing"

	dto "github.com/prometheus/client_model/go"

	"github.com/ebbdb/ebb/internal/engine"
	"github.com/ebbdb/ebb/internal/metrics"
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
			return writeFeed(w, "Documents", "", nil, 7.25, "")
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
