package keys

import (
	"bytes"
	"math"
	"testing"
)

func encodeTuple(a []byte, n int64) []byte {
	return AppendInt64(AppendBytes(nil, a), n)
}

func TestBytesRoundTrip(t *testing.T) {
	for _, in := range [][]byte{{}, {0}, {0, 0}, {0xFF}, []byte("a\x00b"), []byte("plain")} {
		k := AppendBytes([]byte("p"), in)
		got, rest, err := DecodeBytes(k[1:])
		if err != nil || !bytes.Equal(got, in) || len(rest) != 0 {
			t.Errorf("DecodeBytes(%q) = %q, %q, %v; want %q", k, got, rest, err, in)
		}
	}
}

func TestOrder(t *testing.T) {
	cases := []struct {
		a, b []byte
	}{
		{[]byte(""), []byte("\x00")},
		{[]byte("a"), []byte("a\x00")},
		{[]byte("a\x00"), []byte("a\x01")},
		{[]byte("a"), []byte("ab")},
		{[]byte("ab"), []byte("b")},
	}
	for _, c := range cases {
		ka, kb := AppendBytes(nil, c.a), AppendBytes(nil, c.b)
		if bytes.Compare(ka, kb) >= 0 {
			t.Errorf("enc(%q)=%x not before enc(%q)=%x", c.a, ka, c.b, kb)
		}
	}
	ints := []int64{math.MinInt64, -2, -1, 0, 1, 2, math.MaxInt64}
	for i := 1; i < len(ints); i++ {
		if bytes.Compare(AppendInt64(nil, ints[i-1]), AppendInt64(nil, ints[i])) >= 0 {
			t.Errorf("int64 %d not before %d", ints[i-1], ints[i])
		}
	}
}

func TestPrefixEnd(t *testing.T) {
	if got := PrefixEnd([]byte{1, 0xFF}); !bytes.Equal(got, []byte{2}) {
		t.Errorf("PrefixEnd = %x, want 02", got)
	}
	if got := PrefixEnd([]byte{0xFF}); got != nil {
		t.Errorf("PrefixEnd(ff) = %x, want nil", got)
	}
}

// FuzzTuple checks that (bytes, int64) tuples round-trip and that their
// encodings sort exactly as the tuples do.
func FuzzTuple(f *testing.F) {
	f.Add([]byte("a"), int64(1), []byte("a\x00"), int64(-1))
	f.Add([]byte{}, int64(0), []byte{0xFF}, int64(math.MaxInt64))
	f.Fuzz(func(t *testing.T, a []byte, n int64, b []byte, m int64) {
		ka, kb := encodeTuple(a, n), encodeTuple(b, m)
		ga, rest, err := DecodeBytes(ka)
		if err != nil || !bytes.Equal(ga, a) {
			t.Fatalf("round trip %q: got %q, %v", a, ga, err)
		}
		if gn, rest, err := DecodeInt64(rest); err != nil || gn != n || len(rest) != 0 {
			t.Fatalf("round trip %d: got %d, %v", n, gn, err)
		}
		want := bytes.Compare(a, b)
		if want == 0 {
			want = cmpInt(n, m)
		}
		if got := bytes.Compare(ka, kb); got != want {
			t.Fatalf("order of (%q,%d) vs (%q,%d): encoded %d, tuples %d", a, n, b, m, got, want)
		}
	})
}

// FuzzDecode feeds arbitrary bytes to the decoders: errors are fine,
// panics are not.
func FuzzDecode(f *testing.F) {
	f.Add([]byte{0, 1})
	f.Add([]byte{0})
	f.Add([]byte{0, 2})
	f.Fuzz(func(t *testing.T, k []byte) {
		_, _, _ = DecodeBytes(k)
		_, _, _ = DecodeInt64(k)
		_, _, _ = DecodeFixed(k, 8)
	})
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
