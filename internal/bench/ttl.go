package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	dto "github.com/prometheus/client_model/go"

	"github.com/ebbdb/ebb/internal/clock"
	"github.com/ebbdb/ebb/internal/engine"
	"github.com/ebbdb/ebb/internal/server"
	"github.com/ebbdb/ebb/internal/storage"
)

// The TTL benchmarks measure the expiry engine on a fresh, durable Ebb:
//
//   - Lag: items with staggered expiries on the real clock; each purged
//     item's lag (purge time minus expiry time) is recorded exactly.
//   - Storm: a million small items expiring in the same second (written on
//     a manual clock, which then moves past their expiry at once); the
//     time until every one is purged, and the foreground point-read
//     latency of another container during the purge against before it.
//   - Idle: a million items none of which is due for hours; storage
//     operations per second and process CPU over a quiet window.
//   - defaultTtl change on the loaded container.
//
// Items are loaded through the engine directly (concurrent writers, each
// write durable) because loading a million through one SDK client would
// take longer than everything measured. Containers have their own large
// offers so that throughput, which the purger respects, is not what the
// storm measures.

// TTLOptions configure RunTTL.
type TTLOptions struct {
	// TempDir holds the servers' data directories; empty is os.TempDir.
	TempDir string
	// LagItems, StormItems and IdleItems size the three phases; zero means
	// 10,000, 1,000,000 and 1,000,000.
	LagItems, StormItems, IdleItems int
	// IdleWindow is how long the idle phase watches; zero means 60 s.
	IdleWindow time.Duration
	// Store, a postgres:// URL, runs the servers on PostgreSQL instead of
	// durable Pebble; each phase then needs an empty database, so point
	// it at a fresh schema and run one phase (StormOnly).
	Store string
	// StormOnly runs just the storm.
	StormOnly bool
	Progress  io.Writer
}

// TTLReport is what RunTTL measured.
type TTLReport struct {
	Machine Machine
	Lag     struct {
		Items         int
		P50, P99, Max time.Duration
		SpreadSeconds int
	}
	Storm struct {
		Items int
		// Took and PerSecond are for a storm with no other traffic,
		// LoadedTook and LoadedPerSecond for a second one while a client
		// reads items of another container.
		Took, LoadedTook           time.Duration
		PerSecond, LoadedPerSecond float64
		Baseline                   Stats // foreground point reads before the second storm
		During                     Stats // the same while it is purged
	}
	Idle struct {
		Items      int
		Window     time.Duration
		StorageOps int64
		Wakeups    float64
		CPU        time.Duration
	}
	DefaultTTLChange struct {
		Items int
		P50   time.Duration
	}
}

// countingStore counts storage operations: every View, Update, Get and
// iterator step.
type countingStore struct {
	storage.Store
	ops atomic.Int64
}

func (s *countingStore) Get(ctx context.Context, k []byte) ([]byte, error) {
	s.ops.Add(1)
	return s.Store.Get(ctx, k)
}

func (s *countingStore) Lend(ctx context.Context, k []byte, fn func([]byte) error) error {
	s.ops.Add(1)
	return s.Store.Lend(ctx, k, fn)
}

func (s *countingStore) View(ctx context.Context, fn func(storage.Reader) error) error {
	s.ops.Add(1)
	return s.Store.View(ctx, func(r storage.Reader) error { return fn(countingReader{r, &s.ops}) })
}

func (s *countingStore) Update(ctx context.Context, fn func(storage.Writer) error) error {
	s.ops.Add(1)
	return s.Store.Update(ctx, func(w storage.Writer) error {
		return fn(countingWriter{Writer: w, countingReader: countingReader{w, &s.ops}})
	})
}

func (s *countingStore) UpdateLocked(ctx context.Context, locks [][]byte, fn func(storage.Writer) error) error {
	s.ops.Add(1)
	return s.Store.UpdateLocked(ctx, locks, func(w storage.Writer) error {
		return fn(countingWriter{Writer: w, countingReader: countingReader{w, &s.ops}})
	})
}

type countingReader struct {
	storage.Reader
	ops *atomic.Int64
}

func (r countingReader) Get(k []byte) ([]byte, error) { r.ops.Add(1); return r.Reader.Get(k) }
func (r countingReader) Lend(k []byte, fn func([]byte) error) error {
	r.ops.Add(1)
	return r.Reader.Lend(k, fn)
}
func (r countingReader) GetMany(ks [][]byte, found func(int, []byte) error) error {
	r.ops.Add(int64(len(ks)))
	return r.Reader.GetMany(ks, found)
}
func (r countingReader) Scan(a, b []byte, rev bool) storage.Iterator {
	return countingIter{r.Reader.Scan(a, b, rev), r.ops}
}

