// Package server assembles a running Ebb from its configuration: the
// store, the clock, the engine, the gateway and the listener. cmd/ebb and
// the end-to-end tests both start Ebb through it, so tests run the same
// wiring users do.
package server

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/ebbdb/ebb/internal/auth"
	"github.com/ebbdb/ebb/internal/clock"
	"github.com/ebbdb/ebb/internal/engine"
	"github.com/ebbdb/ebb/internal/gateway"
	"github.com/ebbdb/ebb/internal/metrics"
	"github.com/ebbdb/ebb/internal/script"
	"github.com/ebbdb/ebb/internal/storage"
	"github.com/ebbdb/ebb/internal/storage/pebble"
	"github.com/ebbdb/ebb/internal/storage/postgres"
	"github.com/ebbdb/ebb/web"
)

// Config is everything a server can be told.
type Config struct {
	Listen  string
	DataDir string
	// Memory keeps everything in memory (nothing survives the process).
	Memory bool
	// RowCacheSize is the embedded store's row cache in bytes: 0 means
	// pebble.DefaultRowCacheSize, a negative size none.
	RowCacheSize int
	// Store, when set to a postgres:// URL, keeps everything in a
	// PostgreSQL-wire database that other Ebb nodes may share.
	Store string
	// NodeID names this node in purge leases; LeaseTime is how long a
	// lease lasts. Both matter only with Store.
	NodeID    string
	LeaseTime time.Duration
	// PGMaxConns and PGStatementTimeout tune the PostgreSQL pool.
	PGMaxConns         int
	PGStatementTimeout time.Duration
	// NoTLS serves plain HTTP.
	NoTLS           bool
	TLSCert, TLSKey string
	// Key is the primary master key; SecondaryKey, ReadOnlyKey and
	// SecondaryReadOnlyKey are the account's other keys, if any.
	Key, SecondaryKey, ReadOnlyKey, SecondaryReadOnlyKey string
	// KeyFile, when set, holds the keys instead (auth.ParseKeyFile). It
	// is read again when it changes and on ReloadKeys (SIGHUP), so keys
	// can be rotated without a restart.
	KeyFile string
	// CertDir, when set, keeps the self-signed certificate of a server
	// without a data directory (Memory, Store) so that it survives
	// restarts; empty, such a server makes a fresh one each start.
	CertDir      string
	Advertise    string
	ClockControl bool
	AcceptAAD    bool
	// DisablePurger keeps expired items in storage (still invisible), so
	// tests can look at what an unpurged item does.
	DisablePurger bool
	// CheckOnShutdown makes Shutdown, once the last request is served,
	// run engine.CheckConsistency and return what it finds (tests).
	CheckOnShutdown bool
	// EnforceThroughput answers requests beyond their offer with 429.
	EnforceThroughput bool
	// PurgeFloor is the share of an offer the TTL purger may always use.
	PurgeFloor float64
	// ClockGrace is how long a forward wall-clock jump is distrusted
	// before Ebb's time follows it.
	ClockGrace time.Duration
	// QueryPageBudget bounds the execution time of one query page; zero
	// means engine.DefaultQueryPageBudget.
	QueryPageBudget time.Duration
	// QueryClock, if set, measures query pages against QueryPageBudget
	// instead of the system clock (tests, which must not wait for real
	// time to pass). The system clock measures them even with
	// ClockControl.
	QueryClock clock.Clock
	// ScriptBudgets bound one run of a stored procedure (zero fields:
	// script.DefaultBudgets), in real time.
	ScriptBudgets script.Budgets
	// PartitionSplitSize is the bytes of documents past which a physical
	// partition is split in two: zero means engine.DefaultSplitSize, a
	// negative size never.
	PartitionSplitSize int64
	// AccessLog logs every request at info.
	AccessLog bool
	// MetricsListen serves /metrics on another address, without a key,
	// instead of on the API listener, where it needs the master key.
	MetricsListen string
	// Timeouts bound each part of a request on every listener; zero
	// fields take DefaultTimeouts' values.
	Timeouts Timeouts
	// MaxConnections caps the connections each listener holds open at
	// once; beyond it, new ones wait to be accepted. Zero means
	// DefaultMaxConnections.
	MaxConnections int
	// WrapStore, if set, wraps the store the engine uses (benchmarks
	// count storage operations this way).
	WrapStore func(storage.Store) storage.Store
	// OnPurge, if set, is told each purged item's lag (purge time minus
	// expiry time).
	OnPurge func(lag time.Duration)
	Logger  *slog.Logger
	// Clock overrides the engine clock (tests); with ClockControl and no
	// Clock a manual clock starting at the current time is made.
	Clock clock.Clock
}

