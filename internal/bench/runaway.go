package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/ebbdb/ebb/internal/clock"
	"github.com/ebbdb/ebb/internal/engine"
	"github.com/ebbdb/ebb/internal/server"
)

// The runaway benchmark measures what one expensive query costs the
// server and everyone else on it, through the Go SDK:
//
//   - Join: a three-way JOIN over one document's 1,000-element array
//     (10⁹ combinations, none passing WHERE): the first page's wall time
//     and process CPU, then every page until the query is done.
//   - IN lists: a query with 100,000 values in an IN list (its text is
//     longer than the service's 512 KB), one at the service's limit of
//     16,000 values, and one value over it.
//   - Point reads of 1 KB items in another container, sequential: alone;
//     while a client drains the JOIN's pages; and while a client that
//     gives up on each page after AbandonAfter sends it again. After each
//     of the last two the runaway client stops and the benchmark watches
//     how long the server keeps computing for nobody.
//
// The server runs in the benchmark's process, so process CPU is the
// server's plus the client's; during one query the client only waits.

// RunawayOptions configure RunRunaway.
type RunawayOptions struct {
	// TempDir holds the server's data directory; empty is os.TempDir.
	TempDir string
	// Memory runs Ebb on in-memory storage instead of durable Pebble.
	Memory bool
	// Reads is how long each point-read phase runs; zero means 10 s.
	Reads time.Duration
	// AbandonAfter is how long the abandoning client waits for a page;
	// zero means 2 s.
	AbandonAfter time.Duration
	// ServerOptions, if set, adjusts the server's configuration (the
	// query page budget, for instance).
	ServerOptions func(*server.Config)
	Progress      io.Writer
}

// RunawayReport is what RunRunaway measured.
type RunawayReport struct {
	Machine Machine
	Storage string
	// PageBudget is the server's query page budget.
	PageBudget time.Duration
	// JoinQuery is the query text of the JOIN.
	JoinQuery string
	// FirstPage is the JOIN's first page; Drain every page of it.
	FirstPage QueryCost
	Drain     DrainCost
	InLists   []InListCost
	Reads     struct {
		Duration, AbandonAfter time.Duration
		// Alone, Draining and Abandoning are the point reads' figures.
		Alone, Draining, Abandoning Stats
		// AbandonedQueries is how many queries the abandoning client
		// gave up on.
		AbandonedQueries int
		// AfterDraining and AfterAbandoning are how long the server
		// kept computing once the runaway client had stopped.
		AfterDraining, AfterAbandoning Busy
	}
}

// QueryCost is one query request as the client saw it.
type QueryCost struct {
	// Status is the HTTP status (200 on success).
	Status int
	// Message is the start of the error's message, if any.
	Message string
	// Took is the wall time of the SDK call; CPU the process CPU
	// meanwhile.
	Took, CPU time.Duration
	// Continuation says the page came back with one.
	Continuation bool
	Rows         int
}

// DrainCost is a query read to its end, page by page.
type DrainCost struct {
	Pages, Rows int
	Took, CPU   time.Duration
	// MaxPage is the longest page's wall time.
	MaxPage time.Duration
	// Err is the error that ended the drain early, if any.
	Err string
}

// InListCost is one IN-list query.
type InListCost struct {
	Values    int
	TextBytes int
	QueryCost
}

// Busy is how long the server kept computing after its clients stopped.
type Busy struct {
	// Took is the time until a quarter second passed with the process
	// using under a tenth of a core; CPU is what it used until then.
	Took, CPU time.Duration
	// Settled is false when it was still busy after a minute.
	Settled bool
}

const (
	runawayArray = 1000
	// runawayQuery never passes WHERE: every one of the 10⁹
	// combinations is evaluated and none is returned.
	runawayQuery = "SELECT VALUE [a, b, d] FROM c JOIN a IN c.arr JOIN b IN c.arr JOIN d IN c.arr WHERE a + b + d = -1"
)

func (o RunawayOptions) progress(format string, args ...any) {
	if o.Progress != nil {
		fmt.Fprintf(o.Progress, format+"\n", args...)
	}
}

