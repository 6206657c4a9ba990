package storage

import (
	"bytes"
	"slices"
)

// Prefetch reads keys (in any order) ahead, with one GetMany, and returns
// w answering Get and Lend of those keys from what it read until the
// transaction writes them. A transaction that knows what it will read
// first pays one round trip for all of it on a store that is a network
// away (PostgreSQL), where each Get would be one.
func Prefetch(w Writer, keys [][]byte) (Writer, error) {
	sorted := slices.Clone(keys)
	slices.SortFunc(sorted, bytes.Compare)
	sorted = slices.CompactFunc(sorted, bytes.Equal)
	p := &prefetched{Writer: w, read: make(map[string]prefetchedValue, len(sorted))}
	for _, k := range sorted {
		p.read[string(k)] = prefetchedValue{}
	}
	err := w.GetMany(sorted, func(i int, v []byte) error {
		p.read[string(sorted[i])] = prefetchedValue{value: bytes.Clone(v), found: true}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// prefetched is a Writer with some values read ahead. INVARIANT: read
// holds only keys the transaction has not written since they were read.
type prefetched struct {
	Writer
	read map[string]prefetchedValue
}

type prefetchedValue struct {
	value []byte
	found bool
}

func (p *prefetched) Get(key []byte) ([]byte, error) {
	if v, ok := p.read[string(key)]; ok {
		if !v.found {
			return nil, ErrNotFound
		}
		return bytes.Clone(v.value), nil
	}
	return p.Writer.Get(key)
}

func (p *prefetched) Lend(key []byte, fn func(value []byte) error) error {
	if v, ok := p.read[string(key)]; ok {
		if !v.found {
			return ErrNotFound
		}
		return fn(v.value)
	}
	return p.Writer.Lend(key, fn)
}

func (p *prefetched) Set(key, value []byte) error {
	delete(p.read, string(key))
	return p.Writer.Set(key, value)
}

func (p *prefetched) Delete(key []byte) error {
	delete(p.read, string(key))
	return p.Writer.Delete(key)
}

func (p *prefetched) DeleteRange(start, end []byte) error {
	for k := range p.read {
		if k >= string(start) && (end == nil || k < string(end)) {
			delete(p.read, k)
		}
	}
	return p.Writer.DeleteRange(start, end)
}
