package bench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"slices"
	"time"

	"github.com/ebbdb/ebb/internal/server"
)

// Options configure Run.
type Options struct {
	// Limit is how long each workload runs against each target; the zero
	// value means 10 seconds.
	Limit Limit
	// Warmup runs before each timed run and is not counted; the zero value
	// means a tenth of Limit, at most a second.
	Warmup Limit
	// Rounds splits each timed run into this many rounds that alternate
	// between the targets (ceiling, Ebb, durable ceiling), so that
	// background load on the machine falls on all alike; 0 means 5.
	Rounds int
	// Memory runs Ebb on in-memory storage instead of durable Pebble.
	Memory bool
	// Workloads names the workloads to run; empty means DefaultWorkloads.
	Workloads []string
	// TempDir is where Ebb's data directories and the fsync probe file
	// go; empty means os.TempDir.
	TempDir string
	// FsyncSamples is the number of fsyncs to time; 0 means 1000 and a
	// negative number skips the measurement (also skipped with Memory).
	FsyncSamples int
	// RSSItems is how many items to load for the memory figure; 0 means
	// 10,000 and a negative number skips it.
	RSSItems int
	// Progress, if set, receives a line per step.
	Progress io.Writer
}

// Report is what Run measured.
type Report struct {
	Machine Machine
	// Storage describes Ebb's storage in this run.
	Storage string
	Limit   Limit
	Rounds  int
	Results []Result
	// Fsync and Memory are nil when skipped.
	Fsync  *FsyncStats
	Memory *MemoryStats
}

// Result is one workload against each target.
type Result struct {
	Workload     Workload
	Ebb, Ceiling Stats
	// DurableCeiling is the workload against the durable stub (see
	// StartDurableStub); nil unless the workload writes and Ebb ran on
	// durable storage.
	DurableCeiling *Stats
	// RoundRatios are Ebb's throughput as a share of the ceiling's in
	// each round: their spread is how far one run's Ratio can be trusted
	// on this machine.
	RoundRatios []float64
}

// RatioSpread is the lowest and highest of RoundRatios (0, 0 when none).
func (r Result) RatioSpread() (lo, hi float64) {
	if len(r.RoundRatios) == 0 {
		return 0, 0
	}
	return slices.Min(r.RoundRatios), slices.Max(r.RoundRatios)
}

// DurableRatio is Ebb's throughput as a share of the durable ceiling's.
func (r Result) DurableRatio() float64 {
	if r.DurableCeiling != nil && r.DurableCeiling.OpsPerSec() > 0 {
		return r.Ebb.OpsPerSec() / r.DurableCeiling.OpsPerSec()
	}
	return 0
}

// Ratio is Ebb's throughput as a share of the ceiling's.
func (r Result) Ratio() float64 {
	if c := r.Ceiling.OpsPerSec(); c > 0 {
		return r.Ebb.OpsPerSec() / c
	}
	return 0
}

