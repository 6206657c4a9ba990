// Package engine is the database: the catalog of databases, containers
// and offers and its in-memory cache; items, their conditional writes,
// _rid, _etag, _ts and LSNs; the request's one instant and the
// visible-items reader every read path goes through; query paging over
// a scan or an index, each page bounded by the query page budget and the
// request's context; transactional batch and bulk; and, on a store
// shared by several nodes, the catalog watch and the purge lease.
//
// Its subsystems are packages below it, each handed what it needs by
// the engine and none importing it: document (one item's JSON,
// partition keys, header), keyspace (the storage layout), index
// (secondary indexes and the query sources they serve), feed (change
// log and change feed), expiry (reads of the expiry index), patch, resource (the catalog resources'
// shapes), throughput (request units and offers' buckets) and dberr
// (client errors). The TTL purger is internal/ttl/purger, driven through
// the host in purger.go. docs/architecture.md is the map.
//
// The gateway calls one engine method per request; the engine calls the
// storage contract, the ttl policy and the query library, never the other
// way round. Errors the client must see are *Error values with a Kind;
// anything else is internal.
//
// # Time
//
// Every operation takes one instant from the time guard (Engine.now,
// clock.TimeGuard) and uses it for everything time decides: which items are visible (through
// the itemReader, the one place the TTL predicate is applied), the _ts it
// writes, and the query environment (GetCurrentTimestamp(),
// GetCurrentDateTime(), patch conditions), and the purger purges on the
// same instant. The guard believes a forward wall-clock jump only once it
// has lasted the grace (advancing with the monotonic clock meanwhile) and
// never goes behind an instant already served, so a clock fault
// corrected within the grace changes nothing a client sees: no item
// hidden early or shown again, no _ts in the future or going backwards.
// At start the latest stored _ts is its floor, within the rules of
// clockstart.go.
package engine

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ebbdb/ebb/internal/clock"
	"github.com/ebbdb/ebb/internal/engine/feed"
	"github.com/ebbdb/ebb/internal/engine/keyspace"
	"github.com/ebbdb/ebb/internal/engine/throughput"
	"github.com/ebbdb/ebb/internal/metrics"
	"github.com/ebbdb/ebb/internal/query"
	"github.com/ebbdb/ebb/internal/script"
	"github.com/ebbdb/ebb/internal/storage"
	"github.com/ebbdb/ebb/internal/ttl/purger"
)