// countingWriter counts its reads through the countingReader over the
// same transaction; its writes pass straight through.
type countingWriter struct {
	storage.Writer
	countingReader
}

func (w countingWriter) Get(k []byte) ([]byte, error) { return w.countingReader.Get(k) }
func (w countingWriter) Lend(k []byte, fn func([]byte) error) error {
	return w.countingReader.Lend(k, fn)
}
func (w countingWriter) GetMany(ks [][]byte, found func(int, []byte) error) error {
	return w.countingReader.GetMany(ks, found)
}
func (w countingWriter) Scan(a, b []byte, rev bool) storage.Iterator {
	return w.countingReader.Scan(a, b, rev)
}

type countingIter struct {
	storage.Iterator
	ops *atomic.Int64
}

func (it countingIter) Next() bool { it.ops.Add(1); return it.Iterator.Next() }

// ttlServer is one Ebb for a TTL phase.
type ttlServer struct {
	srv     *server.Server
	dir     string
	store   *countingStore
	mu      sync.Mutex
	lags    []time.Duration
	purged  atomic.Int64
	client  *azcosmos.Client
	closeIn func()
}

func startTTLServer(ctx context.Context, opts TTLOptions, c clock.Clock) (*ttlServer, error) {
	dir, err := os.MkdirTemp(opts.TempDir, "ebb-ttlbench-*")
	if err != nil {
		return nil, err
	}
	ts := &ttlServer{dir: dir}
	cfg := server.Config{
		Listen: "127.0.0.1:0", DataDir: dir, Store: opts.Store, Logger: slog.New(slog.DiscardHandler), Clock: c,
		WrapStore: func(s storage.Store) storage.Store { ts.store = &countingStore{Store: s}; return ts.store },
		OnPurge: func(lag time.Duration) {
			ts.mu.Lock()
			ts.lags = append(ts.lags, lag)
			ts.mu.Unlock()
			ts.purged.Add(1)
		},
	}
	if ts.srv, err = server.Start(ctx, cfg); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if ts.client, ts.closeIn, err = NewClient(ts.srv.URL); err != nil {
		ts.stop()
		return nil, err
	}
	return ts, nil
}

func (ts *ttlServer) stop() {
	if ts.closeIn != nil {
		ts.closeIn()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ts.srv.Shutdown(ctx)
	os.RemoveAll(ts.dir)
}

// container creates db/coll with defaultTtl def and a throughput large
// enough that the purger is never throttled by it.
func (ts *ttlServer) container(ctx context.Context, db, coll string, def int32) (*azcosmos.ContainerClient, error) {
	if _, err := ts.client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: db}, nil); err != nil {
		return nil, err
	}
	d, _ := ts.client.NewDatabase(db)
	tp := azcosmos.NewManualThroughputProperties(1_000_000)
	props := azcosmos.ContainerProperties{ID: coll, DefaultTimeToLive: &def,
		PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}}}
	if _, err := d.CreateContainer(ctx, props, &azcosmos.CreateContainerOptions{ThroughputProperties: &tp}); err != nil {
		return nil, err
	}
	return d.NewContainer(coll)
}

// load writes n small items through the engine with 64 writers; ttl(i)
// is item i's ttl, 0 for none.
func (ts *ttlServer) load(ctx context.Context, db, coll string, n int, ttl func(i int) int) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for w := 0; w < 64; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				pk := fmt.Sprintf("p%d", i%256)
				body := fmt.Sprintf(`{"id":"i%d","pk":"%s","v":%d`, i, pk, i)
				if t := ttl(i); t != 0 {
					body += fmt.Sprintf(`,"ttl":%d`, t)
				}
				body += "}"
				ref := engine.ItemRef{DB: db, Coll: coll, PK: `["` + pk + `"]`, HasPK: true}
				if _, err := ts.srv.Engine.WriteItem(ctx, ref, engine.Create, []byte(body), ""); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// waitPurged waits until n items have been purged, polling.
func (ts *ttlServer) waitPurged(ctx context.Context, n int64, timeout time.Duration) error {
	sys := clock.NewSystem()
	for ts.purged.Load() < n {
		if sys.Elapsed() > timeout {
			return fmt.Errorf("only %d of %d items purged after %v", ts.purged.Load(), n, timeout)
		}
		tick, stop := sys.After(time.Millisecond)
		select {
		case <-ctx.Done():
			stop()
			return ctx.Err()
		case <-tick:
		}
	}
	return nil
}

func (o TTLOptions) progress(format string, args ...any) {
	if o.Progress != nil {
		fmt.Fprintf(o.Progress, format+"\n", args...)
	}
}