// Run measures the memory of a loaded Ebb and the disk, then runs each
// workload against a fresh in-process Ebb and the ceiling stubs, in
// alternating rounds.
func Run(ctx context.Context, opts Options) (Report, error) {
	workloads, err := Lookup(opts.Workloads)
	if err != nil {
		return Report{}, err
	}
	if opts.Limit == (Limit{}) {
		opts.Limit.Duration = 10 * time.Second
	}
	if opts.Warmup == (Limit{}) {
		opts.Warmup = Limit{Duration: min(opts.Limit.Duration/10, time.Second), Count: opts.Limit.Count / 10}
	}
	if opts.Rounds <= 0 {
		opts.Rounds = 5
	}
	if opts.Limit.Count > 0 {
		opts.Rounds = min(opts.Rounds, opts.Limit.Count)
	}
	if opts.TempDir == "" {
		opts.TempDir = os.TempDir()
	}
	if opts.FsyncSamples == 0 {
		opts.FsyncSamples = 1000
	}
	if opts.RSSItems == 0 {
		opts.RSSItems = 10_000
	}
	progress := opts.Progress
	if progress == nil {
		progress = io.Discard
	}
	rep := Report{Machine: ThisMachine(), Storage: storageName(opts.Memory), Limit: opts.Limit, Rounds: opts.Rounds}

	// The memory figure comes first, while the process's peak RSS still
	// reflects nothing else (it is reset too, where Linux allows).
	if opts.RSSItems > 0 {
		fmt.Fprintf(progress, "memory: loading %d items into Ebb on %s\n", opts.RSSItems, rep.Storage)
		m, err := measureMemory(ctx, opts)
		if err != nil {
			return rep, fmt.Errorf("memory: %w", err)
		}
		rep.Memory = &m
		fmt.Fprintf(progress, "memory: peak RSS %s\n", mib(m.PeakRSS))
	}
	if opts.FsyncSamples > 0 && !opts.Memory {
		fmt.Fprintf(progress, "fsync: %d × 4 KB in %s\n", opts.FsyncSamples, opts.TempDir)
		f, err := MeasureFsync(opts.TempDir, opts.FsyncSamples)
		if err != nil {
			return rep, fmt.Errorf("fsync: %w", err)
		}
		rep.Fsync = &f
		fmt.Fprintf(progress, "fsync: p50 %s, p99 %s\n", fmtLatency(f.P50), fmtLatency(f.P99))
	}
	for _, w := range workloads {
		fmt.Fprintf(progress, "%s: %d rounds…", w.Name, opts.Rounds)
		res, err := runSideBySide(ctx, w, opts)
		if err != nil {
			return rep, fmt.Errorf("%s: %w", w.Name, err)
		}
		fmt.Fprintf(progress, " ceiling %.0f ops/s, Ebb %.0f ops/s (%.0f%%)", res.Ceiling.OpsPerSec(), res.Ebb.OpsPerSec(), 100*res.Ratio())
		if d := res.DurableCeiling; d != nil {
			fmt.Fprintf(progress, "; durable ceiling %.0f ops/s (Ebb %.0f%%)", d.OpsPerSec(), 100*res.DurableRatio())
		}
		fmt.Fprintln(progress)
		rep.Results = append(rep.Results, res)
	}
	return rep, nil
}

func storageName(memory bool) string {
	if memory {
		return "in-memory Pebble"
	}
	return "durable Pebble (every write synced to the WAL)"
}

// StartEbb starts a fresh Ebb on a loopback port with the given storage;
// dir is its data directory unless memory is set. The caller shuts it
// down.
func StartEbb(ctx context.Context, dir string, memory bool) (*server.Server, error) {
	return server.Start(ctx, server.Config{
		Listen:  "127.0.0.1:0",
		DataDir: dir,
		Memory:  memory,
		Logger:  slog.New(slog.DiscardHandler),
	})
}

