package index

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/ebbdb/ebb/internal/engine/document"
	"github.com/ebbdb/ebb/internal/engine/keyspace"
	"github.com/ebbdb/ebb/internal/keys"
	"github.com/ebbdb/ebb/internal/storage"
)

// Target is the container an index operation works on: all the index
// package knows of it.
type Target struct {
	RID [8]byte
	// PK is the container's partition key definition: the builder splits
	// item keys into <pk> <id> by its number of paths.
	PK document.PKDef
	// Policy is the indexing policy of the caller's catalog entry (nil:
	// the default). Writes and queries follow the stored index state's
	// policy, which is this one unless the caller's catalog snapshot is
	// stale; when it is, Policy spares compiling the state's again.
	Policy *Policy
}

// catalogPolicy returns the policy of t's catalog entry.
func (t Target) catalogPolicy() *Policy {
	if t.Policy == nil {
		return defaultPolicy
	}
	return t.Policy
}

// State is a container's index state, stored at keyspace.IndexStateKey:
// the policy its entries follow and whether they are complete.
//
// INVARIANT: when not building, the entries are exactly those of the
// stored item versions under the policy; while building, those of the
// items up to cursor, and a subset of theirs for the items after it.
type State struct {
	building bool
	// fp and policy are the fingerprint and canonical JSON of the policy
	// the entries follow (Policy.fp, .canon).
	fp     uint64
	policy []byte
	// cursor, while building: the item key after the doc prefix
	// (<pk> <id>) of the last item indexed; nil when none yet.
	cursor []byte
	// indexed, while building: how many items the rebuild has indexed,
	// for its progress; 0 in a state written before Ebb counted them.
	indexed uint64
}

// Building reports that a rebuild is under way: queries do not use the
// index until it is done.
func (s State) Building() bool { return s.building }

// Cursor is the <pk> <id> of the last item a rebuild has indexed, nil
// when it has indexed none yet (or is not building).
func (s State) Cursor() []byte { return s.cursor }

// Indexed is how many items a rebuild has indexed so far (0 when not
// building). Items written behind the cursor during the rebuild are
// indexed by their writes and not counted, so it estimates progress; it
// is exact for a container nobody writes to meanwhile.
func (s State) Indexed() uint64 { return s.indexed }

// State encodings: version, flags, fp (8 bytes), then version 2's
// uvarint indexed, then the uvarint length of the cursor, the cursor and
// the policy. Version 1, from before Ebb counted indexed items, reads as
// indexed 0; every state written now is version 2.
const (
	stateV1      = 1
	stateVersion = 2
)

func (s State) encode() []byte {
	b := make([]byte, 0, 26+len(s.cursor)+len(s.policy))
	var flags byte
	if s.building {
		flags |= 1
	}
	b = append(b, stateVersion, flags)
	b = binary.BigEndian.AppendUint64(b, s.fp)
	b = binary.AppendUvarint(b, s.indexed)
	b = binary.AppendUvarint(b, uint64(len(s.cursor)))
	b = append(b, s.cursor...)
	return append(b, s.policy...)
}

// knownStateVersion reports whether version is one decodeState reads.
func knownStateVersion(version byte) bool { return version == stateV1 || version == stateVersion }

func decodeState(v []byte) (State, error) {
	if len(v) < 11 || !knownStateVersion(v[0]) {
		return State{}, fmt.Errorf("index: corrupt index state (%d bytes)", len(v))
	}
	s := State{building: v[1]&1 != 0, fp: binary.BigEndian.Uint64(v[2:])}
	rest := v[10:]
	if v[0] == stateVersion {
		n, k := binary.Uvarint(rest)
		if k <= 0 {
			return State{}, errors.New("index: corrupt index state count")
		}
		s.indexed, rest = n, rest[k:]
	}
	n, k := binary.Uvarint(rest)
	if k <= 0 || uint64(len(rest)-k) < n {
		return State{}, errors.New("index: corrupt index state cursor")
	}
	rest = rest[k:]
	if n > 0 {
		s.cursor = slices.Clone(rest[:n])
	}
	s.policy = slices.Clone(rest[n:])
	return s, nil
}

func newState(p *Policy) State {
	return State{fp: p.fp, policy: p.canon}
}

// ReadState reads container rid's index state; found is false when
// there is none (a store from before indexes, or a deleted container).
func ReadState(r storage.Reader, rid [8]byte) (st State, found bool, err error) {
	v, err := r.Get(keyspace.IndexStateKey(rid))
	if errors.Is(err, storage.ErrNotFound) {
		return State{}, false, nil
	}
	if err != nil {
		return State{}, false, err
	}
	st, err = decodeState(v)
	return st, err == nil, err
}

// compiled returns the compiled form of the state's policy: t's own when
// it is the same, else from the cache.
func (s State) compiled(t Target) (*Policy, error) {
	if p := t.catalogPolicy(); p.fp == s.fp {
		return p, nil
	}
	return compiledPolicy(s.policy, s.fp)
}

// InitState stores the index state of a new container: ready, under
// its catalog policy, with no entries since it has no items.
// REQUIRES: called inside the Update that creates the container.
func InitState(w storage.Writer, t Target) error {
	return w.Set(keyspace.IndexStateKey(t.RID), newState(t.catalogPolicy()).encode())
}

// SetPolicy makes t's catalog policy the one its index follows, in
// the transaction that stores the catalog change: when it indexes
// differently from the stored state's, every entry is dropped and the
// state starts building from the first item (a policy that indexes
// nothing is ready at once).
// REQUIRES: called inside an Update.
func SetPolicy(w storage.Writer, t Target) error {
	pol := t.catalogPolicy()
	st, found, err := ReadState(w, t.RID)
	if err != nil {
		return err
	}
	if found && st.fp == pol.fp {
		return nil
	}
	p := keyspace.IndexPrefix(t.RID)
	if err := w.DeleteRange(p, keys.PrefixEnd(p)); err != nil {
		return err
	}
	ns := newState(pol)
	ns.building = !pol.none
	return w.Set(keyspace.IndexStateKey(t.RID), ns.encode())
}

// EnsureState gives t, if it has no index state (a store written
// before Ebb had indexes), one that builds its index.
// REQUIRES: called inside an Update.
func EnsureState(w storage.Writer, t Target) error {
	_, found, err := ReadState(w, t.RID)
	if err != nil || found {
		return err
	}
	return SetPolicy(w, t)
}
