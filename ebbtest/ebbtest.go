// Package ebbtest runs an Ebb server inside a Go test, so that code
// written against Azure Cosmos DB can be tested with nothing installed:
// no emulator, no container engine, no certificate to trust.
//
//	func TestCart(t *testing.T) {
//		srv := ebbtest.New(t)
//		db, _ := srv.Client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "shop"}, nil)
//		...
//		srv.Advance(time.Hour) // items with a ttl of an hour are gone
//	}
//
// Each server keeps everything in memory (or in a directory, with
// WithDataDir), listens on a free loopback port
// and runs on a manual clock that only Advance (or POST /_ebb/clock) moves,
// so TTL tests take no time and never flake. It serves HTTPS with a
// certificate made for it; the Client it returns, and HTTPClient, trust
// exactly that certificate. The test's cleanup stops it.
package ebbtest

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/ebbdb/ebb/internal/auth"
	"github.com/ebbdb/ebb/internal/clock"
	"github.com/ebbdb/ebb/internal/server"
)

// Key is the master key every ebbtest server accepts: the Cosmos DB
// emulator's well-known key.
const Key = auth.EmulatorKey

// Server is an Ebb server running in the test's process.
type Server struct {
	// Endpoint is the URL clients connect to, such as
	// https://127.0.0.1:41234/.
	Endpoint string
	// Key is the master key (the emulator's well-known key).
	Key string
	// Client is a Go SDK client for the server, signed with Key.
	Client *azcosmos.Client
	// CertPEM is the server's certificate, for clients other than
	// Client and HTTPClient (NODE_EXTRA_CA_CERTS for a Node.js process,
	// say).
	CertPEM []byte

	srv       *server.Server
	clock     *clock.Manual
	transport *http.Transport
	closed    bool
}

// Option changes how Start sets a server up.
type Option func(*options)

type options struct {
	start   time.Time
	logger  *slog.Logger
	dataDir string
}

// StartingAt starts the server's clock at t instead of the current time.
// A whole second keeps _ts arithmetic in tests exact.
func StartingAt(t time.Time) Option { return func(o *options) { o.start = t } }

// WithDataDir keeps the server's data in dir, on disk, instead of in
// memory, so that a test can stop a server and start another on the same
// data, or back it up.
func WithDataDir(dir string) Option { return func(o *options) { o.dataDir = dir } }

// WithLogger sends the server's log to l; by default it is discarded.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// New starts a server for t and stops it when t and its subtests end. It
// fails t if the server cannot start.
func New(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s, err := Start(opts...)
	if err != nil {
		t.Fatalf("ebbtest: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("ebbtest: stop server: %v", err)
		}
	})
	return s
}

// Start starts a server outside a test (in TestMain, or an example);
// Close stops it.
func Start(opts ...Option) (*Server, error) {
	o := options{start: clock.NewSystem().Now().Truncate(time.Second)}
	for _, opt := range opts {
		opt(&o)
	}
	if o.logger == nil {
		o.logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	m := clock.NewManual(o.start)
	cfg := server.Config{
		Memory: o.dataDir == "", DataDir: o.dataDir, Listen: "127.0.0.1:0",
		Clock: m, ClockControl: true, Logger: o.logger,
		// Checked when the server stops, so a test learns of any damage.
		CheckOnShutdown: true,
	}
	srv, err := server.Start(context.Background(), cfg)
	if err != nil {
		return nil, err
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(srv.CertPEM) {
		srv.Shutdown(context.Background())
		return nil, errors.New("the server's certificate does not parse")
	}
	transport := &http.Transport{
		TLSClientConfig:     &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
		ForceAttemptHTTP2:   true,
		MaxIdleConnsPerHost: 64,
	}
	s := &Server{Endpoint: srv.URL, Key: Key, CertPEM: srv.CertPEM, srv: srv, clock: m, transport: transport}
	cred, err := azcosmos.NewKeyCredential(Key)
	if err == nil {
		s.Client, err = azcosmos.NewClientWithKey(s.Endpoint, cred, &azcosmos.ClientOptions{
			ClientOptions: azcore.ClientOptions{Transport: s.HTTPClient()},
		})
	}
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("SDK client: %w", err)
	}
	return s, nil
}

// HTTPClient returns an HTTP client that trusts the server's certificate,
// for requests made without the SDK.
func (s *Server) HTTPClient() *http.Client { return &http.Client{Transport: s.transport} }

// ConnectionString is the server's connection string, as the Cosmos DB
// portal shows one.
func (s *Server) ConnectionString() string {
	return "AccountEndpoint=" + s.Endpoint + ";AccountKey=" + s.Key + ";"
}

// Now is the server's time: where its clock stands.
func (s *Server) Now() time.Time { return s.clock.Now() }

// Advance moves the server's clock forward by d. Items whose time to live
// has run out are invisible on every read path as soon as it returns, and
// the server purges them in the background, as the service does.
func (s *Server) Advance(d time.Duration) {
	if d < 0 {
		panic("ebbtest: Advance by a negative duration; the clock only moves forward")
	}
	s.clock.Advance(d)
}

// Close stops the server and frees what it holds, after checking that
// its documents, expiry records, index entries and change feed agree
// (an error says where they do not). Closing twice does nothing.
func (s *Server) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	s.transport.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return s.srv.Shutdown(ctx)
}
