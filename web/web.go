// Package web owns the Ebb Explorer: the page served at /_explorer/ that
// lets a user browse and edit databases, containers and items, run
// queries, set Time to Live the way the Cosmos portal does, watch Ebb's
// TTL machinery, and copy what an SDK needs to connect.
//
// # What is here
//
// The page is plain HTML, CSS and ES modules under static/, embedded into
// the binary with go:embed. There is no bundler and no build step, so
// `go run ./cmd/ebb` serves the page as it is in the repository, and the
// files a browser runs are the files a reviewer reads. The page is small
// enough that loading its modules one by one costs nothing noticeable.
//
//	static/index.html      the shell: top bar, sidebar, main, confirm dialog
//	static/style.css       all styles: light and dark, wide and narrow
//	static/js/app.js       start-up, connecting, routing between views
//	static/js/auth.js      master-key signing (WebCrypto; sha256.js where
//	                       the browser offers no WebCrypto, i.e. plain http
//	                       to a host other than localhost), or a resource
//	                       token sent as it is; the node test suites sign
//	                       their raw requests with it too
//	static/js/api.js       the REST client: paths, headers, error messages
//	static/js/ttl.js, model.js, format.js, router.js, snippets.js, search.js
//	                       DOM-free rules and helpers, unit-tested in Node
//	static/js/views/       one module per view (items, query, settings, …)
//
// # How the page talks to Ebb
//
// Only through the Cosmos DB REST API, exactly as the SDKs do: the user
// gives a master key (or a connection string), the page keeps it in
// sessionStorage and signs every request in the browser with HMAC-SHA256.
// This package therefore adds no endpoint of its own beyond
// /_explorer/config.json, which tells the page what it cannot learn from
// the API: the key to prefill (only ever the emulator's well-known key)
// and whether the server runs with clock control.
//
// # How it is tested
//
// web_test.go checks what the handler serves. test/browser drives the
// page in a headless Chromium against a real ebb process.
// test/js/tests/sign.test.js pins the signer with known vectors.
package web

import (
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"encoding/json"
	"io/fs"
	"net/http"
	"path"
	"strconv"
	"strings"

	"github.com/ebbdb/ebb/internal/auth"
)

//go:embed static
var static embed.FS

// Prefix is the path the explorer is served under.
const Prefix = "/_explorer/"

// Config is what the page is told about the server it runs against.
type Config struct {
	// EmulatorKey is the key the page prefills on its connect form. Only
	// the emulator's well-known key (auth.EmulatorKey) is ever served:
	// Handler treats any other value as empty, so a real master key
	// cannot leak through the page.
	EmulatorKey string
	// ClockControl says the server runs on a manual clock that
	// POST /_ebb/clock moves (ebb --clock-control).
	ClockControl bool
}

// pageConfig is the JSON form of Config served at config.json.
type pageConfig struct {
	EmulatorKey  string `json:"emulatorKey"`
	ClockControl bool   `json:"clockControl"`
}

// contentTypes fixes the type of every kind of file the page is made of,
// so the answer does not depend on the host's mime tables (a browser
// refuses to run a module served with a non-JavaScript type).
var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".svg":  "image/svg+xml",
}

// securityHeaders keep the page to its own files: no inline script, no
// third-party origin, no framing.
var securityHeaders = map[string]string{
	"Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
		"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
	"X-Content-Type-Options": "nosniff",
	"Referrer-Policy":        "no-referrer",
}

// file is one embedded file, ready to serve.
type file struct {
	body        []byte
	contentType string
	etag        string
}

// Handler serves the explorer: index.html at /_explorer/, the page's
// files below it, and /_explorer/config.json. Anything else under the
// prefix is 404. Only GET and HEAD are answered.
func Handler(cfg Config) http.Handler {
	if cfg.EmulatorKey != auth.EmulatorKey {
		cfg.EmulatorKey = ""
	}
	files := loadFiles()
	config, _ := json.Marshal(pageConfig{EmulatorKey: cfg.EmulatorKey, ClockControl: cfg.ClockControl})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		name, ok := strings.CutPrefix(r.URL.Path, Prefix)
		if !ok {
			http.NotFound(w, r)
			return
		}
		for k, v := range securityHeaders {
			w.Header().Set(k, v)
		}
		if name == "config.json" {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Cache-Control", "no-store")
			_, _ = w.Write(config)
			return
		}
		if name == "" {
			name = "index.html"
		}
		f, ok := files[name]
		if !ok {
			http.NotFound(w, r)
			return
		}
		serveFile(w, r, f)
	})
}

// serveFile writes an embedded file. The etag is its content hash and
// "no-cache" makes the browser revalidate, so a new binary's page is
// never mixed with an old one's modules.
func serveFile(w http.ResponseWriter, r *http.Request, f file) {
	h := w.Header()
	h.Set("Content-Type", f.contentType)
	h.Set("Cache-Control", "no-cache")
	h.Set("ETag", f.etag)
	if r.Header.Get("If-None-Match") == f.etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Length", strconv.Itoa(len(f.body)))
	if r.Method == http.MethodHead {
		return
	}
	_, _ = w.Write(f.body)
}

// loadFiles reads every embedded file with a known type into memory,
// keyed by its path below static/.
func loadFiles() map[string]file {
	files := map[string]file{}
	root, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the embed pattern guarantees the directory
	}
	err = fs.WalkDir(root, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		ct, ok := contentTypes[path.Ext(name)]
		if !ok {
			return nil
		}
		body, err := fs.ReadFile(root, name)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		files[name] = file{body: body, contentType: ct, etag: `"` + base64.RawURLEncoding.EncodeToString(sum[:12]) + `"`}
		return nil
	})
	if err != nil {
		panic(err) // reading an embed.FS does not fail
	}
	return files
}
