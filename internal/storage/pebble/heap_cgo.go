//go:build cgo

package pebble

// manualOnGoHeap: with cgo, Pebble allocates its memtables and block
// cache from C (heap.go).
const manualOnGoHeap = false
