package bench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ebbdb/ebb/internal/server"
	"github.com/ebbdb/ebb/internal/storage/postgres"
)

// The cluster benchmark measures Ebb on a shared PostgreSQL store: point
// reads and upserts from eight concurrent clients spread over one or
// more in-process nodes on the same database, next to one node on
// durable Pebble and one in memory on the same machine and to the same
// upserts written straight to the database with pgx (the baseline). The
// in-memory node is measured a second time with the baseline's write of
// each item after its upsert: a bound on any design that writes items to
// PostgreSQL, measured rather than added up.
// Every node has its own client (its own connection), so requests really
// are spread. The container has Partitions physical partitions, and each
// client reads and writes its own logical partition, the clients'
// partitions spread over the physical ones; one node on PostgreSQL is
// also measured with one physical partition, where every write takes the
// same lock.
//
// Every configuration is set up first and then measured in rounds that
// alternate between them, each starting with a different one, as `ebb
// bench` alternates Ebb and its ceiling: the database grows, and its
// autovacuum wakes, as the run goes on, and one configuration measured
// after all the others would pay for that alone.

// ClusterOptions configure RunCluster.
type ClusterOptions struct {
	// Store is the postgres:// URL; each run uses it as is, so point it
	// at an empty database or schema.
	Store string
	// Nodes lists the node counts to measure on PostgreSQL; empty means
	// 1 and 3.
	Nodes []int
	// Partitions is the container's number of physical partitions;
	// zero means one per client (8).
	Partitions int
	// Limit is how long each workload runs against each configuration;
	// zero means 10 s.
	Limit Limit
	// Rounds splits each workload's run into this many rounds that
	// alternate the configurations; 0 means 5.
	Rounds   int
	TempDir  string
	Progress io.Writer
}

// ClusterResult is one configuration's figures.
type ClusterResult struct {
	Storage      string
	Nodes        int
	Partitions   int
	Read, Upsert Stats
	// Updates and Retries are the shared store's write transactions
	// during the upserts and the attempts they made again after a
	// conflict, summed over the nodes (zero on Pebble).
	Updates, Retries uint64
	// DB is the database's work per upsert (none on Pebble).
	DB DBWork
	// ProcessCPU is the CPU time this process (the clients and every Ebb
	// node) spent per upsert.
	ProcessCPU time.Duration
}

// ClusterReport is what RunCluster measured.
type ClusterReport struct {
	Machine Machine
	Rounds  int
	// Baseline is the same upserts written straight to PostgreSQL by
	// pgx: the most a client of that database gets on this machine.
	Baseline   Stats
	BaselineDB DBWork
	// BaselineProcessCPU is the CPU time pgx and its callers spent per
	// upsert of the baseline.
	BaselineProcessCPU time.Duration
	Results            []ClusterResult
}

// inMemory names the configuration of one node on in-memory storage, and
// inMemoryPlusBaseline that node with the baseline's write added to each
// upsert.
const (
	inMemory             = "in memory (no database, nothing durable)"
	inMemoryPlusBaseline = "in memory, each upsert followed by the baseline's write of it (bound)"
)

// clusterTarget is one configuration being measured: its operations and
// what its rounds have added up so far.
type clusterTarget struct {
	res          ClusterResult
	read, upsert func(ctx context.Context, i int) error // read nil: upserts only
	servers      []*server.Server
	// probe, when set, reads the database's work around each round of
	// upserts into db.
	probe *dbProbe
	db    dbTally
	// procCPU is this process's CPU time during the upsert rounds.
	procCPU time.Duration

	reads, upserts rounds
}

