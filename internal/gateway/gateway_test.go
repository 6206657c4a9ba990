package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ebbdb/ebb/internal/auth"
	"github.com/ebbdb/ebb/internal/engine"
	"github.com/ebbdb/ebb/internal/query"
	"github.com/ebbdb/ebb/internal/storage"
	"github.com/ebbdb/ebb/internal/storage/pebble"
)

// TestClassify pins the one table from errors to HTTP: every engine kind,
// the errors that come from elsewhere (auth, body limit, cancellation, a
// storage outage), and the generic 500 for anything unknown.
func TestClassify(t *testing.T) {
	const internal = "An internal error occurred."
	outage := fmt.Errorf("postgres: read: %w: %w", storage.ErrUnavailable, errors.New("connection refused"))
	tests := []struct {
		name       string
		err        error
		status     int
		code       string
		msg        string
		sub        int
		retryAfter time.Duration
	}{
		{"bad request", &engine.Error{Kind: engine.KindBadRequest, Message: "m"}, 400, "BadRequest", "m", 0, 0},
		{"not found", &engine.Error{Kind: engine.KindNotFound, Message: "m"}, 404, "NotFound", "m", 0, 0},
		{"conflict", &engine.Error{Kind: engine.KindConflict, Message: "m"}, 409, "Conflict", "m", 0, 0},
		{"precondition failed", &engine.Error{Kind: engine.KindPreconditionFailed, Message: "m"}, 412, "PreconditionFailed", "m", 0, 0},
		{"too large", &engine.Error{Kind: engine.KindTooLarge, Message: "m"}, 413, "RequestEntityTooLarge", "m", 0, 0},
		{"too many requests", &engine.Error{Kind: engine.KindTooManyRequests, Message: "m", RetryAfter: 250 * time.Millisecond, SubStatus: 3200}, 429, "TooManyRequests", "m", 3200, 250 * time.Millisecond},
		{"unavailable kind", &engine.Error{Kind: engine.KindUnavailable, Message: "m"}, 503, "ServiceUnavailable", "m", 0, 0},
		{"not implemented", &engine.Error{Kind: engine.KindNotImplemented, Message: "m"}, 501, "NotImplemented", "m", 0, 0},
		{"gone", &engine.Error{Kind: engine.KindGone, Message: "m", SubStatus: 1002}, 410, "Gone", "m", 1002, 0},
		{"not modified", &engine.Error{Kind: engine.KindNotModified, Message: "m"}, 304, "NotModified", "m", 0, 0},
		{"request timeout", &engine.Error{Kind: engine.KindRequestTimeout, Message: "m"}, 408, "RequestTimeout", "m", 0, 0},
		{"forbidden", &engine.Error{Kind: engine.KindForbidden, Message: "m"}, 403, "Forbidden", "m", 0, 0},
		{"unauthorized", &engine.Error{Kind: engine.KindUnauthorized, Message: "m"}, 401, "Unauthorized", "m", 0, 0},
		{"sentinel", engine.ErrNotFound, 404, "NotFound", engine.ErrNotFound.Message, 0, 0},
		{"wrapped engine error", fmt.Errorf("read item: %w", engine.ErrConflict), 409, "Conflict", engine.ErrConflict.Message, 0, 0},
		{"unknown kind", &engine.Error{Kind: 0, Message: "m"}, 500, "InternalServerError", internal, 0, 0},
		{"auth", &auth.Error{Message: "bad signature"}, 401, "Unauthorized", "bad signature", 0, 0},
		{"body over the limit", &http.MaxBytesError{Limit: 2048}, 413, "RequestEntityTooLarge", "Request size is too large: the body is over 2048 bytes.", 0, 0},
		{"cancelled", context.Canceled, 408, "RequestTimeout", "The request was cancelled or timed out.", 0, 0},
		{"deadline", fmt.Errorf("query: %w", context.DeadlineExceeded), 408, "RequestTimeout", "The request was cancelled or timed out.", 0, 0},
		{"body read timed out", fmt.Errorf("read body: %w", os.ErrDeadlineExceeded), 408, "RequestTimeout", "The request body did not arrive within the server's read timeout.", 0, 0},
		{"storage outage", outage, 503, "ServiceUnavailable", engine.ErrStoreUnavailable.Message, 0, time.Second},
		{"unknown", errors.New("disk on fire"), 500, "InternalServerError", internal, 0, 0},
	}
	kinds := map[engine.Kind]bool{}
	for _, tt := range tests {
		var ee *engine.Error
		if errors.As(tt.err, &ee) {
			kinds[ee.Kind] = true
		}
		status, code, msg, sub, retryAfter := classify(tt.err)
		if status != tt.status || code != tt.code || msg != tt.msg || sub != tt.sub || retryAfter != tt.retryAfter {
			t.Errorf("%s: classify(%v)\n got %d %q %q sub %d retry %v\nwant %d %q %q sub %d retry %v",
				tt.name, tt.err, status, code, msg, sub, retryAfter, tt.status, tt.code, tt.msg, tt.sub, tt.retryAfter)
		}
	}
	for k := engine.KindBadRequest; ; k++ {
		if status, _ := k.Status(); status == http.StatusInternalServerError {
			break
		}
		if !kinds[k] {
			t.Errorf("engine kind %d has a status but no row here", k)
		}
	}
}

