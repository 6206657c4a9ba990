package bench

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/ebbdb/ebb/internal/clock"
)

// Machine describes where a report was measured.
type Machine struct {
	CPU                string
	NumCPU, GOMAXPROCS int
	OS, Arch, Go       string
	// Cgo is whether the binary was built with cgo: Pebble then keeps its
	// memtables and block cache in C memory, and without it on the Go
	// heap (storage/pebble's heap tuner), which changes the memory
	// figure.
	Cgo bool
}

// ThisMachine describes the machine the process runs on.
func ThisMachine() Machine {
	m := Machine{NumCPU: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0), OS: runtime.GOOS, Arch: runtime.GOARCH, Go: runtime.Version()}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			if s.Key == "CGO_ENABLED" {
				m.Cgo = s.Value == "1"
			}
		}
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.Lines(string(b)) {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	return m
}

func (m Machine) String() string {
	cpu := m.CPU
	if cpu == "" {
		cpu = "unknown CPU"
	}
	build := "without cgo"
	if m.Cgo {
		build = "with cgo"
	}
	return fmt.Sprintf("%s, %d cores (GOMAXPROCS %d), %s/%s, %s, built %s", cpu, m.NumCPU, m.GOMAXPROCS, m.OS, m.Arch, m.Go, build)
}

// FsyncStats is the latency of making a 4 KB append durable.
type FsyncStats struct {
	Dir      string
	Samples  int
	P50, P99 time.Duration
}

// MaxSequentialWrites is the bound fsync puts on a single writer that
// waits for every write to be durable: one sync per operation.
func (s FsyncStats) MaxSequentialWrites() float64 {
	if s.P50 <= 0 {
		return 0
	}
	return float64(time.Second) / float64(s.P50)
}

// fsyncBlock is the size of one measured write, about what a WAL commit
// of a 1 KB item with its index and log entries is.
const fsyncBlock = 4 << 10

// MeasureFsync appends a 4 KB block to a fresh file in dir and makes it
// durable (fdatasync on Linux, as Pebble's WAL does; fsync elsewhere), n
// times, and returns the latency percentiles. A fresh Ebb appends to a
// fresh WAL in the same way.
func MeasureFsync(dir string, n int) (FsyncStats, error) {
	f, err := os.CreateTemp(dir, "ebb-fsync-*")
	if err != nil {
		return FsyncStats{}, err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	block := bytes.Repeat([]byte{0xeb}, fsyncBlock)
	// Measuring real elapsed time is the point; see the package doc.
	clk := clock.NewSystem()
	var rec Recorder
	for range n {
		t0 := clk.Elapsed()
		if _, err := f.Write(block); err != nil {
			return FsyncStats{}, err
		}
		if err := syncData(f); err != nil {
			return FsyncStats{}, fmt.Errorf("sync %s: %w", f.Name(), err)
		}
		rec.Add(clk.Elapsed() - t0)
	}
	st := rec.Stats(0)
	return FsyncStats{Dir: dir, Samples: st.Ops, P50: st.P50, P99: st.P99}, nil
}

// procStatus returns a memory field of /proc/self/status ("VmHWM",
// "VmRSS") in bytes.
func procStatus(field string) (int64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || k != field {
			continue
		}
		fields := strings.Fields(v)
		if len(fields) != 2 || fields[1] != "kB" {
			return 0, fmt.Errorf("/proc/self/status: unexpected %s line %q", field, sc.Text())
		}
		kb, err := strconv.ParseInt(fields[0], 10, 64)
		return kb << 10, err
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("/proc/self/status has no %s", field)
}

// resetPeakRSS sets VmHWM back to the current RSS (Linux 4.0+), so a
// later reading covers only what happened since. It reports whether it
// could.
func resetPeakRSS() bool {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}

// MemoryStats is the process's memory after loading items into an
// in-process Ebb. The benchmark client runs in the same process, so the
// figures are an upper bound on Ebb's own.
type MemoryStats struct {
	Items   int
	Storage string
	// BaselineRSS is VmRSS before Ebb started.
	BaselineRSS int64
	// PeakRSS is VmHWM after the load: the most resident memory the
	// process used, since the reset if PeakReset.
	PeakRSS   int64
	PeakReset bool
	// RSS is VmRSS after the load, and FileRSS the part of it that is
	// pages mapped from files (RssFile), almost all of them the
	// executable's own: they count in RSS, but the kernel can drop and
	// reread them, and how many stay resident depends on the kernel and
	// the page cache more than on Ebb.
	RSS, FileRSS int64
}

// mib formats a byte count in MiB.
func mib(n int64) string { return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MiB" }