// withEbb runs fn against a fresh Ebb in a fresh temporary directory and
// removes both afterwards.
func withEbb(ctx context.Context, opts Options, fn func(endpoint string) error) error {
	dir, err := os.MkdirTemp(opts.TempDir, "ebb-bench-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	srv, err := StartEbb(ctx, dir, opts.Memory)
	if err != nil {
		return err
	}
	err = fn(srv.URL)
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if serr := srv.Shutdown(shutdownCtx); err == nil {
		err = serr
	}
	return err
}

// side is one target of a side-by-side run.
type side struct {
	name     string
	endpoint string
	op       func(context.Context, int) error
	rounds   rounds
}

// runSideBySide starts the stubs and a fresh Ebb, prepares the
// workload's fixture on each, warms them up and then times them in
// alternating rounds.
func runSideBySide(ctx context.Context, w Workload, opts Options) (res Result, err error) {
	res.Workload = w
	var (
		stubs []*Stub
		dirs  []string
	)
	defer func() {
		// The stubs close before their directories go.
		defer func() {
			for _, dir := range dirs {
				os.RemoveAll(dir)
			}
		}()
		shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		for _, stub := range stubs {
			if cerr := stub.Close(shutdownCtx); err == nil {
				err = cerr
			}
			if n, first := stub.Unexpected(); err == nil && n > 0 {
				err = fmt.Errorf("a ceiling stub answered %d unexpected requests with 404, first %s", n, first)
			}
		}
	}()
	stub, err := StartStub()
	if err != nil {
		return res, err
	}
	stubs = append(stubs, stub)
	sides := []*side{{name: "ceiling", endpoint: stub.URL}, {name: "Ebb"}}
	if w.Writes && !opts.Memory {
		dir, err := os.MkdirTemp(opts.TempDir, "ebb-bench-stub-*")
		if err != nil {
			return res, err
		}
		dirs = append(dirs, dir)
		durable, err := StartDurableStub(dir)
		if err != nil {
			return res, err
		}
		stubs = append(stubs, durable)
		sides = append(sides, &side{name: "durable ceiling", endpoint: durable.URL})
	}
	return res, withEbb(ctx, opts, func(ebbURL string) error {
		sides[1].endpoint = ebbURL
		for _, s := range sides {
			client, closeIdle, err := NewClient(s.endpoint)
			if err != nil {
				return err
			}
			// Runs before the servers shut down, which then need not
			// wait for the client to hang up.
			defer closeIdle()
			f, err := NewFixture(ctx, client, "bench")
			if err != nil {
				return fmt.Errorf("%s: %w", s.name, err)
			}
			if err := f.Load(ctx, w.Preload, concurrentClients); err != nil {
				return fmt.Errorf("%s: %w", s.name, err)
			}
			s.op = w.Op(f)
			var warm Recorder
			if _, err := measureInto(ctx, &warm, 0, w.Concurrency, opts.Warmup, s.op); err != nil {
				return fmt.Errorf("%s: warm-up: %w", s.name, err)
			}
			s.rounds.next = warm.Len()
		}
		for r := range opts.Rounds {
			// Rotate which side goes first, so none always runs right
			// after another's garbage or connection churn.
			for k := range sides {
				s := sides[(r+k)%len(sides)]
				if err := s.rounds.run(ctx, w.Concurrency, roundLimit(opts.Limit, r, opts.Rounds), s.op); err != nil {
					return fmt.Errorf("%s: %w", s.name, err)
				}
			}
		}
		for r, ceiling := range sides[0].rounds.perSec {
			if ceiling > 0 {
				res.RoundRatios = append(res.RoundRatios, sides[1].rounds.perSec[r]/ceiling)
			}
		}
		res.Ceiling = sides[0].rounds.stats()
		res.Ebb = sides[1].rounds.stats()
		if len(sides) > 2 {
			st := sides[2].rounds.stats()
			res.DurableCeiling = &st
		}
		return nil
	})
}

// roundLimit is round r's share of limit split into n rounds.
func roundLimit(limit Limit, r, n int) Limit {
	if limit.Count > 0 {
		c := limit.Count / n
		if r < limit.Count%n {
			c++
		}
		return Limit{Count: c}
	}
	return Limit{Duration: limit.Duration / time.Duration(n)}
}

// measureMemory loads opts.RSSItems items into a fresh Ebb through the
// SDK and reads the process's peak RSS.
func measureMemory(ctx context.Context, opts Options) (MemoryStats, error) {
	m := MemoryStats{Items: opts.RSSItems, Storage: storageName(opts.Memory)}
	runtime.GC()
	var err error
	if m.BaselineRSS, err = procStatus("VmRSS"); err != nil {
		return m, err
	}
	m.PeakReset = resetPeakRSS()
	err = withEbb(ctx, opts, func(endpoint string) error {
		client, closeIdle, err := NewClient(endpoint)
		if err != nil {
			return err
		}
		defer closeIdle()
		f, err := NewFixture(ctx, client, "rss")
		if err != nil {
			return err
		}
		if err := f.Load(ctx, opts.RSSItems, concurrentClients); err != nil {
			return err
		}
		if m.PeakRSS, err = procStatus("VmHWM"); err != nil {
			return err
		}
		if m.RSS, err = procStatus("VmRSS"); err != nil {
			return err
		}
		m.FileRSS, err = procStatus("RssFile")
		return err
	})
	return m, err
}
