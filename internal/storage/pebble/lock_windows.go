//go:build windows

package pebble

import (
	"errors"
	"syscall"
)

// lockHeld says err is the refusal of a lock another process holds:
// Pebble opens its LOCK file for exclusive use, which Windows refuses with
// a sharing or lock violation.
func lockHeld(err error) bool {
	const errorSharingViolation, errorLockViolation = syscall.Errno(32), syscall.Errno(33)
	return errors.Is(err, errorSharingViolation) || errors.Is(err, errorLockViolation)
}