// TestUnavailableHidesCause checks that a storage outage tells the client
// only that the store is unavailable, while the log keeps the driver's
// detail under the activity id the client was given.
func TestUnavailableHidesCause(t *testing.T) {
	secrets := []string{"alice", "secretdb", "db.internal", "6543"}
	outage := fmt.Errorf("postgres: get: %w: failed to connect to `user=alice database=secretdb`: db.internal:6543: connection refused", storage.ErrUnavailable)
	var logs bytes.Buffer
	g := New(Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/dbs/d/colls/c/docs/x", nil)
	req.Header.Set("x-ms-activity-id", "11111111-2222-4333-8444-555555555555")
	g.wrap("op", func(w http.ResponseWriter, r *http.Request) error { return outage }, accessOpen).ServeHTTP(rec, req)

	body := rec.Body.String()
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(body, `"code":"ServiceUnavailable"`) {
		t.Fatalf("got %d %s, want 503 ServiceUnavailable", rec.Code, body)
	}
	for _, s := range secrets {
		if strings.Contains(body, s) {
			t.Errorf("the 503 body names %q: %s", s, body)
		}
	}
	line := logs.String()
	if strings.Count(line, "\n") != 1 || !strings.Contains(line, "activity=11111111-2222-4333-8444-555555555555") || !strings.Contains(line, "db.internal:6543") {
		t.Errorf("want one log line with the activity id and the cause, got:\n%s", line)
	}
}

// TestQueryEngineConfiguration: the limits GET / advertises are those the
// query package enforces.
func TestQueryEngineConfiguration(t *testing.T) {
	var cfg struct {
		MaxSqlQueryInputLength    int `json:"maxSqlQueryInputLength"`
		MaxJoinsPerSqlQuery       int `json:"maxJoinsPerSqlQuery"`
		MaxInExpressionItemsCount int `json:"maxInExpressionItemsCount"`
	}
	if err := json.Unmarshal([]byte(queryEngineConfiguration), &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.MaxSqlQueryInputLength != query.MaxQueryLength || cfg.MaxJoinsPerSqlQuery != query.MaxJoins || cfg.MaxInExpressionItemsCount != query.MaxInItems {
		t.Errorf("advertised %+v; the query package enforces %d characters, %d JOINs, %d IN items",
			cfg, query.MaxQueryLength, query.MaxJoins, query.MaxInItems)
	}
}

// newTestEngine opens an engine over in-memory Pebble with opts (their
// Tokens and a Logger that discards set here), and the verifier that
// signs requests to it; both close when tb ends.
func newTestEngine(tb testing.TB, opts engine.Options) (*engine.Engine, *auth.Verifier) {
	tb.Helper()
	store, err := pebble.OpenMemory()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { store.Close() })
	v, err := auth.NewVerifier(auth.EmulatorKey)
	if err != nil {
		tb.Fatal(err)
	}
	opts.Tokens, opts.Logger = v, slog.New(slog.DiscardHandler)
	eng, err := engine.Open(context.Background(), store, opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { eng.Close() })
	return eng, v
}