// RunTTL runs the TTL benchmarks.
func RunTTL(ctx context.Context, opts TTLOptions) (TTLReport, error) {
	if opts.LagItems == 0 {
		opts.LagItems = 10_000
	}
	if opts.StormItems == 0 {
		opts.StormItems = 1_000_000
	}
	if opts.IdleItems == 0 {
		opts.IdleItems = 1_000_000
	}
	if opts.IdleWindow == 0 {
		opts.IdleWindow = time.Minute
	}
	rep := TTLReport{Machine: ThisMachine()}
	if opts.StormOnly {
		if err := runStorm(ctx, opts, &rep); err != nil {
			return rep, fmt.Errorf("storm: %w", err)
		}
		return rep, nil
	}
	if err := runLag(ctx, opts, &rep); err != nil {
		return rep, fmt.Errorf("lag: %w", err)
	}
	if err := runStorm(ctx, opts, &rep); err != nil {
		return rep, fmt.Errorf("storm: %w", err)
	}
	if err := runIdle(ctx, opts, &rep); err != nil {
		return rep, fmt.Errorf("idle: %w", err)
	}
	return rep, nil
}

// runLag: items expiring over 20 seconds on the real clock.
func runLag(ctx context.Context, opts TTLOptions, rep *TTLReport) error {
	ts, err := startTTLServer(ctx, opts, nil)
	if err != nil {
		return err
	}
	defer ts.stop()
	if _, err := ts.container(ctx, "lag", "items", -1); err != nil {
		return err
	}
	const spread = 20
	opts.progress("lag: loading %d items expiring over %d s", opts.LagItems, spread)
	if err := ts.load(ctx, "lag", "items", opts.LagItems, func(i int) int { return 3 + i%spread }); err != nil {
		return err
	}
	if err := ts.waitPurged(ctx, int64(opts.LagItems), 3*time.Minute); err != nil {
		return err
	}
	lags := slices.Clone(ts.lags)
	slices.Sort(lags)
	rep.Lag.Items, rep.Lag.SpreadSeconds = len(lags), spread
	rep.Lag.P50, rep.Lag.P99, rep.Lag.Max = Percentile(lags, 50), Percentile(lags, 99), lags[len(lags)-1]
	return nil
}

// runStorm: a million items expiring at the same instant on a manual
// clock, purged first with no other traffic and then again while a
// client reads items of another container.
func runStorm(ctx context.Context, opts TTLOptions, rep *TTLReport) error {
	m := clock.NewManual(clock.NewSystem().Now().Truncate(time.Second))
	ts, err := startTTLServer(ctx, opts, m)
	if err != nil {
		return err
	}
	defer ts.stop()
	fg, err := NewFixture(ctx, ts.client, "foreground")
	if err != nil {
		return err
	}
	if err := fg.Load(ctx, 1000, 8); err != nil {
		return err
	}
	read := func(ctx context.Context, i int) error { return fg.Read(ctx, i) }
	sys := clock.NewSystem()
	// storm loads the items into db, moves the clock past their expiry
	// and waits until they are purged, with during running meanwhile.
	storm := func(db string, during func(stop *atomic.Bool) error) (time.Duration, error) {
		if _, err := ts.container(ctx, db, "items", 60); err != nil {
			return 0, err
		}
		opts.progress("storm: loading %d items into %s that all expire in the same second", opts.StormItems, db)
		if err := ts.load(ctx, db, "items", opts.StormItems, func(int) int { return 0 }); err != nil {
			return 0, err
		}
		before := ts.purged.Load()
		var stop atomic.Bool
		done := make(chan error, 1)
		go func() { done <- during(&stop) }()
		start := sys.Elapsed()
		m.Advance(60 * time.Second)
		err := ts.waitPurged(ctx, before+int64(opts.StormItems), 5*time.Minute)
		took := sys.Elapsed() - start
		stop.Store(true)
		return took, errors.Join(err, <-done)
	}
	rep.Storm.Items = opts.StormItems
	if rep.Storm.Took, err = storm("alone", func(*atomic.Bool) error { return nil }); err != nil {
		return err
	}
	if rep.Storm.Baseline, err = Measure(ctx, 1, Limit{Duration: 3 * time.Second}, read); err != nil {
		return err
	}
	var during Recorder
	rep.Storm.LoadedTook, err = storm("loaded", func(stop *atomic.Bool) error {
		for i := 0; !stop.Load(); i++ {
			t0 := sys.Elapsed()
			if err := read(ctx, i); err != nil {
				return err
			}
			during.Add(sys.Elapsed() - t0)
		}
		return nil
	})
	if err != nil {
		return err
	}
	rep.Storm.PerSecond = float64(opts.StormItems) / rep.Storm.Took.Seconds()
	rep.Storm.LoadedPerSecond = float64(opts.StormItems) / rep.Storm.LoadedTook.Seconds()
	rep.Storm.During = during.Stats(rep.Storm.LoadedTook)
	return nil
}

