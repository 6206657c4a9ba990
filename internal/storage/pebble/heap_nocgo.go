//go:build !cgo

package pebble

// manualOnGoHeap: without cgo, Pebble's memtables and block cache are Go
// heap (heap.go).
const manualOnGoHeap = true
