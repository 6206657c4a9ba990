package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ebbdb/ebb/internal/clock"
	"github.com/ebbdb/ebb/internal/storage"
	"github.com/ebbdb/ebb/internal/storage/postgres/pgtest"
	"github.com/ebbdb/ebb/internal/storage/storagetest"
)

func baseURL(tb testing.TB) string { return pgtest.URL(tb) }

func freshSchema(tb testing.TB) string { return pgtest.FreshSchema(tb) }

func withParams(tb testing.TB, conn string, params map[string]string) string {
	return pgtest.WithParams(tb, conn, params)
}

func openStore(tb testing.TB, url string, opts Options) *Store {
	tb.Helper()
	s, err := Open(context.Background(), url, opts)
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

func TestStore(t *testing.T) {
	baseURL(t)
	storagetest.Run(t, func(t *testing.T) storage.Store {
		return openStore(t, freshSchema(t), Options{})
	})
	// Every locked transaction brief, so that those of different
	// domains run in groups.
	t.Run("Brief", func(t *testing.T) {
		storagetest.Run(t, func(t *testing.T) storage.Store {
			return storagetest.Briefly(openStore(t, freshSchema(t), Options{}))
		})
	})
	t.Run("BriefReplaying", func(t *testing.T) {
		storagetest.Run(t, func(t *testing.T) storage.Store {
			return storagetest.Replaying(storagetest.Briefly(openStore(t, freshSchema(t), Options{})))
		})
	})
}

// TestConcurrentOpen starts several stores on an empty schema at once:
// they race to create the same tables, and all must succeed.
func TestConcurrentOpen(t *testing.T) {
	url := freshSchema(t)
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			s, err := Open(context.Background(), url, Options{MaxConns: 2})
			if err != nil {
				errs[i] = err
				return
			}
			errs[i] = s.Update(context.Background(), func(w storage.Writer) error {
				return w.Set([]byte(strconv.Itoa(i)), []byte("x"))
			})
			s.Close()
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("store %d: %v", i, err)
		}
	}
	s := openStore(t, url, Options{})
	var version int
	if err := s.pool.QueryRow(context.Background(), sqlReadVersion).Scan(&version); err != nil {
		t.Fatal(err)
	}
	if version != len(migrations) {
		t.Errorf("schema version %d, want %d", version, len(migrations))
	}
	var rows int
	if err := s.pool.QueryRow(context.Background(), `SELECT count(*) FROM ebb_schema_version`).Scan(&rows); err != nil || rows != 1 {
		t.Errorf("ebb_schema_version has %d rows (err %v), want 1", rows, err)
	}
}

