//go:build !linux

package bench

import "time"

// processCPU needs Linux's /proc; elsewhere the database's CPU is not
// reported.
func processCPU(string) (time.Duration, bool) { return 0, false }
