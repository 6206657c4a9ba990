package engine

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"sort"

	"github.com/ebbdb/ebb/internal/engine/keyspace"
)

// partitionLayout is how a container's EPK space is divided among its
// physical partitions: the live ranges, in EPK order, tiling ["", "FF"),
// and the ranges split since, kept because their children read their
// logs. A partition's number (its range id) is never reused.
type partitionLayout struct {
	live []pkRange
	gone []pkRange
	next int // the number the next new partition gets
	// pinned is set for a container created with x-ebb-partition-count:
	// its throughput never splits it (growPartitions), so it keeps the
	// partitions it asked for until an administrative split.
	pinned bool
}

// pkRange is one partition's range of EPKs, [min, max) ("" and "FF" at
// the ends of the space).
type pkRange struct {
	id       int
	min, max string
	// ancestors are the ranges this one was split from, oldest first,
	// each with the last LSN count it wrote. A change feed of this range
	// reads their logs up to those counts, within this range's EPKs,
	// before its own, whose counts continue after its parent's.
	ancestors []ancestor
	// lock is the partition's lock (container.setLayout), live ranges
	// only.
	lock [][]byte
	// maxHead is max as an EPK head (document.PKDef.EPKHeadOfKey): its
	// 16 bytes, or 0xFF for "FF" (container.setLayout, live ranges; find).
	maxHead [16]byte
}

type ancestor struct {
	id    int
	final uint64
}

// epkSpace is the top of the EPK space of version 2 keys: MurmurHash3
// values with the top two bits cleared.
var epkSpace = new(big.Int).Lsh(big.NewInt(1), 126)

// evenLayout divides the EPK space evenly among n partitions numbered
// 0 … n-1.
func evenLayout(n int) *partitionLayout {
	n = max(n, 1)
	l := &partitionLayout{next: n}
	for p := range n {
		l.live = append(l.live, pkRange{id: p, min: epkBound(p, n), max: epkBound(p+1, n)})
	}
	return l
}

// epkBound is the EPK where partition p of n evenly laid out begins.
func epkBound(p, n int) string {
	switch p {
	case 0:
		return ""
	case n:
		return "FF"
	}
	b := new(big.Int).Mul(epkSpace, big.NewInt(int64(p)))
	return fmt.Sprintf("%032X", b.Div(b, big.NewInt(int64(n))))
}

// boundValue reads a range bound as a number of the EPK space.
func boundValue(s string) (*big.Int, bool) {
	switch s {
	case "":
		return new(big.Int), true
	case "FF":
		return new(big.Int).Set(epkSpace), true
	}
	v, ok := new(big.Int).SetString(s, 16)
	return v, ok
}

// find returns the live range holding the EPKs whose head is head (see
// document.PKDef.EPKHeadOfKey): a range's bounds are whole heads, so an
// EPK is below a bound exactly when its head is.
func (l *partitionLayout) find(head [16]byte) *pkRange {
	i := sort.Search(len(l.live), func(i int) bool {
		return bytes.Compare(head[:], l.live[i].maxHead[:]) < 0
	})
	return &l.live[min(i, len(l.live)-1)]
}

// boundHead reads a range's upper bound as an EPK head: 32 hex digits,
// or "FF", the end of the space, above every head (whose top two bits
// are clear).
func boundHead(max string) (head [16]byte, ok bool) {
	if max == "FF" {
		head[0] = 0xFF
		return head, true
	}
	if len(max) != 2*len(head) {
		return head, false
	}
	_, err := hex.Decode(head[:], []byte(max))
	return head, err == nil
}

// byID returns partition id's range, live or split, and whether it is
// live.
func (l *partitionLayout) byID(id int) (r *pkRange, live bool) {
	for i := range l.live {
		if l.live[i].id == id {
			return &l.live[i], true
		}
	}
	for i := range l.gone {
		if l.gone[i].id == id {
			return &l.gone[i], false
		}
	}
	return nil, false
}

// ids are the live partitions' numbers, in EPK order.
func (l *partitionLayout) ids() []int {
	ids := make([]int, len(l.live))
	for i, r := range l.live {
		ids[i] = r.id
	}
	return ids
}

// every is every partition that has a log: the live ones and those
// split since.
func (l *partitionLayout) every() []int {
	ids := l.ids()
	for _, r := range l.gone {
		ids = append(ids, r.id)
	}
	return ids
}

// even reports whether l is still evenLayout(len(l.live)).
func (l *partitionLayout) even() bool { return len(l.gone) == 0 }

