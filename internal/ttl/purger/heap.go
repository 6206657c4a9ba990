package purger

import "container/heap"

// deadlineHeap is a min-heap of container deadlines with an index, so a
// container's entry can be lowered or removed in O(log n).
//
// INVARIANT: index[items[i].c] == i for every i, and index has no other
// keys: at most one entry per container.
type deadlineHeap struct {
	items []deadline
	index map[ContainerID]int
}

// deadline is when a container's earliest unpurged item expires, in
// epoch seconds.
type deadline struct {
	c  ContainerID
	at int64
}

func (h *deadlineHeap) Len() int           { return len(h.items) }
func (h *deadlineHeap) Less(i, j int) bool { return h.items[i].at < h.items[j].at }
func (h *deadlineHeap) Swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	h.index[h.items[i].c] = i
	h.index[h.items[j].c] = j
}
func (h *deadlineHeap) Push(x any) {
	d := x.(deadline)
	h.index[d.c] = len(h.items)
	h.items = append(h.items, d)
}
func (h *deadlineHeap) Pop() any {
	d := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	delete(h.index, d.c)
	return d
}

// peek returns the earliest deadline.
func (h *deadlineHeap) peek() (deadline, bool) {
	if len(h.items) == 0 {
		return deadline{}, false
	}
	return h.items[0], true
}

// set puts c's deadline at at.
func (h *deadlineHeap) set(c ContainerID, at int64) {
	if h.index == nil {
		h.index = map[ContainerID]int{}
	}
	if i, ok := h.index[c]; ok {
		h.items[i].at = at
		heap.Fix(h, i)
		return
	}
	heap.Push(h, deadline{c: c, at: at})
}

// lower moves c's deadline to at if that is earlier (or new) and reports
// whether the heap's earliest deadline changed.
func (h *deadlineHeap) lower(c ContainerID, at int64) bool {
	if h.index == nil {
		h.index = map[ContainerID]int{}
	}
	if i, ok := h.index[c]; ok && h.items[i].at <= at {
		return false
	}
	before, had := h.peek()
	h.set(c, at)
	return !had || at < before.at
}

// remove drops c's entry, if any.
func (h *deadlineHeap) remove(c ContainerID) {
	if i, ok := h.index[c]; ok {
		heap.Remove(h, i)
	}
}
