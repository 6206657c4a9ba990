// Package dberr holds the errors the engine's clients see: an *Error
// with a Kind, which the gateway maps to an HTTP status and Cosmos error
// code in one table. Every package of the engine returns these, so the
// errors live below all of them. Any error that is not an *Error is an
// internal one (500).
package dberr

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/ebbdb/ebb/internal/storage"
)

// Kind classifies an engine error; the gateway maps each kind to an HTTP
// status and Cosmos error code in one table.
type Kind int

const (
	KindBadRequest Kind = iota + 1
	KindNotFound
	KindConflict
	KindPreconditionFailed
	KindTooLarge
	KindTooManyRequests
	KindUnavailable
	KindNotImplemented
	KindGone
	KindNotModified
	// KindRequestTimeout is a request the server stopped working on
	// because it ran out of time (a query page over its budget).
	KindRequestTimeout
	// KindForbidden is a request a resource quota refuses (a container's
	// limit of stored procedures, say), or a resource token does not
	// grant.
	KindForbidden
	// KindUnauthorized is a resource token that no longer authorizes
	// anything: expired, or its permission replaced or deleted.
	KindUnauthorized
)

// statuses is the one table from kinds to HTTP statuses and Cosmos
// error codes.
var statuses = map[Kind]struct {
	status int
	code   string
}{
	KindBadRequest:         {http.StatusBadRequest, "BadRequest"},
	KindNotFound:           {http.StatusNotFound, "NotFound"},
	KindConflict:           {http.StatusConflict, "Conflict"},
	KindPreconditionFailed: {http.StatusPreconditionFailed, "PreconditionFailed"},
	KindTooLarge:           {http.StatusRequestEntityTooLarge, "RequestEntityTooLarge"},
	KindTooManyRequests:    {http.StatusTooManyRequests, "TooManyRequests"},
	KindUnavailable:        {http.StatusServiceUnavailable, "ServiceUnavailable"},
	KindNotImplemented:     {http.StatusNotImplemented, "NotImplemented"},
	KindGone:               {http.StatusGone, "Gone"},
	KindNotModified:        {http.StatusNotModified, "NotModified"},
	KindRequestTimeout:     {http.StatusRequestTimeout, "RequestTimeout"},
	KindForbidden:          {http.StatusForbidden, "Forbidden"},
	KindUnauthorized:       {http.StatusUnauthorized, "Unauthorized"},
}

// Status is the kind's HTTP status and Cosmos error code; 500 for an
// unknown kind.
func (k Kind) Status() (int, string) {
	if s, ok := statuses[k]; ok {
		return s.status, s.code
	}
	return http.StatusInternalServerError, "InternalServerError"
}

// KindOf is the kind of an HTTP status (a script's thrown error number),
// and whether there is one.
func KindOf(status int) (Kind, bool) {
	for k, s := range statuses {
		if s.status == status {
			return k, true
		}
	}
	return 0, false
}

// Error is an error the client caused or must react to. Anything that is
// not an *Error is an internal error (500).
type Error struct {
	Kind    Kind
	Message string
	// RetryAfter is set for KindTooManyRequests, and for KindUnavailable
	// when a retry after that long may well succeed.
	RetryAfter time.Duration
	// SubStatus is Cosmos's x-ms-substatus, when it has one.
	SubStatus int
	// AdditionalInfo, when set, is the error body's additionalErrorInfo
	// (raw JSON), and the message is sent as the service sends such an
	// error: followed by the activity id, not wrapped in "Errors".
	AdditionalInfo []byte
}

func (e *Error) Error() string { return e.Message }

// Sentinel errors with Cosmos's wording. Compare with errors.Is on Kind
// via IsKind; the pointers themselves are shared and never mutated.
var (
	ErrNotFound           = &Error{Kind: KindNotFound, Message: "Entity with the specified id does not exist in the system."}
	ErrConflict           = &Error{Kind: KindConflict, Message: "Entity with the specified id already exists in the system."}
	ErrPreconditionFailed = &Error{Kind: KindPreconditionFailed, Message: "One of the specified pre-condition is not met."}
)

// BadRequest is a KindBadRequest error with a formatted message.
func BadRequest(format string, args ...any) *Error {
	return &Error{Kind: KindBadRequest, Message: fmt.Sprintf(format, args...)}
}

// NotImplemented is a KindNotImplemented error (501) with a formatted
// message, for a feature Ebb does not have.
func NotImplemented(format string, args ...any) *Error {
	return &Error{Kind: KindNotImplemented, Message: fmt.Sprintf(format, args...)}
}

// NotFound is a KindNotFound error with a formatted message.
func NotFound(format string, args ...any) *Error {
	return &Error{Kind: KindNotFound, Message: fmt.Sprintf(format, args...)}
}

// IsKind reports whether err is an engine error of kind k.
// (errors.AsType allocates nothing, where errors.As moved its target to
// the heap on every call.)
func IsKind(err error, k Kind) bool {
	e, ok := errors.AsType[*Error](err)
	return ok && e.Kind == k
}

// ErrStoreUnavailable is what a client is told when the storage backend
// cannot be reached. It names no cause: the driver's error holds the
// database's user, host, port and name, which are the server's business;
// the gateway logs them with the request's activity id instead.
//
// It asks the client to retry after storeRetryAfter: the SDKs' retry
// policies wait that long (x-ms-retry-after-ms) instead of their own
// backoff, and a database failing over to its standby, or restarting,
// is back within seconds. The Go SDK's three retries then span a
// failover without the application seeing it.
var ErrStoreUnavailable = &Error{Kind: KindUnavailable, Message: "The storage backend is unavailable right now; retry later.", RetryAfter: storeRetryAfter}

const storeRetryAfter = time.Second

// ClientError returns err as the client is to see it: an error from a
// storage backend that cannot be reached right now becomes
// ErrStoreUnavailable. Engine errors, and errors it has nothing to say
// about, are returned as they are.
func ClientError(err error) error {
	if _, ok := errors.AsType[*Error](err); ok || !errors.Is(err, storage.ErrUnavailable) {
		return err
	}
	return ErrStoreUnavailable
}