// split returns the layout with live partition id split in two at the
// EPK at (32 hex digits), or at the middle of its range when at is "",
// its children numbered l.next and l.next+1 and continuing its log after
// final, its last LSN count.
func (l *partitionLayout) split(id int, final uint64, at string) (*partitionLayout, error) {
	r, live := l.byID(id)
	if !live {
		return nil, fmt.Errorf("engine: partition %d is not live", id)
	}
	if l.next+1 > keyspace.MaxPartitionID {
		return nil, errors.New("engine: the container has made as many partitions as it may")
	}
	lo, ok1 := boundValue(r.min)
	hi, ok2 := boundValue(r.max)
	if !ok1 || !ok2 {
		return nil, errors.New("engine: corrupt partition bound")
	}
	mid := new(big.Int).Add(lo, hi)
	mid.Rsh(mid, 1)
	if at != "" {
		var ok bool
		if mid, ok = boundValue(at); !ok || len(at) != 32 || mid.Cmp(hi) >= 0 {
			return nil, fmt.Errorf("engine: %q is not an EPK within partition %d's range", at, id)
		}
	}
	if mid.Cmp(lo) <= 0 {
		return nil, fmt.Errorf("engine: partition %d's range is too small to split there", id)
	}
	midEPK := fmt.Sprintf("%032X", mid)
	anc := append(append([]ancestor(nil), r.ancestors...), ancestor{id: id, final: final})
	next := &partitionLayout{next: l.next + 2, pinned: l.pinned, gone: append(append([]pkRange(nil), l.gone...), *r)}
	for _, x := range l.live {
		if x.id != id {
			next.live = append(next.live, x)
			continue
		}
		next.live = append(next.live,
			pkRange{id: l.next, min: r.min, max: midEPK, ancestors: anc},
			pkRange{id: l.next + 1, min: midEPK, max: r.max, ancestors: anc})
	}
	return next, nil
}

// A layout's encoding (keyspace.Parts): an even one, not pinned, is its
// number of partitions, uint16; any other is a version byte, then next,
// the live ranges and the split ones, each as its id, min, max and
// ancestors. Version layoutPinned is a pinned layout, layoutVersion one
// that is not.
const (
	layoutVersion = 1
	layoutPinned  = 2
)

func (l *partitionLayout) encode() []byte {
	if l.even() && !l.pinned {
		return binary.BigEndian.AppendUint16(nil, uint16(len(l.live)))
	}
	b := []byte{layoutVersion}
	if l.pinned {
		b[0] = layoutPinned
	}
	b = binary.AppendUvarint(b, uint64(l.next))
	for _, list := range [][]pkRange{l.live, l.gone} {
		b = binary.AppendUvarint(b, uint64(len(list)))
		for _, r := range list {
			b = binary.AppendUvarint(b, uint64(r.id))
			b = binary.AppendUvarint(append(binary.AppendUvarint(b, uint64(len(r.min))), r.min...), uint64(len(r.max)))
			b = append(b, r.max...)
			b = binary.AppendUvarint(b, uint64(len(r.ancestors)))
			for _, a := range r.ancestors {
				b = binary.AppendUvarint(binary.AppendUvarint(b, uint64(a.id)), a.final)
			}
		}
	}
	return b
}

var errCorruptLayout = errors.New("engine: corrupt partition layout")

func decodeLayout(v []byte) (*partitionLayout, error) {
	if len(v) == 2 {
		return evenLayout(int(binary.BigEndian.Uint16(v))), nil
	}
	if len(v) == 0 || (v[0] != layoutVersion && v[0] != layoutPinned) {
		return nil, errCorruptLayout
	}
	d := layoutDecoder{b: v[1:]}
	l := &partitionLayout{next: int(d.uvarint()), pinned: v[0] == layoutPinned}
	for _, list := range []*[]pkRange{&l.live, &l.gone} {
		n := d.uvarint()
		for i := uint64(0); i < n && d.err == nil; i++ {
			r := pkRange{id: int(d.uvarint()), min: d.string(), max: d.string()}
			for k := d.uvarint(); k > 0 && d.err == nil; k-- {
				r.ancestors = append(r.ancestors, ancestor{id: int(d.uvarint()), final: d.uvarint()})
			}
			*list = append(*list, r)
		}
	}
	if d.err != nil || len(d.b) != 0 || len(l.live) == 0 || l.live[0].min != "" || l.live[len(l.live)-1].max != "FF" {
		return nil, errCorruptLayout
	}
	// The live ranges tile the space in order, between heads.
	var prev [16]byte
	for i, r := range l.live {
		head, ok := boundHead(r.max)
		if !ok || (i > 0 && (r.min != l.live[i-1].max || bytes.Compare(head[:], prev[:]) <= 0)) {
			return nil, errCorruptLayout
		}
		prev = head
	}
	return l, nil
}

type layoutDecoder struct {
	b   []byte
	err error
}

func (d *layoutDecoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 || v > 1<<50 {
		d.err = errCorruptLayout
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *layoutDecoder) string() string {
	n := d.uvarint()
	if d.err != nil || uint64(len(d.b)) < n {
		d.err = errCorruptLayout
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}