// Timeouts bound how long a connection may take over each part of a
// request, so that clients that send slowly, or not at all, cannot hold
// connections forever.
type Timeouts struct {
	// ReadHeader bounds the TLS handshake and reading a request's
	// headers.
	ReadHeader time.Duration
	// Read bounds reading a whole request, headers and body: a 2 MB
	// document needs about 35 KB/s to arrive within the default.
	Read time.Duration
	// Write bounds a request from the end of its headers to the end of
	// its response: reading the body, running it (a long query page
	// takes seconds) and sending the answer. It must exceed Read.
	Write time.Duration
	// Idle bounds how long a kept-alive connection waits for its next
	// request. The default outlasts the SDKs' own idle timeouts (Go's
	// is 90 s), so a client rarely reuses a connection the server is
	// closing.
	Idle time.Duration
}

// DefaultTimeouts are the timeouts of a Config that sets none.
var DefaultTimeouts = Timeouts{ReadHeader: 10 * time.Second, Read: time.Minute, Write: 2 * time.Minute, Idle: 2 * time.Minute}

// DefaultMaxConnections is the connection cap of a Config that sets
// none: well above what a fleet of SDK clients keeps open (each pools
// connections per endpoint), well below the file descriptors a process
// may have.
const DefaultMaxConnections = 4096

// orDefault returns t with each zero field set from DefaultTimeouts.
func (t Timeouts) orDefault() Timeouts {
	d := DefaultTimeouts
	return Timeouts{
		ReadHeader: cmp.Or(t.ReadHeader, d.ReadHeader),
		Read:       cmp.Or(t.Read, d.Read),
		Write:      cmp.Or(t.Write, d.Write),
		Idle:       cmp.Or(t.Idle, d.Idle),
	}
}

// check reports timeouts that cannot work. REQUIRES: t came from
// orDefault, so zero means zero.
func (t Timeouts) check() error {
	for _, f := range []struct {
		name string
		d    time.Duration
	}{{"read-header", t.ReadHeader}, {"read", t.Read}, {"write", t.Write}, {"idle", t.Idle}} {
		if f.d < 0 {
			return fmt.Errorf("the %s timeout must not be negative; got %v", f.name, f.d)
		}
	}
	// The write timeout starts when the headers are read, so a body that
	// takes all of the read timeout to arrive would leave no time to answer.
	if t.Write <= t.Read {
		return fmt.Errorf("the write timeout (%v) must exceed the read timeout (%v): it also covers reading the body", t.Write, t.Read)
	}
	return nil
}

// NewHTTPServer is the http.Server every Ebb listener runs: h with
// tlsConfig (nil for plain HTTP) and t's timeouts, zero fields taking
// the defaults.
func NewHTTPServer(h http.Handler, tlsConfig *tls.Config, t Timeouts) *http.Server {
	t = t.orDefault()
	return &http.Server{
		Handler:           h,
		TLSConfig:         tlsConfig,
		ReadHeaderTimeout: t.ReadHeader,
		ReadTimeout:       t.Read,
		WriteTimeout:      t.Write,
		IdleTimeout:       t.Idle,
	}
}

// Server is a running Ebb.
type Server struct {
	cfg         Config
	store       storage.Store
	Engine      *engine.Engine
	Manual      *clock.Manual
	Metrics     *metrics.Registry
	metricsHTTP *http.Server
	// metricsListener is set with cfg.MetricsListen.
	metricsListener net.Listener
	http            *http.Server
	listener        net.Listener
	// URL is the endpoint clients connect to.
	URL     string
	CertPEM []byte
	done    chan error

	verifier *auth.Verifier
	// keyFile is guarded by keyMu: the stamp of the key file last read.
	keyMu     sync.Mutex
	keyFile   keyFileStamp
	stopWatch chan struct{} // closed by Shutdown
	stopOnce  sync.Once
}

// SharedStoreStats returns the counts of the shared store the server
// runs on; ok is false on embedded storage.
func (s *Server) SharedStoreStats() (st postgres.Stats, ok bool) {
	pg, ok := s.store.(*postgres.Store)
	if !ok {
		return postgres.Stats{}, false
	}
	return pg.Stats(), true
}