// Engine is one Ebb database over a store.
type Engine struct {
	store storage.Store
	clock clock.Clock
	// real is the system clock, for budgets of real time (throughput)
	// even when clock is manual.
	real    clock.Clock
	guard   *clock.TimeGuard
	log     *slog.Logger
	metrics *metrics.Registry
	onPurge func(lag time.Duration)
	// queryClock measures query pages against pageBudget (and times
	// them for the query metrics): real execution, never the manual
	// clock.
	queryClock clock.Clock
	pageBudget time.Duration
	// plans keeps parsed queries by text, for every page of a query and
	// its query plan request.
	plans *query.Cache
	// cluster is set when the store is shared with other nodes.
	cluster *cluster
	// held are the partitions whose purge leases this node held at its
	// purger's last look, by container (cluster.go).
	heldMu    sync.Mutex
	held      map[[8]byte][]int
	shared    bool
	pkDeleter *pkDeleter
	closeOnce sync.Once
	// buckets are the offers' request-unit budgets; enforce answers
	// requests beyond them with 429.
	buckets throughput.Buckets
	enforce bool

	// catMu serializes catalog changes (create, replace and delete of
	// databases, containers and offers) so the cache below and the store
	// change together.
	catMu sync.Mutex
	// mu guards cat. Readers take a snapshot pointer under RLock; the
	// catalog values themselves are immutable once published.
	mu  sync.RWMutex
	cat *catalog

	purger *purger.Purger
	// fg is the requests being served, which the purger gives way to.
	fg *foreground
	// trimmer trims the change logs by their retention (package feed).
	trimmer *feed.Trimmer
	// indexer builds indexes after policy changes (indexbuild.go), and
	// grows containers' partitions.
	indexer *indexBuilder
	// splitSize is the bytes of documents past which a partition is
	// split, splitSkips the partitions that could not be (splitsize.go).
	splitSize  int64
	splitSkips splitSkips
	// scripts runs stored procedures (sprocs.go).
	scripts *script.Runner
	// tokens signs the resource tokens permissions hand out; grants are
	// the permissions tokens are checked against (grants.go).
	tokens TokenSealer
	grants atomic.Pointer[grantTable]
	// claimsSeen are the decoded payloads of tokens seen.
	claimsMu   sync.RWMutex
	claimsSeen map[string]tokenClaims
	// vecSets are the vectors searches rank (vectors.go), textIndexes
	// the full-text indexes rankings read (textindex.go), cached.
	vecSets     *sizedCache[vectorSetKey, *vectorSet]
	textIndexes *sizedCache[textIndexKey, *textIndex]
	// anns are the graph indexes of diskANN vector indexes (annindex.go).
	annMu sync.Mutex
	anns  map[annKey]*annIndex
	// stopANNBuild stops building them as the engine opens, and
	// annBuildDone is closed when that has returned.
	stopANNBuild context.CancelFunc
	annBuildDone chan struct{}
	// afterSnapshotRun, when set, is called between a stored
	// procedure's run on a snapshot and its commit: tests write there.
	afterSnapshotRun func()
}

// Options configure an Engine.
type Options struct {
	Clock  clock.Clock
	Logger *slog.Logger
	// DisablePurger leaves expired items in storage (they stay invisible);
	// tests use it to look at unpurged state.
	DisablePurger bool
	// RealClock refills throughput budgets; the system clock by default.
	RealClock clock.Clock
	// Metrics receives the engine's metrics; a private registry if nil.
	Metrics *metrics.Registry
	// ClockGrace is how long the wall clock may stay ahead of the
	// monotonic clock before the engine's instant follows it (default 10
	// minutes).
	ClockGrace time.Duration
	// ClockControl says Clock is the user's manual clock (--clock-control):
	// the _ts it writes may lie ahead of the real clock, so they must not
	// hold the real clock back when the data is opened without it.
	ClockControl bool
	// PurgeFloor is the fraction of an offer the purger may always spend
	// (default 0.05).
	PurgeFloor float64
	// EnforceThroughput answers requests beyond their offer with 429.
	EnforceThroughput bool
	// OnPurge, if set, is told each purged item's lag (purge time minus
	// expiry time); benchmarks use it for exact percentiles.
	OnPurge func(lag time.Duration)
	// Shared says other Ebb nodes use the same store (see cluster.go).
	Shared bool
	// indexBatch and indexHook tune the index builder in tests
	// (indexbuild.go); zero values mean the defaults. countGate, if set
	// (tests), is asked before the builder counts a container's usage
	// (usage.go); false skips it for that pass.
	indexBatch int
	indexHook  func(c *container) bool
	countGate  func(c *container) bool
	// NodeID names this node in purge leases; random if empty.
	NodeID string
	// LeaseTime is how long a purge lease lasts (default 5 s);
	// CatalogPoll how often a shared node checks for catalog changes
	// (default 250 ms).
	LeaseTime, CatalogPoll time.Duration
	// Tokens signs resource tokens (the server's auth.Verifier); without
	// it permissions carry no _token.
	Tokens TokenSealer
	// ScriptBudgets bound a stored procedure's run (zero fields: the
	// defaults, script.DefaultBudgets), measured on RealClock.
	ScriptBudgets script.Budgets
	// QueryPageBudget bounds the execution time of one query page
	// (zero: DefaultQueryPageBudget; negative: no bound): a page that
	// runs out returns its rows so far with a continuation, or a 408 when
	// the query cannot return part of its result.
	QueryPageBudget time.Duration
	// QueryClock measures query pages against QueryPageBudget; RealClock
	// by default. Tests set one that moves by itself.
	QueryClock clock.Clock
	// SplitSize is the bytes of documents past which a physical
	// partition is split in two (splitsize.go): zero means
	// DefaultSplitSize, a negative size never.
	SplitSize int64
}