// RunCluster runs the read-8 and upsert-8 workloads on durable Pebble
// (one node) and on PostgreSQL with each node count, and the upserts
// through pgx.
func RunCluster(ctx context.Context, opts ClusterOptions) (ClusterReport, error) {
	if len(opts.Nodes) == 0 {
		opts.Nodes = []int{1, 3}
	}
	if opts.Limit == (Limit{}) {
		opts.Limit.Duration = 10 * time.Second
	}
	if opts.Partitions <= 0 {
		opts.Partitions = concurrentClients
	}
	if opts.Rounds <= 0 {
		opts.Rounds = 5
	}
	if opts.Limit.Count > 0 {
		opts.Rounds = min(opts.Rounds, opts.Limit.Count)
	}
	progress := opts.Progress
	if progress == nil {
		progress = io.Discard
	}
	rep := ClusterReport{Machine: ThisMachine(), Rounds: opts.Rounds}
	var closers []func()
	defer func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}()

	fmt.Fprintln(progress, "cluster: setting up PostgreSQL through pgx, the baseline")
	baseline, closeBaseline, err := pgxBaseline(ctx, opts.Store)
	if err != nil {
		return rep, fmt.Errorf("baseline: %w", err)
	}
	closers = append(closers, closeBaseline)
	probe, err := newDBProbe(ctx, opts.Store)
	if err != nil {
		return rep, fmt.Errorf("database probe: %w", err)
	}
	closers = append(closers, probe.close)
	targets := []*clusterTarget{{upsert: baseline, probe: probe}}

	dir, err := os.MkdirTemp(opts.TempDir, "ebb-bench-cluster-*")
	if err != nil {
		return rep, err
	}
	closers = append(closers, func() { os.RemoveAll(dir) })
	add := func(storage string, nodes, parts int, cfg func() server.Config, probe *dbProbe) error {
		fmt.Fprintf(progress, "cluster: setting up %s, %d node(s), %d physical partition(s)\n", storage, nodes, parts)
		t, closeNodes, err := startNodes(ctx, nodes, parts, cfg)
		closers = append(closers, closeNodes)
		if err != nil {
			return fmt.Errorf("%s, %d nodes: %w", storage, nodes, err)
		}
		t.res.Storage, t.res.Nodes, t.res.Partitions = storage, nodes, parts
		t.probe = probe
		targets = append(targets, t)
		return nil
	}
	// In memory, Ebb keeps its store in memory and reaches no database:
	// its upserts show about what the SDK, HTTP/2, TLS and the engine
	// leave of this machine for any storage.
	if err := add(inMemory, 1, opts.Partitions, func() server.Config { return server.Config{Memory: true} }, nil); err != nil {
		return rep, err
	}
	// The same node again, each upsert followed by the baseline's write
	// of it: Ebb's own work plus the least a database write costs, the
	// most any design that writes its items to PostgreSQL could reach
	// on this machine.
	memUpsert := targets[len(targets)-1].upsert
	targets = append(targets, &clusterTarget{
		res:   ClusterResult{Storage: inMemoryPlusBaseline, Nodes: 1, Partitions: opts.Partitions},
		probe: probe,
		upsert: func(ctx context.Context, i int) error {
			if err := memUpsert(ctx, i); err != nil {
				return err
			}
			return baseline(ctx, i)
		},
	})
	if err := add("durable Pebble", 1, opts.Partitions, func() server.Config { return server.Config{DataDir: dir} }, nil); err != nil {
		return rep, err
	}
	onPG := func() server.Config { return server.Config{Store: opts.Store} }
	if opts.Partitions > 1 {
		if err := add("PostgreSQL", 1, 1, onPG, probe); err != nil {
			return rep, err
		}
	}
	for _, n := range opts.Nodes {
		if err := add("PostgreSQL", n, opts.Partitions, onPG, probe); err != nil {
			return rep, err
		}
	}

	for r := range opts.Rounds {
		fmt.Fprintf(progress, "cluster: round %d of %d\n", r+1, opts.Rounds)
		limit := roundLimit(opts.Limit, r, opts.Rounds)
		for k := range targets {
			if err := targets[(r+k)%len(targets)].measureRound(ctx, limit); err != nil {
				return rep, err
			}
		}
	}
	rep.Baseline = targets[0].upserts.stats()
	rep.BaselineDB = targets[0].db.perUpsert()
	rep.BaselineProcessCPU = targets[0].processCPUPerUpsert()
	for _, t := range targets[1:] {
		t.res.Read = t.reads.stats()
		t.res.Upsert = t.upserts.stats()
		t.res.DB = t.db.perUpsert()
		t.res.ProcessCPU = t.processCPUPerUpsert()
		rep.Results = append(rep.Results, t.res)
	}
	return rep, nil
}