// RunRunaway runs the runaway-query benchmark on a fresh Ebb.
func RunRunaway(ctx context.Context, opts RunawayOptions) (RunawayReport, error) {
	if opts.Reads == 0 {
		opts.Reads = 10 * time.Second
	}
	if opts.AbandonAfter == 0 {
		opts.AbandonAfter = 2 * time.Second
	}
	if opts.TempDir == "" {
		opts.TempDir = os.TempDir()
	}
	rep := RunawayReport{Machine: ThisMachine(), Storage: storageName(opts.Memory), JoinQuery: runawayQuery}
	rep.Reads.Duration, rep.Reads.AbandonAfter = opts.Reads, opts.AbandonAfter

	dir, err := os.MkdirTemp(opts.TempDir, "ebb-runaway-*")
	if err != nil {
		return rep, err
	}
	defer os.RemoveAll(dir)
	cfg := server.Config{Listen: "127.0.0.1:0", DataDir: dir, Memory: opts.Memory, Logger: slog.New(slog.DiscardHandler)}
	if opts.ServerOptions != nil {
		opts.ServerOptions(&cfg)
	}
	rep.PageBudget = cmp.Or(cfg.QueryPageBudget, engine.DefaultQueryPageBudget)
	srv, err := server.Start(ctx, cfg)
	if err != nil {
		return rep, err
	}
	client, closeIdle, err := NewClient(srv.URL)
	if err != nil {
		return rep, err
	}
	defer func() {
		closeIdle()
		// Queries the server is still computing for clients that went
		// away delay the shutdown; the figures are taken by then.
		shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		srv.Shutdown(shutdownCtx)
	}()

	fg, err := NewFixture(ctx, client, "foreground")
	if err != nil {
		return rep, err
	}
	if err := fg.Load(ctx, preload, concurrentClients); err != nil {
		return rep, err
	}
	c, err := runawayContainer(ctx, client)
	if err != nil {
		return rep, err
	}
	pk := azcosmos.NewPartitionKeyString("r")
	read := func(ctx context.Context, i int) error { return fg.Read(ctx, i) }

	opts.progress("runaway: first page of %s", runawayQuery)
	rep.FirstPage = firstPage(ctx, c, pk, runawayQuery)
	opts.progress("runaway: first page %v, status %d, continuation %v", rep.FirstPage.Took.Round(time.Millisecond), rep.FirstPage.Status, rep.FirstPage.Continuation)
	if _, err := waitIdle(ctx); err != nil {
		return rep, err
	}
	opts.progress("runaway: every page")
	rep.Drain = drain(ctx, c, pk, runawayQuery)
	opts.progress("runaway: %d pages in %v", rep.Drain.Pages, rep.Drain.Took.Round(time.Millisecond))

	for _, n := range []int{100_000, 16_000, 16_001} {
		text := inListQuery(n)
		opts.progress("runaway: IN list of %d values (%d bytes of query text)", n, len(text))
		cost := InListCost{Values: n, TextBytes: len(text), QueryCost: firstPage(ctx, c, pk, text)}
		rep.InLists = append(rep.InLists, cost)
		opts.progress("runaway: status %d in %v", cost.Status, cost.Took.Round(time.Millisecond))
		if _, err := waitIdle(ctx); err != nil {
			return rep, err
		}
	}

	opts.progress("runaway: point reads alone for %v", opts.Reads)
	if rep.Reads.Alone, err = Measure(ctx, 1, Limit{Duration: opts.Reads}, read); err != nil {
		return rep, err
	}

	opts.progress("runaway: point reads while a client drains the JOIN")
	rep.Reads.Draining, _, rep.Reads.AfterDraining, err = readsBeside(ctx, opts.Reads, read, func(ctx context.Context) int {
		for ctx.Err() == nil {
			drain(ctx, c, pk, runawayQuery)
		}
		return 0
	})
	if err != nil {
		return rep, err
	}

	opts.progress("runaway: point reads while a client gives up on the JOIN after %v, again and again", opts.AbandonAfter)
	rep.Reads.Abandoning, rep.Reads.AbandonedQueries, rep.Reads.AfterAbandoning, err = readsBeside(ctx, opts.Reads, read, func(ctx context.Context) int {
		n := 0
		for ctx.Err() == nil {
			qctx, cancel := context.WithTimeout(ctx, opts.AbandonAfter)
			pager := c.NewQueryItemsPager(runawayQuery, pk, nil)
			_, err := pager.NextPage(qctx)
			if err != nil && qctx.Err() != nil {
				n++
			}
			cancel()
		}
		return n
	})
	return rep, err
}

