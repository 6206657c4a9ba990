package index

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"

	"github.com/ebbdb/ebb/internal/engine/keyspace"
	"github.com/ebbdb/ebb/internal/keys"
	"github.com/ebbdb/ebb/internal/storage"
)

// policyMemo is a transaction that remembers the index policy it read for
// each container, so a transaction writing many items (a purge batch, a
// transactional batch) reads the index state once, not once per item.
type policyMemo struct {
	storage.Writer
	policies map[[8]byte]*Policy
}

// WithPolicyMemo returns w remembering, per container, the policy the
// first item write in it read: for a transaction that writes many items.
func WithPolicyMemo(w storage.Writer) storage.Writer {
	return &policyMemo{Writer: w, policies: map[[8]byte]*Policy{}}
}

// writePolicy returns the policy an item write in transaction r indexes
// under: the stored state's (see "Maintenance" in the package doc).
func writePolicy(r storage.Reader, t Target) (*Policy, error) {
	memo, _ := r.(*policyMemo)
	if memo != nil {
		if pol, ok := memo.policies[t.RID]; ok {
			return pol, nil
		}
	}
	pol, err := readWritePolicy(r, t)
	if err == nil && memo != nil {
		memo.policies[t.RID] = pol
	}
	return pol, err
}

func readWritePolicy(r storage.Reader, t Target) (*Policy, error) {
	v, err := r.Get(keyspace.IndexStateKey(t.RID))
	if errors.Is(err, storage.ErrNotFound) {
		return t.catalogPolicy(), nil
	}
	if err != nil {
		return nil, err
	}
	if len(v) >= 10 && knownStateVersion(v[0]) && binary.BigEndian.Uint64(v[2:]) == t.catalogPolicy().fp {
		return t.catalogPolicy(), nil
	}
	st, err := decodeState(v)
	if err != nil {
		return nil, err
	}
	return st.compiled(t)
}

// add writes the index entries of doc, stored at <pkEnc> <id>.
// REQUIRES: called inside the Update that stores the document.
func add(w storage.Writer, t Target, pkEnc []byte, id string, doc []byte) error {
	return Replace(w, t, pkEnc, id, nil, doc)
}

// Remove deletes the index entries of doc, stored at <pkEnc> <id>.
// REQUIRES: called inside the Update that deletes the document.
func Remove(w storage.Writer, t Target, pkEnc []byte, id string, doc []byte) error {
	return Replace(w, t, pkEnc, id, doc, nil)
}

// Replace moves the index entries of the item at <pkEnc> <id> from
// version old to version doc (either nil: none): it deletes the entries
// only old has and sets those only doc has.
// REQUIRES: called inside the Update that writes the item.
func Replace(w storage.Writer, t Target, pkEnc []byte, id string, old, doc []byte) error {
	pol, err := writePolicy(w, t)
	if err != nil || pol.none {
		return err
	}
	ow, nw := getWalker(), getWalker()
	defer putWalker(ow)
	defer putWalker(nw)
	ow.collect(pol, old)
	nw.collect(pol, doc)
	olds, news := ow.sorted(), nw.sorted()
	prefix := keyspace.IndexPrefix(t.RID)
	item := keys.AppendString(slices.Clip(pkEnc), id)
	var key []byte
	entryKey := func(e []byte) []byte {
		key = pol.appendEntryKey(append(key[:0], prefix...), e, item)
		return key
	}
	// Merge the two sorted lists.
	i, j := 0, 0
	for i < len(olds) || j < len(news) {
		var r int
		switch {
		case i == len(olds):
			r = 1
		case j == len(news):
			r = -1
		default:
			r = bytes.Compare(olds[i], news[j])
		}
		switch {
		case r < 0:
			if err := w.Delete(entryKey(olds[i])); err != nil {
				return err
			}
			i++
		case r > 0:
			if err := w.Set(entryKey(news[j]), nil); err != nil {
				return err
			}
			j++
		default:
			i, j = i+1, j+1
		}
	}
	return nil
}
