//go:build race

package query

// raceEnabled: the race detector makes sync.Pool drop a share of what it
// is given, so tests that count a pool's reuse skip.
const raceEnabled = true