// measureRound runs one round of t's workloads, each for limit.
func (t *clusterTarget) measureRound(ctx context.Context, limit Limit) error {
	label := t.res.Storage
	if label == "" {
		label = "baseline"
	}
	if t.read != nil {
		if err := t.reads.run(ctx, concurrentClients, limit, t.read); err != nil {
			return fmt.Errorf("%s, %d nodes: %w", label, t.res.Nodes, err)
		}
	}
	before := sharedStoreStats(t.servers)
	var dbBefore dbWork
	if t.probe != nil {
		dbBefore = t.probe.read(ctx)
	}
	upserts, cpu := t.upserts.rec.Len(), cpuTime()
	err := t.upserts.run(ctx, concurrentClients, limit, t.upsert)
	t.procCPU += cpuTime() - cpu
	if t.probe != nil {
		t.db.add(t.probe.read(ctx).sub(dbBefore), t.upserts.rec.Len()-upserts)
	}
	after := sharedStoreStats(t.servers)
	t.res.Updates += after.Updates - before.Updates
	t.res.Retries += after.Retries - before.Retries
	if err != nil {
		return fmt.Errorf("%s, %d nodes: %w", label, t.res.Nodes, err)
	}
	return nil
}

// processCPUPerUpsert is this process's CPU time per upsert of t.
func (t *clusterTarget) processCPUPerUpsert() time.Duration {
	n := t.upserts.rec.Len()
	if n == 0 {
		return 0
	}
	return t.procCPU / time.Duration(n)
}

// startNodes starts n servers, loads a container of parts physical
// partitions through the first, and returns the workloads with eight
// clients spread over all of them, and how to stop them.
func startNodes(ctx context.Context, n, parts int, cfg func() server.Config) (*clusterTarget, func(), error) {
	t := &clusterTarget{}
	var fixtures []*Fixture
	var closers []func()
	closeAll := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	// Each configuration gets its own database, so that configurations
	// on one store do not see each other's data.
	dbID := fmt.Sprintf("bench-%d", clusterRuns.Add(1))
	for i := 0; i < n; i++ {
		c := cfg()
		c.Listen, c.Logger = "127.0.0.1:0", slog.New(slog.DiscardHandler)
		srv, err := server.Start(ctx, c)
		if err != nil {
			return t, closeAll, err
		}
		t.servers = append(t.servers, srv)
		closers = append(closers, func() {
			shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			srv.Shutdown(shutdownCtx)
		})
		client, closeIdle, err := NewClient(srv.URL)
		if err != nil {
			return t, closeAll, err
		}
		// Runs before the server shuts down, which then need not wait
		// for the client to hang up.
		closers = append(closers, closeIdle)
		var f *Fixture
		if i == 0 {
			if f, err = NewSpreadFixture(ctx, client, dbID, parts, concurrentClients); err == nil {
				err = f.Load(ctx, clusterKeys, concurrentClients)
			}
		} else {
			f, err = AttachFixture(client, dbID, fixtures[0])
		}
		if err != nil {
			return t, closeAll, err
		}
		fixtures = append(fixtures, f)
	}
	spread := func(op func(f *Fixture, ctx context.Context, i int) error) func(context.Context, int) error {
		return func(ctx context.Context, i int) error { return op(fixtures[i%len(fixtures)], ctx, i) }
	}
	t.read, t.upsert = spread((*Fixture).Read), spread((*Fixture).Upsert)
	return t, closeAll, nil
}

// sharedStoreStats sums the shared-store counts of servers.
func sharedStoreStats(servers []*server.Server) postgres.Stats {
	var sum postgres.Stats
	for _, srv := range servers {
		if st, ok := srv.SharedStoreStats(); ok {
			sum.Updates += st.Updates
			sum.Retries += st.Retries
		}
	}
	return sum
}

// pgxBaseline returns what the upsert workload writes, written straight
// to the database at url with pgx: eight connections, each upsert of a
// 1 KB item into a key/value table its own transaction, cycling through
// as many keys as the fixture loads. It is what the database gives any
// client on this machine, so Ebb's upserts are measured against it. The
// function returned second drops the table and closes the connections.
func pgxBaseline(ctx context.Context, url string) (func(context.Context, int) error, func(), error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, func() {}, err
	}
	cfg.MaxConns = concurrentClients
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, func() {}, err
	}
	const table = "ebb_bench_baseline"
	closeAll := func() {
		pool.Exec(context.WithoutCancel(ctx), "DROP TABLE IF EXISTS "+table)
		pool.Close()
	}
	if _, err := pool.Exec(ctx, "CREATE TABLE IF NOT EXISTS "+table+" (key bytea PRIMARY KEY, value bytea NOT NULL)"); err != nil {
		return nil, closeAll, err
	}
	const upsert = "INSERT INTO " + table + " (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value"
	return func(ctx context.Context, i int) error {
		id := ItemID(i % clusterKeys)
		_, err := pool.Exec(ctx, upsert, []byte(id), Item(id, i+1))
		return err
	}, closeAll, nil
}

