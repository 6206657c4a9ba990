package engine

import "github.com/ebbdb/ebb/internal/engine/dberr"

// The engine's client errors are dberr's, named here too so the gateway
// speaks only to the engine.
type (
	Error = dberr.Error
	Kind  = dberr.Kind
)

const (
	KindBadRequest         = dberr.KindBadRequest
	KindNotFound           = dberr.KindNotFound
	KindConflict           = dberr.KindConflict
	KindPreconditionFailed = dberr.KindPreconditionFailed
	KindTooLarge           = dberr.KindTooLarge
	KindTooManyRequests    = dberr.KindTooManyRequests
	KindUnavailable        = dberr.KindUnavailable
	KindNotImplemented     = dberr.KindNotImplemented
	KindGone               = dberr.KindGone
	KindNotModified        = dberr.KindNotModified
	KindRequestTimeout     = dberr.KindRequestTimeout
	KindForbidden          = dberr.KindForbidden
	KindUnauthorized       = dberr.KindUnauthorized
)

var (
	ErrNotFound           = dberr.ErrNotFound
	ErrConflict           = dberr.ErrConflict
	ErrPreconditionFailed = dberr.ErrPreconditionFailed
	ErrStoreUnavailable   = dberr.ErrStoreUnavailable
)

// IsKind reports whether err is an engine error of kind k.
func IsKind(err error, k Kind) bool { return dberr.IsKind(err, k) }

// ClientError returns err as the client is to see it (see dberr).
func ClientError(err error) error { return dberr.ClientError(err) }
