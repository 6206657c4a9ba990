package bench

import (
	"os"
	"syscall"
)

// syncData makes f's data durable the way Pebble's WAL does on Linux.
func syncData(f *os.File) error { return syscall.Fdatasync(int(f.Fd())) }
