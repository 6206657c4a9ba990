package index

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ebbdb/ebb/internal/engine/document"
	"github.com/ebbdb/ebb/internal/engine/keyspace"
	"github.com/ebbdb/ebb/internal/keys"
	"github.com/ebbdb/ebb/internal/storage"
	"github.com/ebbdb/ebb/internal/storage/pebble"
)

// harness is one container's items and index in an in-memory store,
// written as the engine writes them: the item and its entries in one
// transaction.
type harness struct {
	t      testing.TB
	store  storage.Store
	target Target
}

// newHarness returns an empty container with the given indexingPolicy
// ("" for none) and a ready index state.
func newHarness(t testing.TB, policy string) *harness {
	t.Helper()
	pol := defaultPolicy
	if policy != "" {
		pol = mustPolicy(policy)
	}
	return newHarnessWith(t, pol)
}

// newHarnessWith is newHarness with a compiled policy.
func newHarnessWith(t testing.TB, pol *Policy) *harness {
	t.Helper()
	store, err := pebble.OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	pk, err := document.ParsePKDef([]byte(`{"paths":["/pk"],"kind":"Hash"}`))
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, store: store, target: Target{RID: [8]byte{0, 0, 0, 1, 0, 0, 0, 2}, PK: pk, Policy: pol}}
	h.update(func(w storage.Writer) error { return InitState(w, h.target) })
	return h
}

func (h *harness) update(fn func(w storage.Writer) error) {
	h.t.Helper()
	if err := h.store.Update(context.Background(), fn); err != nil {
		h.t.Fatal(err)
	}
}

// pkP is the encoded partition key "p", every harness item's.
var pkP = document.PartitionKey{{Kind: document.PKString, Str: "p"}}.Encode(nil)

// put stores doc as item id ("" deletes it), moving its index entries
// from the version stored before.
func (h *harness) put(id, doc string) {
	h.t.Helper()
	h.update(func(w storage.Writer) error {
		key := keyspace.DocKey(h.target.RID, pkP, id)
		var old []byte
		if v, err := w.Get(key); err == nil {
			_, d, err := document.DecodeItem(v)
			if err != nil {
				return err
			}
			old = slices.Clone(d)
		}
		if doc == "" {
			if err := w.Delete(key); err != nil {
				return err
			}
			return Remove(w, h.target, pkP, id, old)
		}
		if err := w.Set(key, append(document.ItemHeader{}.Append(nil), doc...)); err != nil {
			return err
		}
		return Replace(w, h.target, pkP, id, old, []byte(doc))
	})
}

// check fails the test unless the entries agree with the items (Check).
func (h *harness) check() {
	h.t.Helper()
	var problems []string
	err := h.store.View(context.Background(), func(r storage.Reader) error {
		return Check(r, h.target, "c", func(format string, args ...any) {
			problems = append(problems, fmt.Sprintf(format, args...))
		})
	})
	if err != nil {
		h.t.Fatal(err)
	}
	if len(problems) > 0 {
		h.t.Fatalf("inconsistent index:\n%s", strings.Join(problems, "\n"))
	}
}

// entries renders the container's path entries as "<path>=<value> <id>"
// in key order, leaving out composite indexes' and (unless withTs) _ts.
func (h *harness) entries(withTs bool) []string {
	h.t.Helper()
	var out []string
	base := keyspace.IndexPrefix(h.target.RID)
	err := h.store.View(context.Background(), func(r storage.Reader) error {
		it := r.Scan(base, keys.PrefixEnd(base), false)
		defer it.Close()
		for it.Next() {
			path, rest, err := keys.DecodeBytes(it.Key()[len(base):])
			if err != nil {
				return err
			}
			if path[0] == '(' || (string(path) == "/_ts" && !withTs) {
				continue
			}
			after, err := skipValue(rest)
			if err != nil {
				return fmt.Errorf("entry %x: %v", it.Key(), err)
			}
			_, item, err := document.DecodePK(after, len(h.target.PK.Paths))
			if err != nil {
				return err
			}
			id, _, err := keys.DecodeBytes(item)
			if err != nil {
				return err
			}
			out = append(out, fmt.Sprintf("%s=%s %s", path, renderValue(rest[:len(rest)-len(after)]), id))
		}
		return it.Err()
	})
	if err != nil {
		h.t.Fatal(err)
	}
	return out
}

// compositeEntries returns the keys of the container's composite index
// entries after the index prefix.
func (h *harness) compositeEntries() []string {
	h.t.Helper()
	var out []string
	base := keyspace.IndexPrefix(h.target.RID)
	err := h.store.View(context.Background(), func(r storage.Reader) error {
		it := r.Scan(base, keys.PrefixEnd(base), false)
		defer it.Close()
		for it.Next() {
			if path, _, err := keys.DecodeBytes(it.Key()[len(base):]); err == nil && path[0] == '(' {
				out = append(out, string(it.Key()[len(base):]))
			}
		}
		return it.Err()
	})
	if err != nil {
		h.t.Fatal(err)
	}
	return out
}

// renderValue renders a <value> as JSON, arrays and objects as [] and {}.
func renderValue(v []byte) string {
	switch v[0] {
	case tagArray:
		return "[]"
	case tagObject:
		return "{}"
	}
	pk, _, err := document.DecodePK(v, 1)
	if err != nil {
		return fmt.Sprintf("?%x", v)
	}
	s := pk.AppendJSON(nil)
	return string(s[1 : len(s)-1])
}

// wantEntries fails the test unless the container's entries (without
// _ts) are want and agree with its items.
func (h *harness) wantEntries(want ...string) {
	h.t.Helper()
	if got := h.entries(false); !slices.Equal(got, want) {
		h.t.Fatalf("index entries:\n got  %s\n want %s", strings.Join(got, "\n      "), strings.Join(want, "\n      "))
	}
	h.check()
}

// longA is n a's: strings around the index's cut (maxIndexedString).
func longA(n int) string { return strings.Repeat("a", n) }
