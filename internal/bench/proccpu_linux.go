package bench

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// clockTicks is Linux's USER_HZ, the unit of /proc/<pid>/stat's CPU
// times: 100 on every architecture Go supports (sysconf(_SC_CLK_TCK)
// needs cgo).
const clockTicks = 100

// processCPU sums the user and system CPU time of the processes named
// name (their comm) that this process can see, with that of their
// children that have exited and been waited for: a database's
// short-lived workers (autovacuum, say) stay counted in their parent's
// after they exit. It reports false when there are none.
func processCPU(name string) (time.Duration, bool) {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var ticks int64
	found := false
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue // the process has gone
		}
		// pid (comm) state ppid … utime stime: comm may hold spaces and
		// parentheses, so it ends at the last ')'.
		open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
		if open < 0 || end < open || string(b[open+1:end]) != name {
			continue
		}
		fields := bytes.Fields(b[end+1:])
		// Fields 14 to 17: utime, stime, cutime, cstime.
		if len(fields) < 15 {
			continue
		}
		var sum int64
		for _, f := range fields[11:15] {
			n, err := strconv.ParseInt(string(f), 10, 64)
			if err != nil {
				sum = -1
				break
			}
			sum += n
		}
		if sum < 0 {
			continue
		}
		ticks += sum
		found = true
	}
	return time.Duration(ticks) * time.Second / clockTicks, found
}
