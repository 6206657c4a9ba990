package purger

import "testing"

func TestDeadlineHeap(t *testing.T) {
	var h deadlineHeap
	a, b, c := ContainerID{1}, ContainerID{2}, ContainerID{3}
	h.set(a, 30)
	h.set(b, 20)
	if !h.lower(c, 10) {
		t.Fatal("a new earliest deadline must report a change")
	}
	if h.lower(a, 40) {
		t.Fatal("a later deadline must not lower")
	}
	if got, _ := h.peek(); got.c != c || got.at != 10 {
		t.Fatalf("peek = %v, want c@10", got)
	}
	h.remove(c)
	if got, _ := h.peek(); got.c != b {
		t.Fatalf("after remove, peek = %v, want b", got)
	}
	h.set(a, 5)
	if got, _ := h.peek(); got.c != a || got.at != 5 {
		t.Fatalf("after set, peek = %v, want a@5", got)
	}
}