var clusterRuns atomic.Int64

// clusterKeys is how many items the cluster workloads cycle through.
const clusterKeys = 1000

// WriteMarkdown prints the cluster report.
func (r ClusterReport) WriteMarkdown(w io.Writer) error {
	if _, err := fmt.Fprintf(w, "Machine: %s. Each workload ran against each configuration in %d rounds that alternate the configurations.\n\n| storage | nodes | physical partitions | point reads/s (8 clients) | p50 / p99 | upserts/s (8 clients) | p50 / p99 | upserts / baseline | retried attempts | clients' and Ebb's CPU per upsert | database CPU per upsert | WAL per upsert |\n|---|---|---|---|---|---|---|--:|--:|--:|--:|--:|\n", r.Machine, r.Rounds); err != nil {
		return err
	}
	base := r.Baseline.OpsPerSec()
	cpu, wal := r.BaselineDB.cells()
	if _, err := fmt.Fprintf(w, "| PostgreSQL through pgx (baseline) | — | — | — | — | %s | %s / %s | 100%% | — | %s | %s | %s |\n",
		thousands(base), fmtLatency(r.Baseline.P50), fmtLatency(r.Baseline.P99), micros(r.BaselineProcessCPU), cpu, wal); err != nil {
		return err
	}
	for _, res := range r.Results {
		share, retried := "—", "—"
		if base > 0 {
			share = fmt.Sprintf("%.0f%%", 100*res.Upsert.OpsPerSec()/base)
		}
		if res.Storage == "PostgreSQL" {
			if res.Updates > 0 {
				retried = fmt.Sprintf("%.1f%% (%s of %s)", 100*float64(res.Retries)/float64(res.Updates), thousands(float64(res.Retries)), thousands(float64(res.Updates)))
			}
		}
		cpu, wal := res.DB.cells()
		reads, readP50, readP99 := "—", "—", "—"
		if res.Read.Ops > 0 {
			reads, readP50, readP99 = thousands(res.Read.OpsPerSec()), fmtLatency(res.Read.P50), fmtLatency(res.Read.P99)
		}
		if _, err := fmt.Fprintf(w, "| %s | %d | %d | %s | %s / %s | %s | %s / %s | %s | %s | %s | %s | %s |\n", res.Storage, res.Nodes, res.Partitions,
			reads, readP50, readP99,
			thousands(res.Upsert.OpsPerSec()), fmtLatency(res.Upsert.P50), fmtLatency(res.Upsert.P99), share, retried, micros(res.ProcessCPU), cpu, wal); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintln(w, "\nUpserts / baseline is Ebb's upsert rate as a share of the baseline's; Ebb in memory, which keeps its store in memory and reaches no database, shows about the most any storage could give on this machine, where the clients, Ebb and the database share the cores, and the bound adds to each of its upserts the baseline's one-row write, the least any design that keeps items in PostgreSQL must also do; retried attempts are the write transactions the database made Ebb run again (serialization failures and deadlocks), as a share of all its write transactions during the upserts. The clients' and Ebb's CPU per upsert is this process's CPU time during the upserts (the SDK clients and every Ebb node, or pgx for the baseline). Database CPU per upsert is the CPU time of the PostgreSQL processes on this machine during the upserts (— when the database runs elsewhere), and WAL per upsert how far the database's WAL insert position moved meanwhile: both count the whole database server, which only one configuration writes to at a time.")
	return err
}

// micros formats a CPU time per upsert for the report's table.
func micros(d time.Duration) string {
	if d <= 0 {
		return "—"
	}
	return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond))
}

// cells formats the database's work per upsert for the report's table.
func (d DBWork) cells() (cpu, wal string) {
	cpu, wal = "—", "—"
	if d.HasCPU {
		cpu = micros(d.CPUPerUpsert)
	}
	if d.HasWAL {
		wal = fmt.Sprintf("%s B", thousands(d.WALPerUpsert))
	}
	return cpu, wal
}
