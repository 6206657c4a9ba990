package bench

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// WriteMarkdown writes the report as Markdown: a sentence on where and
// how it was measured, the workload table, and the disk and memory
// figures.
func (r Report) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Measured on %s. Ebb ran on %s; each workload ran for %s against each target, in %d alternating rounds after a warm-up.\n\n", r.Machine, r.Storage, r.Limit, r.Rounds)
	if len(r.Results) > 0 {
		b.WriteString("| Workload | Ebb ops/s | Ceiling ops/s | Ebb / ceiling | Rounds | Target | Ebb p50 | Ebb p99 | Ceiling p50 | Ceiling p99 |\n")
		b.WriteString("|---|--:|--:|--:|--:|---|--:|--:|--:|--:|\n")
		for _, res := range r.Results {
			lo, hi := res.RatioSpread()
			fmt.Fprintf(&b, "| %s (`%s`) | %s | %s | %.0f%% | %.0f–%.0f%% | %s | %s | %s | %s | %s |\n",
				res.Workload.Title, res.Workload.Name,
				thousands(res.Ebb.OpsPerSec()), thousands(res.Ceiling.OpsPerSec()), 100*res.Ratio(), 100*lo, 100*hi,
				target(res), fmtLatency(res.Ebb.P50), fmtLatency(res.Ebb.P99),
				fmtLatency(res.Ceiling.P50), fmtLatency(res.Ceiling.P99))
		}
		b.WriteString("\n")
	}
	durable := false
	for _, res := range r.Results {
		durable = durable || res.DurableCeiling != nil
	}
	if durable {
		b.WriteString("Durable writes against the durable ceiling, a stub that appends each write to a log and waits for its fdatasync (with group commit) before answering, through the same SDK, TLS and HTTP/2:\n\n")
		b.WriteString("| Workload | Ebb ops/s | Durable ceiling ops/s | Ebb / durable ceiling | Ebb p50 | Ebb p99 | Durable ceiling p50 | Durable ceiling p99 |\n")
		b.WriteString("|---|--:|--:|--:|--:|--:|--:|--:|\n")
		for _, res := range r.Results {
			if d := res.DurableCeiling; d != nil {
				fmt.Fprintf(&b, "| %s (`%s`) | %s | %s | %.0f%% | %s | %s | %s | %s |\n",
					res.Workload.Title, res.Workload.Name,
					thousands(res.Ebb.OpsPerSec()), thousands(d.OpsPerSec()), 100*res.DurableRatio(),
					fmtLatency(res.Ebb.P50), fmtLatency(res.Ebb.P99), fmtLatency(d.P50), fmtLatency(d.P99))
			}
		}
		b.WriteString("\n")
	}
	if f := r.Fsync; f != nil {
		fmt.Fprintf(&b, "- Disk: appending 4 KB and syncing it takes p50 %s, p99 %s (%d samples), so one writer that waits for every write to be durable cannot exceed about %s writes/s on this disk, before any request handling.",
			fmtLatency(f.P50), fmtLatency(f.P99), f.Samples, thousands(f.MaxSequentialWrites()))
		for _, res := range r.Results {
			if res.Workload.Name == "upsert" && f.MaxSequentialWrites() > 0 {
				fmt.Fprintf(&b, " Sequential upserts reach %.0f%% of that bound", 100*res.Ebb.OpsPerSec()/f.MaxSequentialWrites())
				if res.DurableCeiling != nil {
					b.WriteString("; the durable ceiling is the same bound measured end to end")
				}
				b.WriteString(".")
			}
		}
		b.WriteString("\n")
	}
	if m := r.Memory; m != nil {
		reset := ""
		if !m.PeakReset {
			reset = " (the peak could not be reset, so it covers the whole process)"
		}
		fmt.Fprintf(&b, "- Memory: peak RSS %s after loading %s 1 KB items into Ebb on %s%s; RSS was %s before Ebb started and %s after the load, %s of it pages mapped from the executable and other files. The SDK client runs in the same process, so this is an upper bound on Ebb's own.\n",
			mib(m.PeakRSS), thousands(float64(m.Items)), m.Storage, reset, mib(m.BaselineRSS), mib(m.RSS), mib(m.FileRSS))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// target renders a workload's goal and whether it was met.
func target(res Result) string {
	if res.Workload.Target == 0 {
		return "—"
	}
	verdict := "met"
	if res.Ratio() < res.Workload.Target {
		verdict = "missed"
	}
	return fmt.Sprintf("≥ %.0f%% (%s)", 100*res.Workload.Target, verdict)
}

// fmtLatency renders a latency in milliseconds.
func fmtLatency(d time.Duration) string {
	ms := float64(d) / float64(time.Millisecond)
	switch {
	case ms >= 100:
		return strconv.FormatFloat(ms, 'f', 0, 64) + " ms"
	case ms >= 10:
		return strconv.FormatFloat(ms, 'f', 1, 64) + " ms"
	}
	return strconv.FormatFloat(ms, 'f', 2, 64) + " ms"
}

// thousands renders a rate rounded to a whole number with thousands
// separators: 13512.4 → "13,512".
func thousands(v float64) string {
	s := strconv.FormatFloat(v, 'f', 0, 64)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