// DefaultQueryPageBudget is the execution time of one query page, the
// service's: "Maximum execution time for a single operation (like a
// stored procedure execution or a single query page retrieval): 5 sec";
// a query that reaches it "returns a page of results and a continuation
// token to the client to resume execution" (Azure Cosmos DB service
// quotas, learn.microsoft.com/azure/cosmos-db/concepts-limits,
// "Per-request limits").
const DefaultQueryPageBudget = 5 * time.Second

// Open loads the catalog from store and starts the purger.
func Open(ctx context.Context, store storage.Store, opts Options) (*Engine, error) {
	if opts.Clock == nil {
		opts.Clock = clock.NewSystem()
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.RealClock == nil {
		opts.RealClock = clock.NewSystem()
	}
	if opts.Metrics == nil {
		opts.Metrics = metrics.New()
	}
	if opts.ClockGrace == 0 {
		opts.ClockGrace = 10 * time.Minute
	}
	if opts.PurgeFloor == 0 {
		opts.PurgeFloor = 0.05
	}
	if opts.QueryPageBudget == 0 {
		opts.QueryPageBudget = DefaultQueryPageBudget
	}
	if opts.QueryClock == nil {
		opts.QueryClock = opts.RealClock
	}
	if opts.SplitSize == 0 {
		opts.SplitSize = DefaultSplitSize
	}
	e := &Engine{store: store, clock: opts.Clock, real: opts.RealClock, log: opts.Logger, metrics: opts.Metrics, onPurge: opts.OnPurge,
		queryClock: opts.QueryClock, pageBudget: opts.QueryPageBudget, plans: query.NewCache(planCacheEntries, planCacheBytes),
		scripts: script.NewRunner(opts.ScriptBudgets, opts.RealClock), tokens: opts.Tokens, claimsSeen: map[string]tokenClaims{},
		vecSets: newSizedCache[vectorSetKey, *vectorSet](maxCachedFloats), textIndexes: newSizedCache[textIndexKey, *textIndex](maxCachedTextDocs)}
	e.buckets.Floor, e.enforce, e.splitSize = opts.PurgeFloor, opts.EnforceThroughput, opts.SplitSize
	cat, err := loadCatalog(ctx, store)
	if err != nil {
		return nil, err
	}
	e.cat = cat
	if e.guard, err = startGuard(ctx, store, opts, e.log); err != nil {
		return nil, err
	}
	if err := e.loadGrants(ctx); err != nil {
		return nil, err
	}
	if err := e.ensureIndexStates(ctx); err != nil {
		return nil, err
	}
	e.fg = newForeground(e.real)
	e.purger = newPurger(e)
	if !opts.DisablePurger {
		e.purger.Start()
	}
	e.trimmer = startLogTrimmer(e)
	e.shared = opts.Shared
	e.pkDeleter = startPKDeleter(e)
	var indexPoll time.Duration
	if opts.Shared {
		indexPoll = cmp.Or(opts.LeaseTime, 5*time.Second)
	}
	e.indexer = startIndexBuilder(e, opts.indexBatch, opts.indexHook, opts.countGate, indexPoll)
	if opts.Shared {
		e.startCluster(opts)
	}
	var annCtx context.Context
	annCtx, e.stopANNBuild = context.WithCancel(context.Background())
	e.annBuildDone = make(chan struct{})
	go func() {
		defer close(e.annBuildDone)
		e.buildANNIndexes(annCtx)
	}()
	return e, nil
}

// Close stops background work. It does not close the store.
func (e *Engine) Close() error {
	e.closeOnce.Do(func() {
		e.stopANNBuild()
		<-e.annBuildDone // it reads the store, which the caller closes next
		e.stopCluster()
		e.purger.Stop()
		e.trimmer.Stop()
		e.pkDeleter.stopAndWait()
		e.indexer.stop()
	})
	return nil
}

// Clock returns the engine's clock.
func (e *Engine) Clock() clock.Clock { return e.clock }

// now is the operation's one instant: the trusted instant of the time
// guard, which a wall-clock fault within the grace does not move and which
// never goes backwards (see clock.TimeGuard). An operation calls it once.
func (e *Engine) now() time.Time { return e.guard.Now() }

// env is the query environment of an operation at instant at. Its
// Elapsed is the query clock's: page budgets and query metrics measure
// real execution, whatever the engine's clock.
func (e *Engine) env(at time.Time) query.Env {
	return query.Env{Now: at, Elapsed: e.queryClock.Elapsed}
}

// catalogSnapshot returns the current catalog. REQUIRES: the caller does
// not mutate it.
func (e *Engine) catalogSnapshot() *catalog {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.cat
}

// readCounter reads the store-wide resource counter; 0 before the first
// resource.
func readCounter(r storage.Reader) (uint64, error) {
	b, err := r.Get([]byte{keyspace.Counter})
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return 0, nil
	case err != nil:
		return 0, err
	case len(b) != 8:
		return 0, fmt.Errorf("engine: corrupt counter (%d bytes)", len(b))
	}
	return binary.BigEndian.Uint64(b), nil
}

