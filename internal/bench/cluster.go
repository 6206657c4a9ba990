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
// durable Pebble on the same machine and to the same upserts written
// straight to the database with pgx (the baseline). Every node has its
// own client (its own connection), so requests really are spread. The
// container has Partitions physical partitions, and each client reads
// and writes its own logical partition, the clients' partitions spread
// over the physical ones; one node on PostgreSQL is also measured with
// one physical partition, where every write takes the same lock.

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
	// Limit is how long each workload runs; zero means 10 s.
	Limit    Limit
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
}

// ClusterReport is what RunCluster measured.
type ClusterReport struct {
	Machine Machine
	// Baseline is the same upserts written straight to PostgreSQL by
	// pgx: the most a client of that database gets on this machine.
	Baseline Stats
	Results  []ClusterResult
}

// RunCluster runs the read-8 and upsert-8 workloads on durable Pebble
// (one node) and on PostgreSQL with each node count.
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
	rep := ClusterReport{Machine: ThisMachine()}
	run := func(storage string, nodes, parts int, cfg func(i int) server.Config) error {
		if opts.Progress != nil {
			fmt.Fprintf(opts.Progress, "cluster: %s, %d node(s), %d physical partition(s)\n", storage, nodes, parts)
		}
		res, err := runNodes(ctx, opts, nodes, parts, cfg)
		if err != nil {
			return fmt.Errorf("%s, %d nodes: %w", storage, nodes, err)
		}
		res.Storage, res.Nodes, res.Partitions = storage, nodes, parts
		rep.Results = append(rep.Results, res)
		return nil
	}
	if opts.Progress != nil {
		fmt.Fprintln(opts.Progress, "cluster: PostgreSQL through pgx, the baseline")
	}
	var err error
	if rep.Baseline, err = pgxBaseline(ctx, opts.Store, opts.Limit); err != nil {
		return rep, fmt.Errorf("baseline: %w", err)
	}
	dir, err := os.MkdirTemp(opts.TempDir, "ebb-bench-cluster-*")
	if err != nil {
		return rep, err
	}
	defer os.RemoveAll(dir)
	if err := run("durable Pebble", 1, opts.Partitions, func(int) server.Config { return server.Config{DataDir: dir} }); err != nil {
		return rep, err
	}
	onPG := func(int) server.Config { return server.Config{Store: opts.Store} }
	if opts.Partitions > 1 {
		if err := run("PostgreSQL", 1, 1, onPG); err != nil {
			return rep, err
		}
	}
	for _, n := range opts.Nodes {
		if err := run("PostgreSQL", n, opts.Partitions, onPG); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// runNodes starts n servers, loads a container through the first and
// runs the workloads with eight goroutines spread over all of them.
func runNodes(ctx context.Context, opts ClusterOptions, n, parts int, cfg func(i int) server.Config) (ClusterResult, error) {
	var res ClusterResult
	var fixtures []*Fixture
	var servers []*server.Server
	var closers []func()
	defer func() {
		for _, c := range closers {
			c()
		}
	}()
	// Each run gets its own database, so that runs on one store do not
	// see each other's data.
	dbID := fmt.Sprintf("bench-%d", clusterRuns.Add(1))
	for i := 0; i < n; i++ {
		c := cfg(i)
		c.Listen, c.Logger = "127.0.0.1:0", slog.New(slog.DiscardHandler)
		srv, err := server.Start(ctx, c)
		if err != nil {
			return res, err
		}
		servers = append(servers, srv)
		client, closeIdle, err := NewClient(srv.URL)
		if err != nil {
			return res, err
		}
		closers = append(closers, func() {
			closeIdle()
			shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			srv.Shutdown(shutdownCtx)
		})
		var f *Fixture
		if i == 0 {
			if f, err = NewSpreadFixture(ctx, client, dbID, parts, concurrentClients); err == nil {
				err = f.Load(ctx, clusterKeys, concurrentClients)
			}
		} else {
			f, err = AttachFixture(client, dbID, fixtures[0])
		}
		if err != nil {
			return res, err
		}
		fixtures = append(fixtures, f)
	}
	spread := func(op func(f *Fixture, ctx context.Context, i int) error) func(context.Context, int) error {
		return func(ctx context.Context, i int) error { return op(fixtures[i%len(fixtures)], ctx, i) }
	}
	var err error
	if res.Read, err = Measure(ctx, concurrentClients, opts.Limit, spread((*Fixture).Read)); err != nil {
		return res, err
	}
	before := sharedStoreStats(servers)
	res.Upsert, err = Measure(ctx, concurrentClients, opts.Limit, spread((*Fixture).Upsert))
	after := sharedStoreStats(servers)
	res.Updates, res.Retries = after.Updates-before.Updates, after.Retries-before.Retries
	return res, err
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

// pgxBaseline writes what the upsert workload writes straight to the
// database at url with pgx: eight connections, each upsert of a 1 KB item
// into a key/value table its own transaction, cycling through as many
// keys as the fixture loads. It is what the database gives any client on
// this machine, so Ebb's upserts are measured against it.
func pgxBaseline(ctx context.Context, url string, limit Limit) (Stats, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return Stats{}, err
	}
	cfg.MaxConns = concurrentClients
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return Stats{}, err
	}
	defer pool.Close()
	const table = "ebb_bench_baseline"
	if _, err := pool.Exec(ctx, "CREATE TABLE IF NOT EXISTS "+table+" (key bytea PRIMARY KEY, value bytea NOT NULL)"); err != nil {
		return Stats{}, err
	}
	defer pool.Exec(context.WithoutCancel(ctx), "DROP TABLE "+table)
	const upsert = "INSERT INTO " + table + " (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value"
	return Measure(ctx, concurrentClients, limit, func(ctx context.Context, i int) error {
		id := ItemID(i % clusterKeys)
		_, err := pool.Exec(ctx, upsert, []byte(id), Item(id, i+1))
		return err
	})
}