// runawayContainer creates the container of the runaway document and
// writes it: one item whose arr holds runawayArray numbers.
func runawayContainer(ctx context.Context, client *azcosmos.Client) (*azcosmos.ContainerClient, error) {
	if _, err := client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "runaway"}, nil); err != nil {
		return nil, err
	}
	db, err := client.NewDatabase("runaway")
	if err != nil {
		return nil, err
	}
	props := azcosmos.ContainerProperties{ID: "docs", PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}}}
	if _, err := db.CreateContainer(ctx, props, nil); err != nil {
		return nil, err
	}
	c, err := db.NewContainer("docs")
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	b.WriteString(`{"id":"runaway","pk":"r","arr":[`)
	for i := range runawayArray {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(i))
	}
	b.WriteString("]}")
	_, err = c.CreateItem(ctx, azcosmos.NewPartitionKeyString("r"), []byte(b.String()), nil)
	return c, err
}

// inListQuery is a query whose IN list holds the numbers 0…n-1.
func inListQuery(n int) string {
	var b strings.Builder
	b.WriteString("SELECT * FROM c WHERE c.v IN (")
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(i))
	}
	b.WriteString(")")
	return b.String()
}

// firstPage sends one page of query and measures it.
func firstPage(ctx context.Context, c *azcosmos.ContainerClient, pk azcosmos.PartitionKey, query string) QueryCost {
	sys := clock.NewSystem()
	cpu0, t0 := cpuTime(), sys.Elapsed()
	pager := c.NewQueryItemsPager(query, pk, nil)
	resp, err := pager.NextPage(ctx)
	cost := QueryCost{Took: sys.Elapsed() - t0, CPU: cpuTime() - cpu0, Status: 200}
	if err != nil {
		cost.Status, cost.Message = statusOf(err)
		return cost
	}
	cost.Rows = len(resp.Items)
	cost.Continuation = resp.ContinuationToken != nil
	return cost
}

// drain reads every page of query and measures them.
func drain(ctx context.Context, c *azcosmos.ContainerClient, pk azcosmos.PartitionKey, query string) DrainCost {
	sys := clock.NewSystem()
	cpu0, t0 := cpuTime(), sys.Elapsed()
	var d DrainCost
	pager := c.NewQueryItemsPager(query, pk, nil)
	for pager.More() {
		p0 := sys.Elapsed()
		resp, err := pager.NextPage(ctx)
		if err != nil {
			status, msg := statusOf(err)
			d.Err = fmt.Sprintf("%d %s", status, msg)
			break
		}
		d.MaxPage = max(d.MaxPage, sys.Elapsed()-p0)
		d.Pages++
		d.Rows += len(resp.Items)
	}
	d.Took, d.CPU = sys.Elapsed()-t0, cpuTime()-cpu0
	return d
}

// statusOf is an SDK error's HTTP status and the start of its message:
// the server's message when the error carries the body of a Cosmos
// error ({"code":…,"message":"Message: {\"Errors\":[\"…\"]}…"}).
func statusOf(err error) (int, string) {
	msg := err.Error()
	const errorsStart = `{\"Errors\":[\"`
	if i := strings.Index(msg, errorsStart); i >= 0 {
		msg = msg[i+len(errorsStart):]
		if j := strings.Index(msg, `\"]}`); j >= 0 {
			msg = msg[:j]
		}
	}
	if len(msg) > 160 {
		msg = msg[:160] + "…"
	}
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return re.StatusCode, msg
	}
	return 0, msg
}

// readsBeside times sequential point reads for d while runaway runs on
// another goroutine, then stops runaway and waits for the server to go
// idle.
func readsBeside(ctx context.Context, d time.Duration, read func(context.Context, int) error, runaway func(context.Context) int) (Stats, int, Busy, error) {
	rctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var n int
	wg.Go(func() { n = runaway(rctx) })
	st, err := Measure(ctx, 1, Limit{Duration: d}, read)
	stop()
	wg.Wait()
	if err != nil {
		return st, n, Busy{}, err
	}
	busy, err := waitIdle(ctx)
	return st, n, busy, err
}

