// Package progress reports how far a long command (import, export,
// backup, restore) has come: on a terminal, one line redrawn in place
// with a bar; otherwise, such as in CI logs, a plain line now and then.
package progress

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/ebbdb/ebb/internal/clock"
)

// Meter counts items and bytes done against optional totals and reports
// them on its writer. Its methods are safe for concurrent use.
type Meter struct {
	what     string
	out      io.Writer
	terminal bool
	every    time.Duration
	now      func() time.Time

	mu sync.Mutex
	// All below are guarded by mu.
	items, bytes           int64
	totalItems, totalBytes int64 // 0: unknown
	start, last            time.Time
}

// New returns a meter for what ("export shop/carts", say) reporting on w,
// with a redrawn bar when w is a terminal.
func New(w io.Writer, what string) *Meter {
	m := &Meter{what: what, out: w, now: clock.NewSystem().Now}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			m.terminal = true
		}
	}
	m.every = 5 * time.Second
	if m.terminal {
		m.every = 200 * time.Millisecond
	}
	m.start = m.now()
	m.last = m.start
	return m
}

// SetTotals sets how many items and bytes the work holds (0: unknown),
// for the bar and the time left.
func (m *Meter) SetTotals(items, bytes int64) {
	m.mu.Lock()
	m.totalItems, m.totalBytes = items, bytes
	m.mu.Unlock()
}

// Add counts items and bytes done, and reports if it is time to.
func (m *Meter) Add(items, bytes int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.items += items
	m.bytes += bytes
	complete := (m.totalItems > 0 && m.items >= m.totalItems) || (m.totalBytes > 0 && m.bytes >= m.totalBytes)
	if now := m.now(); now.Sub(m.last) >= m.every && !complete { // Done reports the end
		m.last = now
		m.reportLocked(now, false)
	}
}

// Done reports the final figures, with note (what was skipped, say)
// when it is not empty.
func (m *Meter) Done(note string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reportLocked(m.now(), true)
	if note != "" {
		fmt.Fprintf(m.out, "%s: %s\n", m.what, note)
	}
}

// REQUIRES: m.mu held.
func (m *Meter) reportLocked(now time.Time, final bool) {
	elapsed := now.Sub(m.start)
	secs := max(elapsed.Seconds(), 1e-3)
	var b strings.Builder
	b.WriteString(m.what)
	b.WriteString(": ")
	frac := -1.0
	switch {
	case m.totalBytes > 0:
		frac = float64(m.bytes) / float64(m.totalBytes)
	case m.totalItems > 0:
		frac = float64(m.items) / float64(m.totalItems)
	}
	if m.terminal && frac >= 0 {
		const width = 24
		filled := min(width, int(frac*width))
		fmt.Fprintf(&b, "[%s%s] ", strings.Repeat("=", filled), strings.Repeat(" ", width-filled))
	}
	if m.totalItems > 0 {
		fmt.Fprintf(&b, "%d/%d items, ", m.items, m.totalItems)
	} else if m.items > 0 || m.totalBytes == 0 {
		fmt.Fprintf(&b, "%d items, ", m.items)
	}
	fmt.Fprintf(&b, "%s", Bytes(m.bytes))
	if m.totalBytes > 0 {
		fmt.Fprintf(&b, "/%s", Bytes(m.totalBytes))
	}
	fmt.Fprintf(&b, ", %s/s", Bytes(int64(float64(m.bytes)/secs)))
	if m.items > 0 {
		fmt.Fprintf(&b, " (%.0f items/s)", float64(m.items)/secs)
	}
	if final {
		fmt.Fprintf(&b, " in %s", elapsed.Round(time.Millisecond))
	} else if frac > 0 && frac < 1 {
		left := time.Duration(float64(elapsed) * (1 - frac) / frac)
		fmt.Fprintf(&b, ", %s left", left.Round(time.Second))
	}
	switch {
	case m.terminal && final:
		fmt.Fprintf(m.out, "\r\033[K%s\n", b.String())
	case m.terminal:
		fmt.Fprintf(m.out, "\r\033[K%s", b.String())
	default:
		fmt.Fprintln(m.out, b.String())
	}
}

// Bytes formats n bytes for people: 512 B, 1.5 KiB, 20.0 MiB.
func Bytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTP"[exp])
}
