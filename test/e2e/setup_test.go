// Package e2e drives a real Ebb server with the official Go SDK,
// azcosmos, exactly as a user would.
package e2e

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/ebbdb/ebb/internal/auth"
	"github.com/ebbdb/ebb/internal/clock"
	"github.com/ebbdb/ebb/internal/server"
	"github.com/ebbdb/ebb/internal/storage"
	"github.com/ebbdb/ebb/internal/storage/postgres/pgtest"
	"github.com/ebbdb/ebb/internal/storage/storagetest"
)

// epoch is where test clocks start: a whole second, so _ts arithmetic in
// tests is exact.
var epoch = time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)

type env struct {
	srv    *server.Server
	client *azcosmos.Client
	clock  *clock.Manual
	ctx    context.Context
	// planCtx is ctx for queries sent as a plan-aware SDK sends them
	// (see planAwareKey).
	planCtx context.Context
	// stop ends the server; see startWith.
	stop func(t testing.TB) error
}

// planAwareKey marks a request context (env.planCtx) whose cross-partition
// queries are sent as the SDKs that fetch a query plan send them: to a
// partition key range (Ebb has one, "0"). The Go SDK sends them without
// one, and the service's gateway (and Ebb) then refuse a query that needs
// its results merged (ORDER BY, aggregates, DISTINCT, ...) with 400 and
// substatus 1004, which TestCrossPartitionQueryNeedsPlan asserts. Tests
// about what such queries return use planCtx.
type planAwareKey struct{}

// planAwarePolicy adds the partition key range to a cross-partition query
// whose context is marked with planAwareKey.
type planAwarePolicy struct{}

func (planAwarePolicy) Do(req *policy.Request) (*http.Response, error) {
	raw := req.Raw()
	if raw.Context().Value(planAwareKey{}) != nil && strings.EqualFold(raw.Header.Get("x-ms-documentdb-query"), "true") && raw.Header.Get("x-ms-documentdb-partitionkey") == "" {
		raw.Header.Set("x-ms-documentdb-partitionkeyrangeid", "0")
	}
	return req.Next()
}

// start runs Ebb in memory over HTTPS (HTTP/2, self-signed) on a manual
// clock and returns an SDK client for it.
func start(t testing.TB) *env {
	t.Helper()
	return startWith(t, server.Config{Memory: true})
}

// onPostgres reports whether the suite runs on PostgreSQL
// (EBB_E2E_STORE=postgres, with EBB_TEST_POSTGRES_URL set) instead of
// embedded storage.
func onPostgres() bool { return os.Getenv("EBB_E2E_STORE") == "postgres" }

// strict reports whether the suite runs over a store that holds Ebb to
// the storage contract where the embedded store alone would let it slip
// (EBB_E2E_STORE=strict): every transaction runs twice, the first run
// rolled back, as PostgreSQL runs one again after a conflict
// (storagetest.Replaying), and every slice the store lends is
// overwritten when the loan ends (storagetest.Scribbling).
func strict() bool { return os.Getenv("EBB_E2E_STORE") == "strict" }

// schemas maps a test's data directory to its PostgreSQL schema, so that
// a test that restarts on "the same data directory" gets the same data.
var schemas sync.Map

func startWith(t testing.TB, cfg server.Config) *env {
	t.Helper()
	if onPostgres() && cfg.Store == "" {
		key := cfg.DataDir
		if key == "" {
			key = t.Name() + "/" + strconv.Itoa(rand.Int())
		}
		url, _ := schemas.LoadOrStore(key, pgtest.FreshSchema(t))
		cfg.Store, cfg.Memory, cfg.DataDir = url.(string), false, ""
	}
	if strict() {
		wrap := cfg.WrapStore
		cfg.WrapStore = func(s storage.Store) storage.Store {
			if wrap != nil {
				s = wrap(s)
			}
			return storagetest.Replaying(storagetest.Scribbling(s))
		}
	}
	// A manual clock under --clock-control unless the test brings a
	// clock of its own (then e.clock is that clock if it is manual).
	m, _ := cfg.Clock.(*clock.Manual)
	if cfg.Clock == nil {
		m = clock.NewManual(epoch)
		cfg.Clock, cfg.ClockControl = m, true
	}
	cfg.Listen = "127.0.0.1:0"
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	srv, err := server.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	transport := insecureTransport()
	// stop, which the test's cleanup calls unless the test did (to
	// restart), first checks that the engine's documents, expiry keys,
	// index entries and feed agree, failing the test if they do not,
	// then shuts the server down and returns Shutdown's error.
	var once sync.Once
	var shutdownErr error
	stop := func(t testing.TB) error {
		once.Do(func() {
			if err := srv.Engine.CheckConsistency(context.Background()); err != nil {
				t.Errorf("consistency check when %s stopped its server: %v", t.Name(), err)
			}
			// Closing the client's connections first spares the HTTP/2
			// server its one-second wait for clients after GOAWAY.
			transport.CloseIdleConnections()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			shutdownErr = srv.Shutdown(ctx)
		})
		return shutdownErr
	}
	t.Cleanup(func() { stop(t) })
	ctx := context.Background()
	return &env{srv: srv, client: newClient(t, srv.URL, transport), clock: m, ctx: ctx, planCtx: context.WithValue(ctx, planAwareKey{}, true), stop: stop}
}

func newClient(t testing.TB, endpoint string, transport *http.Client) *azcosmos.Client {
	t.Helper()
	cred, err := azcosmos.NewKeyCredential(auth.EmulatorKey)
	if err != nil {
		t.Fatal(err)
	}
	client, err := azcosmos.NewClientWithKey(endpoint, cred, &azcosmos.ClientOptions{
		ClientOptions: azcore.ClientOptions{Transport: transport, PerCallPolicies: []policy.Policy{planAwarePolicy{}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// database creates a database for the test.
func (e *env) database(t testing.TB, id string) *azcosmos.DatabaseClient {
	t.Helper()
	if _, err := e.client.CreateDatabase(e.ctx, azcosmos.DatabaseProperties{ID: id}, nil); err != nil {
		t.Fatalf("create database %s: %v", id, err)
	}
	db, err := e.client.NewDatabase(id)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// container creates a container with the given properties in a fresh
// database named after the test.
func (e *env) container(t testing.TB, props azcosmos.ContainerProperties) *azcosmos.ContainerClient {
	t.Helper()
	db := e.database(t, "db-"+props.ID)
	if _, err := db.CreateContainer(e.ctx, props, nil); err != nil {
		t.Fatalf("create container %s: %v", props.ID, err)
	}
	c, err := db.NewContainer(props.ID)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func pkProps(id string, paths ...string) azcosmos.ContainerProperties {
	kind := azcosmos.PartitionKeyKindHash
	if len(paths) > 1 {
		kind = azcosmos.PartitionKeyKindMultiHash
	}
	return azcosmos.ContainerProperties{ID: id, PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: paths, Kind: kind, Version: 2}}
}

// status returns the HTTP status of an SDK error, 0 for nil.
func status(err error) int {
	if err == nil {
		return 0
	}
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return re.StatusCode
	}
	return -1
}

func wantStatus(t testing.TB, err error, want int, what string) {
	t.Helper()
	if got := status(err); got != want {
		t.Fatalf("%s: got status %d (%v), want %d", what, got, err, want)
	}
}

func int32p(v int32) *int32 { return &v }

// insecureTransport trusts Ebb's self-signed certificate, as the SDK's own
// emulator tests do.
func insecureTransport() *http.Client {
	return &http.Client{Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{InsecureSkipVerify: true},
		ForceAttemptHTTP2: true,
	}}
}