// waitIdle waits until the process uses under a tenth of a core over a
// quarter second, for at most a minute.
func waitIdle(ctx context.Context) (Busy, error) {
	sys := clock.NewSystem()
	cpu0, t0 := cpuTime(), sys.Elapsed()
	for sys.Elapsed()-t0 < time.Minute {
		before := cpuTime()
		tick, _ := sys.After(250 * time.Millisecond)
		select {
		case <-ctx.Done():
			return Busy{}, ctx.Err()
		case <-tick:
		}
		if cpuTime()-before < 25*time.Millisecond {
			return Busy{Took: sys.Elapsed() - t0, CPU: cpuTime() - cpu0, Settled: true}, nil
		}
	}
	return Busy{Took: sys.Elapsed() - t0, CPU: cpuTime() - cpu0}, nil
}

// WriteMarkdown prints the runaway report as docs/benchmarks.md quotes
// it.
func (r RunawayReport) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Measured on %s; Ebb on %s with a query page budget of %v.\n\n", r.Machine, r.Storage, r.PageBudget)
	fmt.Fprintf(&b, "Query: `%s` over one item whose `arr` holds %s numbers.\n\n", r.JoinQuery, thousands(runawayArray))
	b.WriteString("| Request | Outcome | Wall time | Process CPU |\n|---|---|--:|--:|\n")
	fmt.Fprintf(&b, "| JOIN, first page | %s | %s | %s |\n", r.FirstPage.outcome(), seconds(r.FirstPage.Took), seconds(r.FirstPage.CPU))
	drained := fmt.Sprintf("%d pages, %d rows, longest page %s", r.Drain.Pages, r.Drain.Rows, seconds(r.Drain.MaxPage))
	if r.Drain.Err != "" {
		drained += "; ended by " + r.Drain.Err
	}
	fmt.Fprintf(&b, "| JOIN, every page | %s | %s | %s |\n", drained, seconds(r.Drain.Took), seconds(r.Drain.CPU))
	for _, in := range r.InLists {
		fmt.Fprintf(&b, "| IN list of %s values (%s KB of text) | %s | %s | %s |\n",
			thousands(float64(in.Values)), thousands(float64(in.TextBytes)/1024), in.outcome(), seconds(in.Took), seconds(in.CPU))
	}
	fmt.Fprintf(&b, "\nSequential point reads of 1 KB items in another container, %v each:\n\n", r.Reads.Duration)
	b.WriteString("| Beside the reads | Reads | p50 | p99 | Server busy after the runaway client stopped |\n|---|--:|--:|--:|---|\n")
	fmt.Fprintf(&b, "| nothing | %d | %s | %s | — |\n", r.Reads.Alone.Ops, fmtLatency(r.Reads.Alone.P50), fmtLatency(r.Reads.Alone.P99))
	fmt.Fprintf(&b, "| a client draining the JOIN's pages | %d | %s | %s | %s |\n", r.Reads.Draining.Ops, fmtLatency(r.Reads.Draining.P50), fmtLatency(r.Reads.Draining.P99), r.Reads.AfterDraining)
	fmt.Fprintf(&b, "| a client giving up on the JOIN after %v and asking again (%d times) | %d | %s | %s | %s |\n",
		r.Reads.AbandonAfter, r.Reads.AbandonedQueries, r.Reads.Abandoning.Ops, fmtLatency(r.Reads.Abandoning.P50), fmtLatency(r.Reads.Abandoning.P99), r.Reads.AfterAbandoning)
	_, err := io.WriteString(w, b.String())
	return err
}

func (q QueryCost) outcome() string {
	if q.Status != 200 {
		return fmt.Sprintf("%d: %s", q.Status, q.Message)
	}
	s := fmt.Sprintf("200, %d rows", q.Rows)
	if q.Continuation {
		s += ", continuation"
	}
	return s
}

func (b Busy) String() string {
	s := fmt.Sprintf("%s (%s CPU)", seconds(b.Took), seconds(b.CPU))
	if !b.Settled {
		s = "still busy after " + s
	}
	return s
}

// seconds renders a duration in seconds with two decimals.
func seconds(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 2, 64) + " s" }
