package query

import "bytes"

type memDoc struct{ key, doc []byte }

// memSource is an in-memory Source over documents in ascending key order.
type memSource []memDoc

func (m memSource) Scan(after []byte, yield func(key, doc []byte) bool) error {
	for _, d := range m {
		if after != nil && bytes.Compare(d.key, after) <= 0 {
			continue
		}
		if !yield(d.key, d.doc) {
			return nil
		}
	}
	return nil
}