var clusterRuns atomic.Int64

// clusterKeys is how many items the cluster workloads cycle through.
const clusterKeys = 1000

// WriteMarkdown prints the cluster report.
func (r ClusterReport) WriteMarkdown(w io.Writer) error {
	if _, err := fmt.Fprintf(w, "Machine: %s\n\n| storage | nodes | physical partitions | point reads/s (8 clients) | p50 / p99 | upserts/s (8 clients) | p50 / p99 | upserts / baseline | retried attempts |\n|---|---|---|---|---|---|---|--:|--:|\n", r.Machine); err != nil {
		return err
	}
	base := r.Baseline.OpsPerSec()
	if _, err := fmt.Fprintf(w, "| PostgreSQL through pgx (baseline) | — | — | — | — | %s | %s / %s | 100%% | — |\n",
		thousands(base), fmtLatency(r.Baseline.P50), fmtLatency(r.Baseline.P99)); err != nil {
		return err
	}
	for _, res := range r.Results {
		share, retried := "—", "—"
		if res.Storage == "PostgreSQL" && base > 0 {
			share = fmt.Sprintf("%.0f%%", 100*res.Upsert.OpsPerSec()/base)
			if res.Updates > 0 {
				retried = fmt.Sprintf("%.1f%% (%s of %s)", 100*float64(res.Retries)/float64(res.Updates), thousands(float64(res.Retries)), thousands(float64(res.Updates)))
			}
		}
		if _, err := fmt.Fprintf(w, "| %s | %d | %d | %s | %s / %s | %s | %s / %s | %s | %s |\n", res.Storage, res.Nodes, res.Partitions,
			thousands(res.Read.OpsPerSec()), fmtLatency(res.Read.P50), fmtLatency(res.Read.P99),
			thousands(res.Upsert.OpsPerSec()), fmtLatency(res.Upsert.P50), fmtLatency(res.Upsert.P99), share, retried); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintln(w, "\nUpserts / baseline is Ebb's upsert rate as a share of the baseline's; retried attempts are the write transactions the database made Ebb run again (serialization failures and deadlocks), as a share of all its write transactions during the upserts.")
	return err
}
