package engine

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"math/big"
	"math/rand/v2"
	"testing"
)

// FuzzPartitionLayout decodes arbitrary stored bytes as a partition
// layout, which must never panic, and splits the layouts it builds from
// the input's bytes, pinned or not: every layout it makes tiles the EPK
// space in order, and reads back as it was written.
func FuzzPartitionLayout(f *testing.F) {
	f.Add([]byte{0, 4}, []byte{0, 1, 2})
	f.Add(evenLayout(3).encode(), []byte{1, 1, 1, 1})
	l, _ := evenLayout(2).split(0, 17, "")
	f.Add(l.encode(), []byte{0})
	f.Add([]byte{layoutVersion, 0xff, 0xff, 0xff}, []byte{})
	f.Add((&partitionLayout{live: evenLayout(2).live, next: 2, pinned: true}).encode(), []byte{0, 0})
	f.Fuzz(func(t *testing.T, stored, splits []byte) {
		if l, err := decodeLayout(stored); err == nil {
			checkTiles(t, l)
		}
		l := evenLayout(int(len(splits)%7) + 1)
		l.pinned = len(splits)%2 == 0
		readsBack := func() {
			t.Helper()
			back, err := decodeLayout(l.encode())
			if err != nil || !bytes.Equal(back.encode(), l.encode()) || back.pinned != l.pinned {
				t.Fatalf("layout does not read back: %v", err)
			}
		}
		readsBack()
		for i, b := range splits {
			live := l.ids()
			id := live[int(b)%len(live)]
			// An odd byte asks for a boundary of its own, which the
			// range may not hold.
			next, err := l.split(id, uint64(i)*3, fmt.Sprintf("%02X%030X", b>>1, i))
			if b%2 == 0 || err != nil {
				next, err = l.split(id, uint64(i)*3, "")
			}
			if err != nil {
				break // a range too small to split
			}
			l = next
			checkTiles(t, l)
			readsBack()
		}
	})
}

// checkTiles fails unless l's live ranges tile ["", "FF") in order,
// between heads, and every EPK falls in the range find places its head
// in: at and just below every bound too.
func checkTiles(t *testing.T, l *partitionLayout) {
	t.Helper()
	prev := ""
	for _, r := range l.live {
		if r.min != prev || (r.max != "FF" && r.max <= r.min) {
			t.Fatalf("ranges do not tile: %+v", l.live)
		}
		prev = r.max
	}
	if prev != "FF" {
		t.Fatalf("the last range ends at %q", prev)
	}
	// The layout as a container keeps it, with its bounds as heads too.
	var c container
	c.setLayout(l)
	for _, r := range l.live {
		if _, ok := boundHead(r.max); !ok {
			t.Fatalf("a bound that is not a head: %+v", l.live)
		}
	}
	epks := []string{"00000000000000000000000000000000", "3FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF"}
	for _, r := range l.live[1:] {
		epks = append(epks, r.min) // a bound, and the EPK just below it
		v, _ := boundValue(r.min)
		epks = append(epks, fmt.Sprintf("%032X", v.Sub(v, big.NewInt(1))))
	}
	for range 8 {
		epks = append(epks, boundText(rand.Uint64()>>2, rand.Uint64()))
	}
	for _, epk := range epks {
		var head [16]byte
		hex.Decode(head[:], []byte(epk))
		if r := l.find(head); epk < r.min || (r.max != "FF" && epk >= r.max) {
			t.Fatalf("find(%s) = [%s, %s)", epk, r.min, r.max)
		}
	}
}

// boundText writes a 128-bit value as an EPK: 32 hex digits.
func boundText(hi, lo uint64) string {
	const digits = "0123456789ABCDEF"
	b := make([]byte, 32)
	for i := 15; i >= 0; i-- {
		b[i] = digits[hi&15]
		hi >>= 4
		b[16+i] = digits[lo&15]
		lo >>= 4
	}
	return string(b)
}
