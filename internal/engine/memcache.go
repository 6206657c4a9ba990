package engine

import (
	"container/heap"
	"sync"

	"github.com/ebbdb/ebb/internal/sizedmap"
)

// sizedCache keeps values built from the store (the vectors and
// full-text indexes searches read) up to a total size: adding one makes
// room by dropping others, in no particular order. It is safe for
// concurrent use; the values must not change once added.
type sizedCache[K comparable, V any] struct {
	mu sync.Mutex
	m  *sizedmap.Map[K, sizedEntry[V]]
}

type sizedEntry[V any] struct {
	v    V
	size int
}

func newSizedCache[K comparable, V any](max int) *sizedCache[K, V] {
	return &sizedCache[K, V]{m: sizedmap.New(max, func(_ K, e sizedEntry[V]) int { return e.size })}
}

func (c *sizedCache[K, V]) get(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m.Entries[k]
	return e.v, ok
}

// put keeps v under k if its size fits the cache at all.
func (c *sizedCache[K, V]) put(k K, v V, size int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m.Put(k, sizedEntry[V]{v: v, size: size})
}

// orderedHeap hands out its items in the order less gives, sorting only
// as far as they are taken: a search that wants ten items of a hundred
// thousand sorts ten.
type orderedHeap[T any] struct {
	items []T
	less  func(a, b T) bool
}

func newOrderedHeap[T any](items []T, less func(a, b T) bool) *orderedHeap[T] {
	h := &orderedHeap[T]{items: items, less: less}
	heap.Init(h)
	return h
}

// next takes the first item left; ok is false when none is.
func (h *orderedHeap[T]) next() (T, bool) {
	if len(h.items) == 0 {
		var zero T
		return zero, false
	}
	return heap.Pop(h).(T), true
}

func (h *orderedHeap[T]) Len() int           { return len(h.items) }
func (h *orderedHeap[T]) Less(i, j int) bool { return h.less(h.items[i], h.items[j]) }
func (h *orderedHeap[T]) Swap(i, j int)      { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *orderedHeap[T]) Push(x any)         { h.items = append(h.items, x.(T)) }
func (h *orderedHeap[T]) Pop() any {
	v := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return v
}