// Start opens the store, starts the engine and serves on cfg.Listen.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Key == "" {
		cfg.Key = auth.EmulatorKey
	}
	cfg.Timeouts = cfg.Timeouts.orDefault()
	if err := cfg.Timeouts.check(); err != nil {
		return nil, err
	}
	if cfg.MaxConnections < 0 {
		return nil, fmt.Errorf("the connection cap must not be negative; got %d", cfg.MaxConnections)
	}
	cfg.MaxConnections = cmp.Or(cfg.MaxConnections, DefaultMaxConnections)
	keys := auth.Keys{Primary: cfg.Key, Secondary: cfg.SecondaryKey, ReadOnly: cfg.ReadOnlyKey, SecondaryReadOnly: cfg.SecondaryReadOnlyKey}
	var keyFile keyFileStamp
	if cfg.KeyFile != "" {
		var err error
		if keys, keyFile, err = readKeyFile(cfg.KeyFile); err != nil {
			return nil, err
		}
	}
	verifier, err := auth.NewVerifierKeys(keys)
	if err != nil {
		return nil, err
	}
	verifier.AcceptAAD = cfg.AcceptAAD
	s := &Server{cfg: cfg, done: make(chan error, 1), verifier: verifier, keyFile: keyFile, stopWatch: make(chan struct{})}
	wall := clock.NewSystem()
	engineClock := cfg.Clock
	if m, ok := engineClock.(*clock.Manual); ok {
		s.Manual = m
	}
	if engineClock == nil {
		engineClock = wall
		if cfg.ClockControl {
			s.Manual = clock.NewManual(wall.Now())
			engineClock = s.Manual
		}
	}
	if !cfg.ClockControl {
		s.Manual = nil
	}
	shared := false
	// backend names the kind of store in readiness answers.
	backend := "pebble"
	switch {
	case cfg.Store != "":
		if !strings.HasPrefix(cfg.Store, "postgres://") && !strings.HasPrefix(cfg.Store, "postgresql://") {
			return nil, fmt.Errorf("--store: only postgres:// URLs are supported, got %q", cfg.Store)
		}
		s.store, err = postgres.Open(ctx, cfg.Store, postgres.Options{MaxConns: int32(cfg.PGMaxConns), StatementTimeout: cfg.PGStatementTimeout})
		shared, backend = true, "postgres"
	case cfg.Memory:
		s.store, err = pebble.OpenMemoryWith(pebble.Options{RowCacheSize: cfg.RowCacheSize})
		backend = "memory"
	default:
		if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
			return nil, fmt.Errorf("create data directory: %w", err)
		}
		s.store, err = pebble.OpenWith(cfg.DataDir, pebble.Options{RowCacheSize: cfg.RowCacheSize})
	}
	if err != nil {
		return nil, err
	}
	s.Metrics = metrics.New()
	if pb, ok := s.store.(*pebble.Store); ok {
		s.Metrics.WatchRowCache(
			func() uint64 { return pb.RowCacheStats().Hits },
			func() uint64 { return pb.RowCacheStats().Misses },
			func() int { return pb.RowCacheStats().Bytes })
	}
	if pg, ok := s.store.(*postgres.Store); ok {
		s.Metrics.WatchSharedStore(func() metrics.SharedStoreCounts {
			st := pg.Stats()
			return metrics.SharedStoreCounts{Updates: st.Updates, Retries: st.Retries, Grouped: st.Grouped, Regrouped: st.Regrouped}
		})
	}
	store := s.store
	if cfg.WrapStore != nil {
		store = cfg.WrapStore(store)
	}
	s.Engine, err = engine.Open(ctx, store, engine.Options{
		Clock: engineClock, RealClock: wall, Logger: cfg.Logger, Metrics: s.Metrics,
		DisablePurger: cfg.DisablePurger, EnforceThroughput: cfg.EnforceThroughput,
		PurgeFloor: cfg.PurgeFloor, ClockGrace: cfg.ClockGrace, ClockControl: cfg.ClockControl, OnPurge: cfg.OnPurge,
		Shared: shared, NodeID: cfg.NodeID, LeaseTime: cfg.LeaseTime,
		QueryPageBudget: cfg.QueryPageBudget, QueryClock: cfg.QueryClock, ScriptBudgets: cfg.ScriptBudgets,
		Tokens: verifier, SplitSize: cfg.PartitionSplitSize,
	})
	if err != nil {
		s.store.Close()
		return nil, err
	}
	var tlsConfig *tls.Config
	if !cfg.NoTLS {
		var cert tls.Certificate
		switch {
		case cfg.TLSCert != "":
			cert, err = tls.LoadX509KeyPair(cfg.TLSCert, cfg.TLSKey)
			if err == nil {
				var pemBytes []byte
				pemBytes, err = os.ReadFile(cfg.TLSCert)
				s.CertPEM = certBlocks(pemBytes) // the file may hold the key too
			}
		case (cfg.Memory || cfg.Store != "") && cfg.CertDir != "":
			cert, s.CertPEM, err = machineCert(cfg.CertDir, wall.Now())
		case cfg.Memory || cfg.Store != "":
			cert, s.CertPEM, err = selfSignedCert("", wall.Now())
		default:
			cert, s.CertPEM, err = selfSignedCert(cfg.DataDir, wall.Now())
		}
		if err != nil {
			s.close()
			return nil, fmt.Errorf("tls certificate: %w", err)
		}
		tlsConfig = TLSConfig(cert)
	}
	gw := gateway.New(gateway.Options{
		Engine: s.Engine, Verifier: verifier, WallClock: wall, ManualClock: s.Manual,
		Advertise: cfg.Advertise, CertPEM: s.CertPEM, Logger: cfg.Logger,
		Metrics: s.Metrics, NoMetricsRoute: cfg.MetricsListen != "", StoreBackend: backend, AccessLog: cfg.AccessLog,
		Explorer: web.Handler(web.Config{EmulatorKey: keys.Primary, ClockControl: cfg.ClockControl}),
	})
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		s.close()
		return nil, err
	}
	s.listener = s.limit(ln, "api")
	scheme := "https"
	if cfg.NoTLS {
		scheme = "http"
	}
	s.URL = fmt.Sprintf("%s://%s/", scheme, s.listener.Addr())
	// net/http reports clients that time out or hang up here; they are
	// routine, so they log at debug.
	errorLog := slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelDebug)
	s.http = NewHTTPServer(gw.Handler(), tlsConfig, cfg.Timeouts)
	s.http.ErrorLog = errorLog
	if cfg.MetricsListen != "" {
		ml, err := net.Listen("tcp", cfg.MetricsListen)
		if err != nil {
			s.listener.Close()
			s.close()
			return nil, fmt.Errorf("metrics listener: %w", err)
		}
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", s.Metrics.Handler())
		s.metricsHTTP = NewHTTPServer(mux, nil, cfg.Timeouts)
		s.metricsHTTP.ErrorLog = errorLog
		s.metricsListener = s.limit(ml, "metrics")
		go s.metricsHTTP.Serve(s.metricsListener)
	}
	if cfg.KeyFile != "" {
		go s.watchKeyFile(wall, keyFilePoll)
	}
	go func() {
		var err error
		if tlsConfig != nil {
			err = s.http.ServeTLS(s.listener, "", "")
		} else {
			err = s.http.Serve(s.listener)
		}
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		s.done <- err
	}()
	return s, nil
}

