package gateway

import (
	"net/http"
	"strings"
)

// toExplorer sends a browser that opens the endpoint itself to the
// explorer. A browser asks for HTML and signs nothing; an SDK reading the
// account (GET / signed, asking for JSON) is never redirected.
func toExplorer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" && (r.Method == http.MethodGet || r.Method == http.MethodHead) &&
			r.Header.Get("authorization") == "" && strings.Contains(r.Header.Get("accept"), "text/html") {
			http.Redirect(w, r, "/_explorer/", http.StatusFound)
			return
		}
		next.ServeHTTP(w, r)
	})
}
