//go:build race

// Package race says whether the race detector is built in. Tests that
// count allocations or a sync.Pool's reuse, or size their work, read it:
// the detector makes sync.Pool drop a share of what it is given, moves
// some values to the heap and slows everything tenfold.
package race

// Enabled is true in a build with the race detector.
const Enabled = true
