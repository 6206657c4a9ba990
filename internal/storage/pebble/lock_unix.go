//go:build !windows

package pebble

import (
	"errors"
	"syscall"
)

// lockHeld says err is the refusal of a lock another process holds:
// Pebble locks its directory with flock, which answers EWOULDBLOCK.
func lockHeld(err error) bool {
	return errors.Is(err, syscall.EWOULDBLOCK) || errors.Is(err, syscall.EAGAIN)
}
