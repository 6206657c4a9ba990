package ann

import "slices"

// candidate is a node met during a search, at its distance from the
// query.
type candidate struct {
	dist float32
	id   uint32
}

// The two heaps are written out rather than built on container/heap,
// whose interface calls cost more than the comparisons they make.

// nearestFirst is a min-heap of candidates: the ones still to expand.
type nearestFirst []candidate

func (h *nearestFirst) push(c candidate) {
	s := append(*h, c)
	i := len(s) - 1
	for i > 0 {
		parent := (i - 1) / 2
		if s[parent].dist <= c.dist {
			break
		}
		s[i] = s[parent]
		i = parent
	}
	s[i] = c
	*h = s
}

func (h *nearestFirst) pop() candidate {
	s := *h
	top := s[0]
	last := s[len(s)-1]
	s = s[:len(s)-1]
	i := 0
	for {
		child := 2*i + 1
		if child >= len(s) {
			break
		}
		if right := child + 1; right < len(s) && s[right].dist < s[child].dist {
			child = right
		}
		if last.dist <= s[child].dist {
			break
		}
		s[i] = s[child]
		i = child
	}
	if len(s) > 0 {
		s[i] = last
	}
	*h = s
	return top
}

// farthestFirst is a max-heap of candidates: the best found so far,
// the worst of them on top, to be dropped when a better one comes. It
// is a nearestFirst of the distances negated.
type farthestFirst struct{ h nearestFirst }

func (f *farthestFirst) push(c candidate) { f.h.push(candidate{dist: -c.dist, id: c.id}) }

func (f *farthestFirst) pop() candidate {
	c := f.h.pop()
	return candidate{dist: -c.dist, id: c.id}
}

func (f *farthestFirst) len() int { return len(f.h) }

// worst is the farthest candidate's distance; the heap is not empty.
func (f *farthestFirst) worst() float32 { return -f.h[0].dist }

// sorted empties the heap into dst, nearest first.
func (h *farthestFirst) sorted(dst []candidate) []candidate {
	n := h.len()
	dst = slices.Grow(dst[:0], n)[:n]
	for i := n - 1; i >= 0; i-- {
		dst[i] = h.pop()
	}
	return dst
}