// runIdle: a million items due in two hours; what does Ebb do meanwhile?
func runIdle(ctx context.Context, opts TTLOptions, rep *TTLReport) error {
	ts, err := startTTLServer(ctx, opts, nil)
	if err != nil {
		return err
	}
	defer ts.stop()
	c, err := ts.container(ctx, "idle", "items", 7200)
	if err != nil {
		return err
	}
	opts.progress("idle: loading %d items, none due for two hours", opts.IdleItems)
	if err := ts.load(ctx, "idle", "items", opts.IdleItems, func(i int) int {
		if i%2 == 0 {
			return 3600 + i%3600 // half with their own ttl, half on the default
		}
		return 0
	}); err != nil {
		return err
	}
	// Let the load settle (Pebble flushes and compacts what was just
	// written): wait for a second that uses under 1% of a core, up to a
	// minute, then watch a window.
	sys := clock.NewSystem()
	for i := 0; i < 60; i++ {
		before := cpuTime()
		tick, _ := sys.After(time.Second)
		<-tick
		if cpuTime()-before < 10*time.Millisecond {
			break
		}
	}
	ops0, wake0, cpu0 := ts.store.ops.Load(), counter(ts.srv.Metrics.TTLPurgerWakeups), cpuTime()
	opts.progress("idle: watching for %v", opts.IdleWindow)
	window, _ := sys.After(opts.IdleWindow)
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-window:
	}
	rep.Idle.Items, rep.Idle.Window = opts.IdleItems, opts.IdleWindow
	rep.Idle.StorageOps = ts.store.ops.Load() - ops0
	rep.Idle.Wakeups = counter(ts.srv.Metrics.TTLPurgerWakeups) - wake0
	rep.Idle.CPU = cpuTime() - cpu0

	// Changing defaultTtl on the loaded container rewrites nothing.
	r, err := c.Read(ctx, nil)
	if err != nil {
		return err
	}
	var took []time.Duration
	for i := 0; i < 11; i++ {
		p := *r.ContainerProperties
		def := int32(7200 + i + 1)
		p.DefaultTimeToLive = &def
		t0 := sys.Elapsed()
		if _, err := c.Replace(ctx, p, nil); err != nil {
			return err
		}
		took = append(took, sys.Elapsed()-t0)
	}
	slices.Sort(took)
	rep.DefaultTTLChange.Items, rep.DefaultTTLChange.P50 = opts.IdleItems, Percentile(took, 50)
	return nil
}

func counter(c interface{ Write(*dto.Metric) error }) float64 {
	var m dto.Metric
	if c.Write(&m) != nil || m.Counter == nil {
		return 0
	}
	return m.Counter.GetValue()
}

// WriteMarkdown prints the TTL report as the tables docs/benchmarks.md
// quotes.
func (r TTLReport) WriteMarkdown(w io.Writer) error {
	_, err := fmt.Fprintf(w, `Machine: %s

| TTL figure | measured | target |
|---|---|---|
| purge lag at idle, %s items over %d s (p50 / p99 / max) | %s / %s / %s | p99 ≤ 1 s, max ≤ 2 s |
| storm: %s items expiring in one second, purged in | %s (%s items/s) | ≤ 20 s |
| the same while a client reads another container: purged in | %s (%s items/s) | |
| that client's point reads during the storm (p50 / p99) | %s / %s (before: %s / %s) | p99 ≤ 2× before |
| idle: %s items none due, storage operations over %v | %d (%.2f/s), %v purger wake-ups | 0 |
| idle: process CPU over the window | %v (%.3f%% of one core) | < 0.1%% |
| defaultTtl change on %s items (p50 of 11) | %s | ≤ 10 ms |
`,
		r.Machine,
		thousands(float64(r.Lag.Items)), r.Lag.SpreadSeconds, fmtLatency(r.Lag.P50), fmtLatency(r.Lag.P99), fmtLatency(r.Lag.Max),
		thousands(float64(r.Storm.Items)), r.Storm.Took.Round(10*time.Millisecond), thousands(r.Storm.PerSecond),
		r.Storm.LoadedTook.Round(10*time.Millisecond), thousands(r.Storm.LoadedPerSecond),
		fmtLatency(r.Storm.During.P50), fmtLatency(r.Storm.During.P99), fmtLatency(r.Storm.Baseline.P50), fmtLatency(r.Storm.Baseline.P99),
		thousands(float64(r.Idle.Items)), r.Idle.Window, r.Idle.StorageOps, float64(r.Idle.StorageOps)/r.Idle.Window.Seconds(), r.Idle.Wakeups,
		r.Idle.CPU.Round(time.Millisecond), 100*r.Idle.CPU.Seconds()/r.Idle.Window.Seconds(),
		thousands(float64(r.DefaultTTLChange.Items)), fmtLatency(r.DefaultTTLChange.P50),
	)
	return err
}
