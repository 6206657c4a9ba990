package web

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ebbdb/ebb/internal/auth"
)

func get(t *testing.T, h http.Handler, method, path string, header http.Header) *http.Response {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	for k, v := range header {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

func body(t *testing.T, res *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestHandlerServesFiles(t *testing.T) {
	h := Handler(Config{})
	tests := []struct {
		path        string
		contentType string
		contains    string
	}{
		{"/_explorer/", "text/html; charset=utf-8", `<script type="module" src="js/app.js">`},
		{"/_explorer/index.html", "text/html; charset=utf-8", "<title>Ebb Explorer</title>"},
		{"/_explorer/style.css", "text/css; charset=utf-8", ":root"},
		{"/_explorer/js/app.js", "text/javascript; charset=utf-8", "import"},
		{"/_explorer/js/views/items.js", "text/javascript; charset=utf-8", "export function renderItems"},
		{"/_explorer/favicon.svg", "image/svg+xml", "<svg"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			res := get(t, h, http.MethodGet, tt.path, nil)
			if res.StatusCode != http.StatusOK {
				t.Fatalf("GET %s: status %d, want 200", tt.path, res.StatusCode)
			}
			if got := res.Header.Get("Content-Type"); got != tt.contentType {
				t.Errorf("GET %s: Content-Type %q, want %q", tt.path, got, tt.contentType)
			}
			if got := res.Header.Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("GET %s: X-Content-Type-Options %q, want nosniff", tt.path, got)
			}
			if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
				t.Errorf("GET %s: Content-Security-Policy %q lacks script-src 'self'", tt.path, csp)
			}
			if b := body(t, res); !strings.Contains(b, tt.contains) {
				t.Errorf("GET %s: body does not contain %q", tt.path, tt.contains)
			}
		})
	}
}

// Every module the page imports must be embedded and served: a missing
// one is a blank page, not a failed build.
func TestEveryImportIsServed(t *testing.T) {
	h := Handler(Config{})
	files := loadFiles()
	for name, f := range files {
		if !strings.HasSuffix(name, ".js") {
			continue
		}
		for _, line := range strings.Split(string(f.body), "\n") {
			from, ok := strings.CutPrefix(strings.TrimSpace(line), "import ")
			if !ok {
				continue
			}
			_, spec, ok := strings.Cut(from, `"`)
			if !ok {
				continue
			}
			spec, _, _ = strings.Cut(spec, `"`)
			target := resolve(name, spec)
			if res := get(t, h, http.MethodGet, Prefix+target, nil); res.StatusCode != http.StatusOK {
				t.Errorf("%s imports %q: GET %s%s is %d", name, spec, Prefix, target, res.StatusCode)
			}
		}
	}
}

// resolve joins a relative module specifier to the importing file's path.
func resolve(from, spec string) string {
	dir := from[:strings.LastIndex(from, "/")+1]
	for {
		switch {
		case strings.HasPrefix(spec, "./"):
			spec = spec[2:]
		case strings.HasPrefix(spec, "../"):
			spec = spec[3:]
			dir = dir[:strings.LastIndex(strings.TrimSuffix(dir, "/"), "/")+1]
		default:
			return dir + spec
		}
	}
}

func TestHandlerConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want pageConfig
	}{
		{"emulator key and clock control", Config{EmulatorKey: auth.EmulatorKey, ClockControl: true}, pageConfig{EmulatorKey: auth.EmulatorKey, ClockControl: true}},
		{"no key", Config{}, pageConfig{}},
		{"a real key is never served", Config{EmulatorKey: "c2VjcmV0LWtleS10aGF0LWlzLW5vdC10aGUtZW11bGF0b3Jz"}, pageConfig{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := get(t, Handler(tt.cfg), http.MethodGet, "/_explorer/config.json", nil)
			if res.StatusCode != http.StatusOK {
				t.Fatalf("status %d, want 200", res.StatusCode)
			}
			if got := res.Header.Get("Content-Type"); got != "application/json" {
				t.Errorf("Content-Type %q, want application/json", got)
			}
			if got := res.Header.Get("Cache-Control"); got != "no-store" {
				t.Errorf("Cache-Control %q, want no-store", got)
			}
			raw := body(t, res)
			var got pageConfig
			if err := json.Unmarshal([]byte(raw), &got); err != nil {
				t.Fatalf("body %q: %v", raw, err)
			}
			if got != tt.want {
				t.Errorf("config.json = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestHandlerNotFound(t *testing.T) {
	h := Handler(Config{})
	for _, path := range []string{
		"/_explorer/nope.js",
		"/_explorer/js/",
		"/_explorer/js",
		"/_explorer/static/index.html",
		"/_explorer/../go.mod",
		"/elsewhere/index.html",
	} {
		if res := get(t, h, http.MethodGet, path, nil); res.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: status %d, want 404", path, res.StatusCode)
		}
	}
}

func TestHandlerMethods(t *testing.T) {
	h := Handler(Config{})
	res := get(t, h, http.MethodHead, "/_explorer/", nil)
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Length") == "" {
		t.Errorf("HEAD /_explorer/: status %d, Content-Length %q; want 200 and a length", res.StatusCode, res.Header.Get("Content-Length"))
	}
	if b := body(t, res); b != "" {
		t.Errorf("HEAD /_explorer/ has a body of %d bytes", len(b))
	}
	res = get(t, h, http.MethodPost, "/_explorer/", nil)
	if res.StatusCode != http.StatusMethodNotAllowed || res.Header.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST /_explorer/: status %d, Allow %q; want 405 and GET, HEAD", res.StatusCode, res.Header.Get("Allow"))
	}
}

func TestHandlerRevalidates(t *testing.T) {
	h := Handler(Config{})
	res := get(t, h, http.MethodGet, "/_explorer/style.css", nil)
	etag := res.Header.Get("ETag")
	if etag == "" || res.Header.Get("Cache-Control") != "no-cache" {
		t.Fatalf("ETag %q, Cache-Control %q; want an etag and no-cache", etag, res.Header.Get("Cache-Control"))
	}
	res = get(t, h, http.MethodGet, "/_explorer/style.css", http.Header{"If-None-Match": {etag}})
	if res.StatusCode != http.StatusNotModified {
		t.Errorf("GET with If-None-Match %s: status %d, want 304", etag, res.StatusCode)
	}
}