// nextNumber allocates a resource number from the store-wide counter.
// REQUIRES: called inside an Update.
func nextNumber(w storage.Writer) (uint64, error) {
	n, err := readCounter(w)
	if err != nil {
		return 0, err
	}
	n++
	return n, w.Set([]byte{keyspace.Counter}, binary.BigEndian.AppendUint64(nil, n))
}

// itemEtag renders an item's etag from the LSN of its last write, which
// is unique within its container.
func itemEtag(lsn uint64) string {
	var b [etagLen]byte
	return string(appendEtag(b[:0], lsn))
}

// etagLen is the length of an item's etag, quotes included.
const etagLen = len(`"00000000-0000-0000-0000-000000000000"`)

// appendEtag appends the etag of the item version lsn, as
// fmt.Sprintf("\"%08x-0000-0000-0000-%012x\"", lsn>>48, lsn&(1<<48-1))
// would write it: the high 16 bits take 8 digits, the low 48 bits 12.
func appendEtag(dst []byte, lsn uint64) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"', '0', '0', '0', '0')
	for shift := 60; shift >= 48; shift -= 4 {
		dst = append(dst, hex[lsn>>shift&0xf])
	}
	dst = append(dst, "-0000-0000-0000-"...)
	for shift := 44; shift >= 0; shift -= 4 {
		dst = append(dst, hex[lsn>>shift&0xf])
	}
	return append(dst, '"')
}

// CheckStore reads one key through the store, so that a readiness probe
// learns whether requests can be served now: the store's own error (nil
// when the key is merely absent), within ctx's deadline.
func (e *Engine) CheckStore(ctx context.Context) error {
	_, err := e.store.Get(ctx, []byte{keyspace.Counter})
	if err == storage.ErrNotFound {
		return nil
	}
	return err
}

// StoredItems counts the item versions in storage, visible or expired
// and not yet purged. It scans every item: for tests and tools.
func (e *Engine) StoredItems() int {
	n := 0
	_ = e.store.View(context.Background(), func(r storage.Reader) error {
		it := r.Scan([]byte{keyspace.Doc}, []byte{keyspace.Doc + 1}, false)
		defer it.Close()
		for it.Next() {
			n++
		}
		return it.Err()
	})
	return n
}
