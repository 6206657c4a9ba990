package keyspace

import (
	"bytes"
	"math"
	"testing"

	"github.com/ebbdb/ebb/internal/engine/document"
)

func TestExpiryKeyRoundTrip(t *testing.T) {
	rid := [8]byte{1, 2, 3, 4, 5, 6, 7, 8}
	pks := []document.PartitionKey{
		{{Kind: document.PKString, Str: "tenant"}},
		{{Kind: document.PKNumber, Num: -2.5}, {Kind: document.PKNull}, {Kind: document.PKString, Str: "a\x00b"}},
		{{Kind: document.PKNone}},
	}
	for _, space := range []byte{ExpOwn, ExpTs} {
		for _, at := range []int64{math.MinInt64, -1, 0, 1_795_327_200, math.MaxInt64} {
			for _, pk := range pks {
				enc := pk.Encode(nil)
				key := ExpiryKey(space, rid, at, enc, "id\x00/é")
				if !bytes.HasPrefix(key, CollPrefix(space, rid)) {
					t.Fatalf("key %x lacks its container prefix", key)
				}
				e, err := DecodeExpiry(key, len(pk))
				if err != nil || e.Time != at || !bytes.Equal(e.PK, enc) || string(e.ID) != "id\x00/é" {
					t.Fatalf("DecodeExpiry(ExpiryKey(%d, %v)) = %+v, %v", at, pk, e, err)
				}
				if e, err := DecodeExpiry(key, 0); err != nil || e.Time != at || e.PK != nil {
					t.Fatalf("time-only DecodeExpiry = %+v, %v; want time %d", e, err, at)
				}
			}
		}
	}
}

// TestExpiryOrder checks what the purger's scans rely on: keys sort by
// time first, and ExpiryBound(through) is above every key at or before
// through and at or below every key after it.
func TestExpiryOrder(t *testing.T) {
	rid := [8]byte{9}
	pk := document.PartitionKey{{Kind: document.PKString, Str: "zzz"}}.Encode(nil)
	for _, through := range []int64{-5, 0, 99, 1_795_327_200} {
		bound := ExpiryBound(ExpOwn, rid, through)
		at := ExpiryKey(ExpOwn, rid, through, pk, "\xff\xff")
		after := ExpiryKey(ExpOwn, rid, through+1, nil, "")
		if bytes.Compare(at, bound) >= 0 || bytes.Compare(after, bound) < 0 {
			t.Errorf("through %d: bound %x, key at %x, key after %x", through, bound, at, after)
		}
	}
}

func FuzzDecodeExpiry(f *testing.F) {
	rid := [8]byte{1}
	f.Add(ExpiryKey(ExpOwn, rid, 42, document.PartitionKey{{Kind: document.PKString, Str: "p"}}.Encode(nil), "x"), 1)
	f.Add([]byte{ExpTs, 1}, 2)
	f.Fuzz(func(t *testing.T, key []byte, n int) {
		if n < 0 || n > 3 {
			return
		}
		_, _ = DecodeExpiry(key, n) // any input may be refused; none may panic
	})
}
