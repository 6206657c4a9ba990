// Package server assembles a running Ebb from its configuration: the
// store, the clock, the engine, the gateway and the listener. cmd/ebb and
// the end-to-end tests both start Ebb through it, so tests run the same
// wiring users do.
package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/ebbdb/ebb/internal/auth"
	"github.com/ebbdb/ebb/internal/clock"
	"github.com/ebbdb/ebb/internal/engine"
	"github.com/ebbdb/ebb/internal/gateway"
	"github.com/ebbdb/ebb/internal/metrics"
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
	Key             string
	Advertise       string
	ClockControl    bool
	AcceptAAD       bool
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
	// before purging follows it.
	ClockGrace time.Duration
	// QueryPageBudget bounds the execution time of one query page; zero
	// means engine.DefaultQueryPageBudget.
	QueryPageBudget time.Duration
	// QueryClock, if set, measures query pages against QueryPageBudget
	// instead of the system clock (tests, which must not wait for real
	// time to pass). The system clock measures them even with
	// ClockControl.
	QueryClock clock.Clock
	// MetricsListen serves /metrics on another address instead of the
	// API listener.
	MetricsListen string
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

// Server is a running Ebb.
type Server struct {
	cfg         Config
	store       storage.Store
	Engine      *engine.Engine
	Manual      *clock.Manual
	Metrics     *metrics.Registry
	metricsHTTP *http.Server
	http        *http.Server
	listener    net.Listener
	// URL is the endpoint clients connect to.
	URL     string
	CertPEM []byte
	done    chan error
}

// Start opens the store, starts the engine and serves on cfg.Listen.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Key == "" {
		cfg.Key = auth.EmulatorKey
	}
	verifier, err := auth.NewVerifier(cfg.Key)
	if err != nil {
		return nil, err
	}
	verifier.AcceptAAD = cfg.AcceptAAD
	s := &Server{cfg: cfg, done: make(chan error, 1)}
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
	switch {
	case cfg.Store != "":
		if !strings.HasPrefix(cfg.Store, "postgres://") && !strings.HasPrefix(cfg.Store, "postgresql://") {
			return nil, fmt.Errorf("--store: only postgres:// URLs are supported, got %q", cfg.Store)
		}
		s.store, err = postgres.Open(ctx, cfg.Store, postgres.Options{MaxConns: int32(cfg.PGMaxConns), StatementTimeout: cfg.PGStatementTimeout})
		shared = true
	case cfg.Memory:
		s.store, err = pebble.OpenMemory()
	default:
		if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
			return nil, fmt.Errorf("create data directory: %w", err)
		}
		s.store, err = pebble.Open(cfg.DataDir)
	}
	if err != nil {
		return nil, err
	}
	s.Metrics = metrics.New()
	store := s.store
	if cfg.WrapStore != nil {
		store = cfg.WrapStore(store)
	}
	s.Engine, err = engine.Open(ctx, store, engine.Options{
		Clock: engineClock, RealClock: wall, Logger: cfg.Logger, Metrics: s.Metrics,
		DisablePurger: cfg.DisablePurger, EnforceThroughput: cfg.EnforceThroughput,
		PurgeFloor: cfg.PurgeFloor, ClockGrace: cfg.ClockGrace, OnPurge: cfg.OnPurge,
		Shared: shared, NodeID: cfg.NodeID, LeaseTime: cfg.LeaseTime,
		QueryPageBudget: cfg.QueryPageBudget, QueryClock: cfg.QueryClock,
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
				s.CertPEM, err = os.ReadFile(cfg.TLSCert)
			}
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
		Metrics: s.Metrics, NoMetricsRoute: cfg.MetricsListen != "",
		Explorer: web.Handler(web.Config{EmulatorKey: cfg.Key, ClockControl: cfg.ClockControl}),
	})
	s.listener, err = net.Listen("tcp", cfg.Listen)
	if err != nil {
		s.close()
		return nil, err
	}
	scheme := "https"
	if cfg.NoTLS {
		scheme = "http"
	}
	s.URL = fmt.Sprintf("%s://%s/", scheme, s.listener.Addr())
	s.http = &http.Server{
		Handler:           gw.Handler(),
		TLSConfig:         tlsConfig,
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelDebug),
	}
	if cfg.MetricsListen != "" {
		ml, err := net.Listen("tcp", cfg.MetricsListen)
		if err != nil {
			s.listener.Close()
			s.close()
			return nil, fmt.Errorf("metrics listener: %w", err)
		}
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", s.Metrics.Handler())
		s.metricsHTTP = &http.Server{Handler: mux, ReadHeaderTimeout: 30 * time.Second}
		go s.metricsHTTP.Serve(ml)
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

// Addr is the address the server listens on.
func (s *Server) Addr() net.Addr { return s.listener.Addr() }

// Done receives the serve loop's error (nil after Shutdown).
func (s *Server) Done() <-chan error { return s.done }

// Shutdown stops accepting requests, waits for those in flight, stops the
// engine and closes the store.
func (s *Server) Shutdown(ctx context.Context) error {
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
