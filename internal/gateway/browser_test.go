package gateway

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ebbdb/ebb/internal/auth"
)

func testGateway(t *testing.T, logs *bytes.Buffer) http.Handler {
	t.Helper()
	v, err := auth.NewVerifier(auth.EmulatorKey)
	if err != nil {
		t.Fatal(err)
	}
	explorer := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("explorer")) })
	return New(Options{Verifier: v, Explorer: explorer, Logger: slog.New(slog.NewTextHandler(logs, nil))}).Handler()
}

// TestBrowserToExplorer: a browser opening the endpoint lands on the
// explorer; an SDK reading the account is answered, never redirected.
func TestBrowserToExplorer(t *testing.T) {
	h := testGateway(t, &bytes.Buffer{})
	for _, tt := range []struct {
		name, accept, authorization string
		want                        int
	}{
		{"browser", "text/html,application/xhtml+xml,*/*;q=0.8", "", http.StatusFound},
		{"JSON client without a key", "application/json", "", http.StatusUnauthorized},
		{"signed, asking for HTML", "text/html", "type%3Dmaster%26ver%3D1.0%26sig%3Dx", http.StatusUnauthorized},
	} {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.Header.Set("accept", tt.accept)
		if tt.authorization != "" {
			req.Header.Set("authorization", tt.authorization)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != tt.want {
			t.Errorf("%s: status %d, want %d", tt.name, rec.Code, tt.want)
		}
		if tt.want == http.StatusFound && rec.Header().Get("location") != "/_explorer/" {
			t.Errorf("%s: redirected to %q, want /_explorer/", tt.name, rec.Header().Get("location"))
		}
	}
	// The explorer answers where the redirect points, its trailing slash
	// and all; a path with an empty segment is no resource.
	for path, want := range map[string]int{"/_explorer/": http.StatusOK, "/_explorer//x": http.StatusNotFound} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if rec.Code != want {
			t.Errorf("GET %s: status %d, want %d", path, rec.Code, want)
		}
	}
}

// TestRejectedRequestLogged: a request turned away with 401 is logged at
// info with its method, path, status and remote address, and nothing of
// its authorization header.
func TestRejectedRequestLogged(t *testing.T) {
	var logs bytes.Buffer
	h := testGateway(t, &logs)
	req := httptest.NewRequest(http.MethodGet, "/dbs/secret-db", nil)
	req.RemoteAddr = "192.0.2.7:5123"
	req.Header.Set("x-ms-date", "Tue, 24 Nov 2026 10:00:00 GMT")
	req.Header.Set("authorization", "type%3Dmaster%26ver%3D1.0%26sig%3DSIGNATURE")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusUnauthorized {
		t.Fatalf("status %d, want 401", rec.Code)
	}
	line := logs.String()
	for _, want := range []string{"level=INFO", `msg="request rejected"`, "method=GET", "path=/dbs/secret-db", "status=401", "remote=192.0.2.7:5123"} {
		if !strings.Contains(line, want) {
			t.Errorf("log lacks %s: %s", want, line)
		}
	}
	if strings.Contains(line, "SIGNATURE") || strings.Count(line, "\n") != 1 {
		t.Errorf("want one line without the signature, got: %s", line)
	}
}

// TestAccessLog: with AccessLog every request is logged at info.
func TestAccessLog(t *testing.T) {
	var logs bytes.Buffer
	g := New(Options{AccessLog: true, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	req := httptest.NewRequest(http.MethodGet, "/_ebb/health", nil)
	req.RemoteAddr = "192.0.2.8:4000"
	g.Handler().ServeHTTP(httptest.NewRecorder(), req)
	line := logs.String()
	for _, want := range []string{"level=INFO", "msg=request", "path=/_ebb/health", "status=200", "remote=192.0.2.8:4000", "took="} {
		if !strings.Contains(line, want) {
			t.Errorf("access log lacks %s: %s", want, line)
		}
	}
}
