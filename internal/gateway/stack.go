package gateway

import "net/http"

// withGrownStack runs next on a stack grown by growStack.
func withGrownStack(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		growStack()
		next.ServeHTTP(w, r)
	})
}

// growStack grows the calling goroutine's stack to at least 32 KB in one
// step. Every request runs on a fresh goroutine (one per HTTP/2 stream)
// that starts with a small stack, and a point read's call chain through
// the engine and Pebble outgrows it: the runtime then copies the stack,
// walking every frame, once for each doubling, deep inside the read.
// Growing it before routing costs one copy of a few frames.
// (CockroachDB does the same for its request goroutines: its growstack
// package.)
//
//go:noinline
func growStack() {
	var buf [16 << 10]byte
	use(buf[:]) // keeps buf, and so the frame, from being optimized away
}

// use takes a slice and does nothing with it; not being inlined, it makes
// its caller keep what the slice points to. (A shared variable written
// instead would be a data race between requests.)
//
//go:noinline
func use([]byte) {}
