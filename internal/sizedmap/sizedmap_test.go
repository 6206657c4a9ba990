package sizedmap

import (
	"fmt"
	"testing"
)

func TestMap(t *testing.T) {
	m := New(100, func(k string, v []byte) int { return len(k) + len(v) })
	if !m.Put("a", make([]byte, 9)) || m.Size() != 10 {
		t.Fatalf("after one put: size %d", m.Size())
	}
	// Replacing an entry counts only the new value.
	m.Put("a", make([]byte, 19))
	if m.Size() != 20 || len(m.Entries) != 1 {
		t.Fatalf("after a replace: size %d, %d entries", m.Size(), len(m.Entries))
	}
	// One larger than the limit changes nothing.
	if m.Put("a", make([]byte, 100)) || len(m.Entries["a"]) != 19 {
		t.Fatal("an oversized put was kept or dropped the old value")
	}
	for i := range 50 {
		m.Put(fmt.Sprint("k", i), make([]byte, 8))
		if m.Size() > 100 {
			t.Fatalf("size %d over the limit", m.Size())
		}
	}
	sum := 0
	for k, v := range m.Entries {
		sum += len(k) + len(v)
	}
	if sum != m.Size() {
		t.Fatalf("entries add up to %d, Size says %d", sum, m.Size())
	}
	m.DeleteFunc(func(k string, _ []byte) bool { return k != "k49" })
	if len(m.Entries) != 1 || m.Size() != 11 {
		t.Fatalf("after DeleteFunc: %d entries, size %d", len(m.Entries), m.Size())
	}
	m.Delete("k49")
	m.Delete("absent")
	if len(m.Entries) != 0 || m.Size() != 0 {
		t.Fatalf("after Delete: %d entries, size %d", len(m.Entries), m.Size())
	}
}
