package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ebbdb/ebb/internal/clock"
	"github.com/ebbdb/ebb/internal/engine"
	"github.com/ebbdb/ebb/internal/metrics"
)

// tokenFixture is a gateway over a real engine with db1 holding
// containers c1 and c2 (an item in each), a user u1 and the permissions
// the token cases need.
type tokenFixture struct {
	h      http.Handler
	eng    *engine.Engine
	clk    *clock.Manual
	tokens map[string]string // permission id → its _token
}

func newTokenFixture(t *testing.T) *tokenFixture {
	t.Helper()
	clk := clock.NewManual(time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC))
	eng, v := newTestEngine(t, engine.Options{Clock: clk})
	ctx := context.Background()
	must := func(_ engine.Resource, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(eng.CreateDatabase(ctx, []byte(`{"id":"db1"}`), engine.ThroughputHeaders{}))
	for _, c := range []string{"c1", "c2"} {
		must(eng.CreateContainer(ctx, "db1", []byte(`{"id":"`+c+`","partitionKey":{"paths":["/pk"]}}`), engine.ThroughputHeaders{}))
		must(eng.WriteItem(ctx, engine.ItemRef{DB: "db1", Coll: c, PK: `["p"]`, HasPK: true}, engine.Create, []byte(`{"id":"x","pk":"p"}`), ""))
	}
	must(eng.CreateUser(ctx, "db1", []byte(`{"id":"u1"}`)))
	f := &tokenFixture{eng: eng, clk: clk, tokens: map[string]string{}}
	for id, body := range map[string]string{
		"c2-all":      `{"id":"c2-all","permissionMode":"All","resource":"dbs/db1/colls/c2"}`,
		"c1-read":     `{"id":"c1-read","permissionMode":"Read","resource":"dbs/db1/colls/c1"}`,
		"c1-other-pk": `{"id":"c1-other-pk","permissionMode":"All","resource":"dbs/db1/colls/c1","resourcePartitionKey":["other"]}`,
		"c1-deleted":  `{"id":"c1-deleted","permissionMode":"All","resource":"dbs/db1/colls/c1"}`,
		"c1-all":      `{"id":"c1-all","permissionMode":"All","resource":"dbs/db1/colls/c1"}`,
	} {
		res, err := eng.CreatePermission(ctx, "db1", "u1", []byte(body), time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		var p struct {
			Token string `json:"_token"`
		}
		if err := json.Unmarshal(res.Body, &p); err != nil {
			t.Fatal(err)
		}
		f.tokens[id] = p.Token
	}
	res, err := eng.ReadPermission(ctx, "db1", "u1", "c1-all", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	var short struct {
		Token string `json:"_token"`
	}
	json.Unmarshal(res.Body, &short)
	f.tokens["c1-expired"] = short.Token
	must(eng.DeletePermission(ctx, "db1", "u1", "c1-deleted", ""))
	g := New(Options{Engine: eng, Verifier: v, Metrics: metrics.New(), Logger: slog.New(slog.DiscardHandler)})
	f.h = g.Handler()
	return f
}

// state is what the fixture's store holds that a request could change.
func (f *tokenFixture) state(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	var b strings.Builder
	dbs, _ := f.eng.Databases(ctx)
	for _, d := range dbs {
		b.Write(d)
	}
	for _, c := range []string{"c1", "c2"} {
		res, err := f.eng.ReadFeed(ctx, engine.QueryRequest{Ref: engine.ItemRef{DB: "db1", Coll: c}, CrossPartition: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res.Rows() {
			b.Write(r)
		}
		res.Body.Release()
	}
	users, _, _ := f.eng.Users(ctx, "db1")
	for _, u := range users {
		b.Write(u)
	}
	return b.String()
}

// TestResourceTokensOnEveryRoute sends every route of the gateway's
// table a resource token that must not authorize it: one for another
// container, a Read one on every write, one limited to another partition
// on every item request, one whose permission was deleted, an expired
// one, a truncated one and one with a byte flipped. Each must be refused
// with 401 or 403 as the service answers, and nothing may change.
func TestResourceTokensOnEveryRoute(t *testing.T) {
	f := newTokenFixture(t)
	before := f.state(t)
	f.clk.Advance(2 * time.Minute) // past c1-expired's minute
	g := New(Options{})
	flip := func(tok string) string {
		b := []byte(tok)
		i := len(b) - 5
		if b[i] == 'A' {
			b[i] = 'B'
		} else {
			b[i] = 'A'
		}
		return string(b)
	}
	type tokenCase struct {
		name, token string
		status      int
		// applies reports whether the case concerns the request.
		applies func(method, path string) bool
	}
	under := func(prefix string) func(string, string) bool {
		return func(_, path string) bool { return strings.HasPrefix(path, prefix) }
	}
	always := func(string, string) bool { return true }
	outsideC2 := func(_, path string) bool { return path != "/" && !strings.HasPrefix(path, "/dbs/db1/colls/c2") }
	cases := []tokenCase{
		{"a token for another container", f.tokens["c2-all"], 0, outsideC2},
		{"a Read token on a write", f.tokens["c1-read"], http.StatusForbidden, func(method, path string) bool {
			return strings.HasPrefix(path, "/dbs/db1/colls/c1") && writes(httptest.NewRequest(method, path, nil))
		}},
		{"a token for another partition", f.tokens["c1-other-pk"], http.StatusForbidden, func(method, path string) bool {
			return strings.HasPrefix(path, "/dbs/db1/colls/c1/docs") || (method == http.MethodPost && strings.HasPrefix(path, "/dbs/db1/colls/c1/sprocs/"))
		}},
		{"a token whose permission was deleted", f.tokens["c1-deleted"], http.StatusUnauthorized, under("/")},
		{"an expired token", f.tokens["c1-expired"], http.StatusUnauthorized, under("/")},
		{"a truncated token", f.tokens["c1-all"][:len(f.tokens["c1-all"])-12], http.StatusUnauthorized, always},
		{"a token with a byte flipped", flip(f.tokens["c1-all"]), http.StatusUnauthorized, always},
	}
	checked := 0
	for _, rt := range g.routes() {
		if rt.access == accessOpen {
			continue
		}
		for _, req := range concreteRequests(rt.pattern) {
			path := strings.NewReplacer("/db1/colls/c1/", "/db1/colls/c1/", "{user}", "u1").Replace(req.path)
			for _, tc := range cases {
				if !tc.applies(req.method, path) {
					continue
				}
				r := httptest.NewRequest(req.method, path, bytes.NewReader([]byte(`{"id":"x","pk":"p"}`)))
				r.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
				r.Header.Set("authorization", strings.ReplaceAll(urlEncode(tc.token), "+", "%2B"))
				if strings.Contains(path, "/docs") || strings.Contains(path, "/sprocs/") {
					r.Header.Set("x-ms-documentdb-partitionkey", `["p"]`)
				}
				rec := httptest.NewRecorder()
				f.h.ServeHTTP(rec, r)
				checked++
				ok := rec.Code == tc.status || (tc.status == 0 && (rec.Code == http.StatusForbidden || rec.Code == http.StatusUnauthorized))
				if !ok {
					t.Errorf("%s %s (%s), %s: %d %s", req.method, path, rt.pattern, tc.name, rec.Code, rec.Body.String())
				}
			}
		}
	}
	t.Logf("%d refused requests checked", checked)
	if after := f.state(t); after != before {
		t.Errorf("refused requests changed the store:\nbefore %s\nafter  %s", before, after)
	}
}

func urlEncode(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_', c == '.':
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}
