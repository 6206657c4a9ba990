// Package sizedmap is a map held to a total size: the caches that keep
// what was read or built from the store (the embedded store's row cache,
// the engine's vector sets and full-text indexes) keep their entries in
// one, so each stays within the memory it was given.
package sizedmap

// Map is a map whose entries' sizes add up to at most a limit: adding one
// makes room by dropping others, whichever the map yields first (a
// random choice, which keeps no order to maintain on every read).
// Entries is read directly, so a look-up costs what a map's does
// (m.Entries[string(b)] allocates nothing); it is changed only through
// the methods, which keep the total. A Map is not safe for concurrent
// use.
type Map[K comparable, V any] struct {
	Entries map[K]V
	max     int
	total   int
	sizeOf  func(K, V) int
}

// New returns an empty Map of at most max, measuring each entry with
// sizeOf.
func New[K comparable, V any](max int, sizeOf func(K, V) int) *Map[K, V] {
	return &Map[K, V]{Entries: map[K]V{}, max: max, sizeOf: sizeOf}
}

// Put keeps v under k, in place of what k held, dropping other entries
// to make room. It reports whether v fits at all; one larger than the
// limit changes nothing.
func (m *Map[K, V]) Put(k K, v V) bool {
	size := m.sizeOf(k, v)
	if size > m.max {
		return false
	}
	m.Delete(k)
	for other, o := range m.Entries {
		if m.total+size <= m.max {
			break
		}
		m.drop(other, o)
	}
	m.Entries[k] = v
	m.total += size
	return true
}

// Delete drops k's entry, if any.
func (m *Map[K, V]) Delete(k K) {
	if v, ok := m.Entries[k]; ok {
		m.drop(k, v)
	}
}

// DeleteFunc drops every entry for which del reports true.
func (m *Map[K, V]) DeleteFunc(del func(K, V) bool) {
	for k, v := range m.Entries {
		if del(k, v) {
			m.drop(k, v)
		}
	}
}

// Size is the total size of the entries.
func (m *Map[K, V]) Size() int { return m.total }

func (m *Map[K, V]) drop(k K, v V) {
	m.total -= m.sizeOf(k, v)
	delete(m.Entries, k)
}