// limit caps the connections l holds open at cfg.MaxConnections;
// listener labels its connection metrics.
func (s *Server) limit(l net.Listener, listener string) net.Listener {
	return newLimitListener(l, s.cfg.MaxConnections,
		s.Metrics.OpenConnections.WithLabelValues(listener), s.Metrics.ConnectionCapHit.WithLabelValues(listener))
}

// Addr is the address the server listens on.
func (s *Server) Addr() net.Addr { return s.listener.Addr() }

// MetricsAddr is the address of the metrics listener (cfg.MetricsListen),
// or nil when metrics are served on the API listener.
func (s *Server) MetricsAddr() net.Addr {
	if s.metricsListener == nil {
		return nil
	}
	return s.metricsListener.Addr()
}

// Done receives the serve loop's error (nil after Shutdown).
func (s *Server) Done() <-chan error { return s.done }

// Shutdown stops accepting requests, waits for those in flight, stops the
// engine and closes the store.
func (s *Server) Shutdown(ctx context.Context) error {
	s.stopOnce.Do(func() { close(s.stopWatch) })
	if s.metricsHTTP != nil {
		s.metricsHTTP.Shutdown(ctx)
	}
	err := s.http.Shutdown(ctx)
	if s.cfg.CheckOnShutdown {
		if cerr := s.Engine.CheckConsistency(context.Background()); cerr != nil {
			err = errors.Join(err, fmt.Errorf("consistency check: %w", cerr))
		}
	}
	if cerr := s.close(); err == nil {
		err = cerr
	}
	return err
}

func (s *Server) close() error {
	if s.Engine != nil {
		s.Engine.Close()
	}
	return s.store.Close()
}

// TLSConfig is the TLS set-up Ebb serves with: TLS 1.2+, HTTP/2 first.
func TLSConfig(cert tls.Certificate) *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12, NextProtos: []string{"h2", "http/1.1"}}
}

// SelfSignedCert returns a fresh in-memory certificate for localhost.
func SelfSignedCert() (tls.Certificate, error) {
	cert, _, err := selfSignedCert("", clock.NewSystem().Now())
	return cert, err
}