func TestReopen(t *testing.T) {
	url := freshSchema(t)
	ctx := context.Background()
	s, err := Open(ctx, url, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Update(ctx, func(w storage.Writer) error { return w.Set([]byte("k"), []byte("v")) }); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openStore(t, url, Options{})
	err = s.View(ctx, func(r storage.Reader) error {
		v, err := r.Get([]byte("k"))
		if err == nil && string(v) != "v" {
			err = fmt.Errorf("got %q, want v", v)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestNewerSchemaVersion(t *testing.T) {
	url := freshSchema(t)
	s := openStore(t, url, Options{})
	if _, err := s.pool.Exec(context.Background(), sqlSetVersion, len(migrations)+1); err != nil {
		t.Fatal(err)
	}
	_, err := Open(context.Background(), url, Options{})
	if err == nil || !strings.Contains(err.Error(), "newer") {
		t.Fatalf("Open on a newer schema = %v, want an error about the version", err)
	}
}

func TestOptions(t *testing.T) {
	s := openStore(t, freshSchema(t), Options{MaxConns: 3, StatementTimeout: 1500 * time.Millisecond, ConnectTimeout: 2 * time.Second})
	if got := s.pool.Config().MaxConns; got != 3 {
		t.Errorf("MaxConns = %d, want 3", got)
	}
	if got := s.pool.Config().ConnConfig.ConnectTimeout; got != 2*time.Second {
		t.Errorf("ConnectTimeout = %v, want 2s", got)
	}
	var timeout string
	if err := s.pool.QueryRow(context.Background(), "SHOW statement_timeout").Scan(&timeout); err != nil {
		t.Fatal(err)
	}
	if timeout != "1500ms" {
		t.Errorf("statement_timeout = %q, want 1500ms", timeout)
	}
}

// TestRoundTrips pins the batching: a blind write is one round trip and an
// Update that does nothing is none.
func TestRoundTrips(t *testing.T) {
	url := freshSchema(t)
	s := openStore(t, url, Options{})
	ctx := context.Background()
	acquires := func() int64 { return s.pool.Stat().AcquireCount() }

	before := acquires()
	if err := s.Update(ctx, func(storage.Writer) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if n := acquires() - before; n != 0 {
		t.Errorf("empty Update acquired %d connections, want 0", n)
	}
	// A write-only Update: BEGIN, the writes and COMMIT in one batch.
	before = acquires()
	err := s.Update(ctx, func(w storage.Writer) error {
		for i := range 10 {
			if err := w.Set([]byte{byte(i)}, []byte("v")); err != nil {
				return err
			}
		}
		if err := w.Delete([]byte{3}); err != nil {
			return err
		}
		return w.DeleteRange([]byte{8}, nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := acquires() - before; n != 1 {
		t.Errorf("write-only Update acquired %d connections, want 1", n)
	}
	var count int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM ebb_kv`).Scan(&count); err != nil || count != 7 {
		t.Errorf("%d rows (err %v), want 7", count, err)
	}
}

func TestUnreachable(t *testing.T) {
	// A port nothing listens on.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().(*net.TCPAddr)
	ln.Close()
	url := fmt.Sprintf("postgres://ebb@127.0.0.1:%d/ebb?sslmode=disable", addr.Port)
	_, err = Open(context.Background(), url, Options{ConnectTimeout: time.Second})
	if !errors.Is(err, storage.ErrUnavailable) {
		t.Fatalf("Open on a closed port = %v, want ErrUnavailable", err)
	}
}

// TestUnresponsive points the store at a server that accepts connections
// and never answers: calls must give up after ConnectTimeout.
func TestUnresponsive(t *testing.T) {
	p := pgtest.StartProxy(t, baseURL(t))
	p.SetMode(pgtest.Blackhole)
	_, err := Open(context.Background(), p.URL(t, baseURL(t)), Options{ConnectTimeout: 200 * time.Millisecond})
	if !errors.Is(err, storage.ErrUnavailable) {
		t.Fatalf("Open on a silent server = %v, want ErrUnavailable", err)
	}
}

// TestOutage cuts the database off under an open store, checks that calls
// fail with ErrUnavailable, and that the store recovers when it returns.
func TestOutage(t *testing.T) {
	url := freshSchema(t)
	p := pgtest.StartProxy(t, url)
	s := openStore(t, p.URL(t, url), Options{ConnectTimeout: time.Second})
	ctx := context.Background()
	write := func() error {
		return s.Update(ctx, func(w storage.Writer) error { return w.Set([]byte("k"), []byte("v")) })
	}
	read := func() error {
		return s.View(ctx, func(r storage.Reader) error {
			_, err := r.Get([]byte("k"))
			return err
		})
	}
	if err := write(); err != nil {
		t.Fatal(err)
	}

	p.SetMode(pgtest.Refuse)
	for _, op := range []func() error{write, read, write, read} {
		if err := op(); !errors.Is(err, storage.ErrUnavailable) {
			t.Fatalf("during the outage: %v, want ErrUnavailable", err)
		}
	}

	p.SetMode(pgtest.Forward)
	// Pooled connections broken by the outage may fail one call each;
	// after that the pool has dialed afresh.
	waited := clock.NewSystem()
	for {
		err := read()
		if err == nil {
			break
		}
		if !errors.Is(err, storage.ErrUnavailable) {
			t.Fatalf("after the outage: %v, want nil or ErrUnavailable", err)
		}
		if waited.Elapsed() > 10*time.Second {
			t.Fatalf("store did not recover: %v", err)
		}
	}
	if err := write(); err != nil {
		t.Fatalf("write after recovery: %v", err)
	}
}

// TestUpdateRetriesAreBounded checks that a transaction that keeps
// conflicting gives up with the serialization error rather than looping.
func TestRetryable(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&pgconn.PgError{Code: "40001"}, true},
		{fmt.Errorf("wrapped: %w", &pgconn.PgError{Code: "40P01"}), true},
		{&pgconn.PgError{Code: "23505"}, false},
		{errors.New("other"), false},
	} {
		if got := retryable(tc.err); got != tc.want {
			t.Errorf("retryable(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

func TestUnavailableClassification(t *testing.T) {
	ctx := context.Background()
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		err  error
		want bool
	}{
		{"admin shutdown", ctx, &pgconn.PgError{Code: "57P01"}, true},
		{"connection failure", ctx, &pgconn.PgError{Code: "08006"}, true},
		{"unique violation", ctx, &pgconn.PgError{Code: "23505"}, false},
		{"eof", ctx, fmt.Errorf("receive: %w", io.ErrUnexpectedEOF), true},
		{"refused", ctx, &net.OpError{Op: "dial", Err: errors.New("connection refused")}, true},
		{"caller canceled", canceled, fmt.Errorf("x: %w", context.Canceled), false},
		{"statement timeout", ctx, &pgconn.PgError{Code: "57014"}, true},
		{"statement canceled for the caller", canceled, &pgconn.PgError{Code: "57014"}, false},
		{"plain", ctx, errors.New("syntax"), false},
	} {
		if got := unavailable(tc.ctx, tc.err); got != tc.want {
			t.Errorf("%s: unavailable(%v) = %v, want %v", tc.name, tc.err, got, tc.want)
		}
	}
}

func BenchmarkStore(b *testing.B) {
	baseURL(b)
	storagetest.Benchmark(b, func(b *testing.B) storage.Store {
		return openStore(b, freshSchema(b), Options{})
	})
}

// TestGenericPlans checks that the store's connections plan its statements
// once (see preferGenericPlans), unless the URL chose a plan_cache_mode.
func TestGenericPlans(t *testing.T) {
	url := freshSchema(t)
	for _, tc := range []struct{ url, want string }{
		{url, "force_generic_plan"},
		{withParams(t, url, map[string]string{"plan_cache_mode": "force_custom_plan"}), "force_custom_plan"},
		{withParams(t, url, map[string]string{"options": "--plan_cache_mode=auto"}), "auto"},
	} {
		s := openStore(t, tc.url, Options{})
		var mode string
		if err := s.pool.QueryRow(context.Background(), "SHOW plan_cache_mode").Scan(&mode); err != nil {
			t.Fatal(err)
		}
		if mode != tc.want {
			t.Errorf("plan_cache_mode %q, want %q", mode, tc.want)
		}
	}
}
