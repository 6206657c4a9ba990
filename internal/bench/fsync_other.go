//go:build !linux

package bench

import "os"

// syncData makes f's data durable.
func syncData(f *os.File) error { return f.Sync() }
