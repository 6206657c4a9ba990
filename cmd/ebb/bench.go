package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/ebbdb/ebb/internal/bench"
	"github.com/ebbdb/ebb/internal/engine"
	"github.com/ebbdb/ebb/internal/server"
)

// runBench is `ebb bench`: it runs the benchmark workloads against an
// in-process Ebb and the ceiling stub and prints the report as Markdown
// for docs/benchmarks.md. Progress goes to stderr, the report to stdout.
func runBench(args []string) error {
	if len(args) > 0 && args[0] == "ttl" {
		return runTTLBench(args[1:])
	}
	if len(args) > 0 && args[0] == "cluster" {
		return runClusterBench(args[1:])
	}
	if len(args) > 0 && args[0] == "runaway" {
		return runRunawayBench(args[1:])
	}
	if len(args) > 0 && args[0] == "search" {
		return runSearchBench(args[1:])
	}
	fs := flag.NewFlagSet("ebb bench", flag.ContinueOnError)
	duration := fs.Duration("duration", 10*time.Second, "how long each workload runs against each target")
	count := fs.Int("count", 0, "run each workload for this many operations instead of --duration")
	rounds := fs.Int("rounds", 5, "split each timed run into this many rounds alternating the ceiling and Ebb")
	memory := fs.Bool("memory", false, "run Ebb on in-memory storage instead of durable Pebble")
	workloads := fs.String("workloads", strings.Join(bench.DefaultWorkloads, ","), "comma-separated workloads: "+workloadList())
	tempDir := fs.String("temp-dir", "", "directory for Ebb's data and the fsync probe (default: the system temporary directory)")
	fsyncs := fs.Int("fsync-samples", 1000, "4 KB fsyncs to time (0: skip)")
	rssItems := fs.Int("rss-items", 10_000, "1 KB items to load for the peak-RSS figure (0: skip)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: ebb bench [flags]\n       ebb bench ttl [flags]\n       ebb bench cluster [flags]\n       ebb bench runaway [flags]\n       ebb bench search [flags]\n\nRuns each workload against a fresh in-process Ebb and against a stub that\nstores nothing (the ceiling), and prints a Markdown table.\n\nflags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err // main answers flag.ErrHelp with status 0
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("bench: unexpected arguments %q", fs.Args())
	}
	opts := bench.Options{
		Limit:        bench.Limit{Duration: *duration, Count: *count},
		Rounds:       *rounds,
		Memory:       *memory,
		Workloads:    strings.Split(*workloads, ","),
		TempDir:      *tempDir,
		FsyncSamples: skipIfZero(*fsyncs),
		RSSItems:     skipIfZero(*rssItems),
		Progress:     os.Stderr,
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := bench.Run(ctx, opts)
	if err != nil {
		return err
	}
	return rep.WriteMarkdown(os.Stdout)
}

// skipIfZero maps a flag's 0 ("skip") to bench.Options' negative.
func skipIfZero(n int) int {
	if n == 0 {
		return -1
	}
	return n
}

func workloadList() string {
	names := make([]string, len(bench.Workloads))
	for i, w := range bench.Workloads {
		names[i] = w.Name + " (" + w.Title + ")"
	}
	return strings.Join(names, ", ")
}

// runTTLBench is `ebb bench ttl`: purge lag at idle, a mass-expiry storm,
// the idle cost of a loaded container, and the cost of changing
// defaultTtl, on fresh durable servers.
func runTTLBench(args []string) error {
	fs := flag.NewFlagSet("ebb bench ttl", flag.ContinueOnError)
	lag := fs.Int("lag-items", 10_000, "items with staggered expiries for the purge-lag figure")
	storm := fs.Int("storm-items", 1_000_000, "items expiring in the same second")
	idle := fs.Int("idle-items", 1_000_000, "items none of which is due, for the idle cost")
	window := fs.Duration("idle-window", time.Minute, "how long the idle cost is watched")
	tempDir := fs.String("temp-dir", "", "directory for the servers' data (default: the system temporary directory)")
	store := fs.String("store", "", "run the storm alone on this postgres:// database (an empty one) instead of durable Pebble")
	stormOnly := fs.Bool("storm-only", false, "run only the storm (implied by --store)")
	if err := fs.Parse(args); err != nil {
		return err // main answers flag.ErrHelp with status 0
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := bench.RunTTL(ctx, bench.TTLOptions{
		TempDir: *tempDir, LagItems: *lag, StormItems: *storm, IdleItems: *idle, IdleWindow: *window, Progress: os.Stderr,
		Store: *store, StormOnly: *stormOnly || *store != "",
	})
	if err != nil {
		return err
	}
	if *stormOnly || *store != "" {
		where := "durable Pebble"
		if *store != "" {
			where = "PostgreSQL"
		}
		s := rep.Storm
		_, err := fmt.Printf("Storm on %s: %d items expiring in one second purged in %v (%.0f items/s); "+
			"with a client reading another container, in %v (%.0f items/s), its point reads meanwhile p50 %v, p99 %v (before: p50 %v, p99 %v).\n",
			where, s.Items, s.Took.Round(10*time.Millisecond), s.PerSecond, s.LoadedTook.Round(10*time.Millisecond), s.LoadedPerSecond,
			s.During.P50, s.During.P99, s.Baseline.P50, s.Baseline.P99)
		return err
	}
	return rep.WriteMarkdown(os.Stdout)
}

// runSearchBench is `ebb bench search`: vector and full-text searches
// over the wire, exact beside the diskANN graph.
func runSearchBench(args []string) error {
	fs := flag.NewFlagSet("ebb bench search", flag.ContinueOnError)
	items := fs.Int("items", 10_000, "items to write, each a vector and eight words")
	dims := fs.Int("dimensions", 768, "the vectors' dimensions")
	queries := fs.Int("queries", 50, "searches of each kind")
	memory := fs.Bool("memory", false, "run Ebb on in-memory storage instead of durable Pebble")
	store := fs.String("store", "", "run Ebb on this postgres:// database (an empty one) instead of Pebble")
	tempDir := fs.String("temp-dir", "", "directory for Ebb's data (default: the system temporary directory)")
	if err := fs.Parse(args); err != nil {
		return err // main answers flag.ErrHelp with status 0
	}
	if *items < 1 || *dims < 1 || *dims > 4096 || *queries < 1 {
		return fmt.Errorf("bench search: --items and --queries must be positive and --dimensions from 1 to 4,096")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := bench.RunSearch(ctx, bench.SearchOptions{Items: *items, Dims: *dims, Queries: *queries, Memory: *memory, Store: *store, TempDir: *tempDir, Progress: os.Stderr})
	if err != nil {
		return err
	}
	return rep.WriteMarkdown(os.Stdout)
}

// runClusterBench is `ebb bench cluster --store postgres://…`: point reads
// and upserts from eight clients on in-memory storage, on durable Pebble
// and on PostgreSQL with one and three nodes.
func runClusterBench(args []string) error {
	fs := flag.NewFlagSet("ebb bench cluster", flag.ContinueOnError)
	store := fs.String("store", os.Getenv("EBB_STORE"), "postgres:// URL of an empty database (required)")
	duration := fs.Duration("duration", 10*time.Second, "how long each workload runs against each configuration")
	rounds := fs.Int("rounds", 5, "split each workload's run into this many rounds alternating the configurations")
	tempDir := fs.String("temp-dir", "", "directory for the Pebble run's data")
	partitions := fs.Int("partitions", 8, "physical partitions of the benchmark container (each of the 8 clients writes its own logical partition)")
	if err := fs.Parse(args); err != nil {
		return err // main answers flag.ErrHelp with status 0
	}
	if *store == "" {
		return fmt.Errorf("bench cluster: --store postgres://… is required")
	}
	if *partitions < 1 || *partitions > 256 {
		return fmt.Errorf("bench cluster: --partitions must be from 1 to 256; got %d", *partitions)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := bench.RunCluster(ctx, bench.ClusterOptions{
		Store: *store, Limit: bench.Limit{Duration: *duration}, Rounds: *rounds, TempDir: *tempDir, Progress: os.Stderr,
		Partitions: *partitions,
	})
	if err != nil {
		return err
	}
	return rep.WriteMarkdown(os.Stdout)
}

// runRunawayBench is `ebb bench runaway`: what a runaway query costs the
// server and the point reads of another client.
func runRunawayBench(args []string) error {
	fs := flag.NewFlagSet("ebb bench runaway", flag.ContinueOnError)
	reads := fs.Duration("reads", 10*time.Second, "how long each point-read phase runs")
	abandon := fs.Duration("abandon-after", 2*time.Second, "how long the abandoning client waits for a page before it gives up")
	memory := fs.Bool("memory", false, "run Ebb on in-memory storage instead of durable Pebble")
	tempDir := fs.String("temp-dir", "", "directory for Ebb's data (default: the system temporary directory)")
	budget := fs.Duration("query-page-budget", engine.DefaultQueryPageBudget, "the server's query page budget")
	if err := fs.Parse(args); err != nil {
		return err // main answers flag.ErrHelp with status 0
	}
	if *budget <= 0 {
		return fmt.Errorf("--query-page-budget must be positive; got %v", *budget)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := bench.RunRunaway(ctx, bench.RunawayOptions{
		TempDir: *tempDir, Memory: *memory, Reads: *reads, AbandonAfter: *abandon, Progress: os.Stderr,
		ServerOptions: func(cfg *server.Config) { cfg.QueryPageBudget = *budget },
	})
	if err != nil {
		return err
	}
	return rep.WriteMarkdown(os.Stdout)
}
