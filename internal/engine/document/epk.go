package document

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math"
	"math/bits"
	"strings"
	"unicode/utf8"

	"github.com/ebbdb/ebb/internal/keys"
)

// Effective partition keys (EPKs): the hash Cosmos places a partition key
// at in the key space ["", "FF"). Ebb keeps every container in one range
// covering the whole space, so EPKs matter only where a client addresses
// part of that space, as JavaScript's change feed does for a prefix of a
// hierarchical key (x-ms-start-epk / x-ms-end-epk).
//
// Version 2 (the SDKs' default): each value is encoded with a type byte
// (strings end with 0xFF), hashed with MurmurHash3 x64 128 (seed 0), the
// 16 bytes taken in big-endian order and the top two bits cleared; Hash
// keys hash all values together, MultiHash keys concatenate one hash per
// level, so a prefix's EPK is a prefix of its keys' EPKs.
//
// Version 1 (Hash keys created with version 1, the service's old
// default): strings are cut to their first 100 UTF-16 code units; the
// values, encoded as for version 2 but with strings ending in 0x00, are
// hashed with MurmurHash3 x86 32 (seed 0); the EPK is the hex of the
// order-preserving binary encoding of the hash (as a number) followed by
// the cut values. This is PartitionKeyInternal.
// GetEffectivePartitionKeyForHashPartitioning with the components'
// WriteForHashing and WriteForBinaryEncoding in azure-cosmos-dotnet-v3
// (Microsoft.Azure.Cosmos/src/direct), and the JS SDK's
// utils/hashing/v1.js, whose test vectors TestEPKV1 checks.
//
// Ebb stores -0 as 0 (componentFromJSON), so a key of -0 gets the EPK of
// 0 here, where the service hashes its sign bit.

// EPK returns the effective partition key of pk under def (upper-case
// hex): version 1 for a Hash key of version 1, else version 2.
func (def PKDef) EPK(pk PartitionKey) string {
	if def.Kind != "MultiHash" && def.version == 1 {
		return EPKV1(pk)
	}
	return def.EPKV2(pk)
}

// EPKV2 returns the version 2 EPK of pk (upper-case hex) for def.
func (def PKDef) EPKV2(pk PartitionKey) string {
	var inBuf [64]byte
	var epkBuf [maxEPKLen]byte
	h := epkHash{multi: def.Kind == "MultiHash", in: inBuf[:0], epk: epkBuf[:0]}
	for _, c := range pk {
		h.in = AppendEPKInput(h.in, c)
		h = h.endComponent()
	}
	return h.result()
}

// epkHash builds a version 2 EPK component by component: a MultiHash
// key's EPK is each component's hash in turn, any other key's the hash
// of all its components together. in holds the components not yet
// hashed, epk the EPK so far.
type epkHash struct {
	multi   bool
	in, epk []byte
}

// endComponent ends the component appended to in last. (Value
// receivers: through a pointer, the buffers a caller gives in and epk
// would escape to the heap.)
func (h epkHash) endComponent() epkHash {
	if h.multi {
		h.epk, h.in = appendHashEPKV2(h.epk, h.in, true), h.in[:0]
	}
	return h
}

// result is the EPK of the components ended.
func (h epkHash) result() string {
	if !h.multi {
		h.epk = appendHashEPKV2(h.epk, h.in, true)
	}
	return string(h.epk)
}

// maxEPKLen is the length of the longest EPK of a key of the service's
// deepest hierarchy (three levels, 32 hex digits each): longer ones still
// work, through the heap.
const maxEPKLen = 3 * 32

// EPKOfKey is EPK of the partition key whose len(def.Paths) components
// are encoded at the front of key (as PartitionKey.Encode writes them),
// hashed from the encoding as it stands: a range-scoped scan places
// every stored item in its partition by it, and decoding each key into
// a PartitionKey first cost it most of its time.
func (def PKDef) EPKOfKey(key []byte) (string, error) {
	if def.Kind != "MultiHash" && def.version == 1 {
		pk, _, err := DecodePK(key, len(def.Paths))
		if err != nil {
			return "", err
		}
		return EPKV1(pk), nil
	}
	var inBuf [64]byte
	var epkBuf [maxEPKLen]byte
	h := epkHash{multi: def.Kind == "MultiHash", in: inBuf[:0], epk: epkBuf[:0]}
	for range def.Paths {
		var err error
		if h.in, key, err = appendKeyInput(h.in, key); err != nil {
			return "", err
		}
		h = h.endComponent()
	}
	return h.result(), nil
}

// EPKHeadOfKey returns the first 16 bytes of the version 2 EPK of the
// partition key encoded at the front of key, as bytes rather than hex:
// the hash of the whole key, or of a hierarchical key's first level. A
// partition's bounds are whole hashes of that kind (32 hex digits), so
// comparing heads places a key in its partition as comparing EPKs does,
// without the hex or the string: a range-scoped scan places every
// logical partition it meets by it. Keys of version 1 have no head.
func (def PKDef) EPKHeadOfKey(key []byte) (head [16]byte, err error) {
	if def.Kind != "MultiHash" && def.version == 1 {
		return head, errors.New("document: a key of version 1 has no EPK head")
	}
	n := len(def.Paths)
	if def.Kind == "MultiHash" {
		n = 1
	}
	var inBuf [64]byte
	in := inBuf[:0]
	for range n {
		if in, key, err = appendKeyInput(in, key); err != nil {
			return head, err
		}
	}
	return routingHead(in), nil
}

// EPKHead is EPKHeadOfKey for a partition key of version 2 as it is
// parsed: the head of def.EPKV2(pk).
func (def PKDef) EPKHead(pk PartitionKey) [16]byte {
	if def.Kind == "MultiHash" {
		pk = pk[:min(len(pk), 1)]
	}
	var inBuf [64]byte
	in := inBuf[:0]
	for _, c := range pk {
		in = AppendEPKInput(in, c)
	}
	return routingHead(in)
}

// routingHead is the hash of in with its top two bits cleared, as
// routing clears them: an EPK's first 16 bytes.
func routingHead(in []byte) [16]byte {
	head := hashV2(in)
	head[0] &= 0x3F
	return head
}

// appendKeyInput appends to in the hash input of the partition key
// component encoded at the front of key, and returns the rest of key.
func appendKeyInput(in, key []byte) ([]byte, []byte, error) {
	if len(key) == 0 {
		return in, key, keys.ErrMalformed
	}
	kind := key[0]
	key = key[1:]
	switch kind {
	case PKNone, PKNull, PKFalse, PKTrue:
		return AppendEPKInput(in, PKComponent{Kind: kind}), key, nil
	case PKNumber:
		c, rest, err := decodePKNumber(key)
		if err != nil {
			return in, key, err
		}
		return AppendEPKInput(in, c), rest, nil
	case PKString:
		var err error
		in = append(in, epkString)
		if in, key, err = keys.AppendDecodedBytes(in, key); err != nil {
			return in, key, err
		}
		return append(in, epkStringEnd), key, nil
	}
	return in, key, keys.ErrMalformed
}

// AppendEPKInput appends one value as the version 2 hash reads it.
func AppendEPKInput(dst []byte, c PKComponent) []byte {
	switch c.Kind {
	case PKNone:
		return append(dst, 0x00)
	case PKNull:
		return append(dst, 0x01)
	case PKFalse:
		return append(dst, 0x02)
	case PKTrue:
		return append(dst, 0x03)
	case PKNumber:
		return binary.LittleEndian.AppendUint64(append(dst, 0x05), math.Float64bits(c.Num))
	}
	return append(append(append(dst, epkString), c.Str...), epkStringEnd)
}

// How the version 2 hash reads a string: a type byte, the bytes, an end
// byte.
const (
	epkString    = 0x08
	epkStringEnd = 0xFF
)

// HashEPKV2 hashes an encoded value; routing clears the top two bits so
// every EPK sorts below "FF", the end of the key space.
func HashEPKV2(data []byte, routing bool) string {
	var b [32]byte
	return string(appendHashEPKV2(b[:0], data, routing))
}

// appendHashEPKV2 appends HashEPKV2(data, routing) to dst.
func appendHashEPKV2(dst, data []byte, routing bool) []byte {
	b := hashV2(data)
	if routing {
		b[0] &= 0x3F
	}
	return appendEPKHex(dst, b[:])
}

// HeadText writes an EPK head as an EPK (and a range bound) is written:
// its 32 upper-case hex digits.
func HeadText(head [16]byte) string {
	var b [32]byte
	return string(appendEPKHex(b[:0], head[:]))
}

// appendEPKHex appends b in upper-case hex, as EPKs are written.
func appendEPKHex(dst, b []byte) []byte {
	const digits = "0123456789ABCDEF"
	for _, c := range b {
		dst = append(dst, digits[c>>4], digits[c&0xF])
	}
	return dst
}

// hashV2 is the version 2 hash of data: MurmurHash3 x64 128, its two
// halves big-endian, high half first.
func hashV2(data []byte) (b [16]byte) {
	h1, h2 := murmur3x64(data)
	binary.BigEndian.PutUint64(b[:8], h2)
	binary.BigEndian.PutUint64(b[8:], h1)
	return b
}

// murmur3x64 is MurmurHash3's x64 128-bit variant with seed 0.
func murmur3x64(data []byte) (h1, h2 uint64) {
	const c1, c2 = 0x87c37b91114253d5, 0x4cf5ad432745937f
	n := len(data)
	for len(data) >= 16 {
		k1 := binary.LittleEndian.Uint64(data)
		k2 := binary.LittleEndian.Uint64(data[8:])
		data = data[16:]
		h1 ^= bits.RotateLeft64(k1*c1, 31) * c2
		h1 = (bits.RotateLeft64(h1, 27)+h2)*5 + 0x52dce729
		h2 ^= bits.RotateLeft64(k2*c2, 33) * c1
		h2 = (bits.RotateLeft64(h2, 31)+h1)*5 + 0x38495ab5
	}
	var k1, k2 uint64
	for i := len(data) - 1; i >= 8; i-- {
		k2 = k2<<8 | uint64(data[i])
	}
	for i := min(len(data), 8) - 1; i >= 0; i-- {
		k1 = k1<<8 | uint64(data[i])
	}
	if len(data) > 8 {
		h2 ^= bits.RotateLeft64(k2*c2, 33) * c1
	}
	if len(data) > 0 {
		h1 ^= bits.RotateLeft64(k1*c1, 31) * c2
	}
	h1 ^= uint64(n)
	h2 ^= uint64(n)
	h1 += h2
	h2 += h1
	h1, h2 = fmix64(h1), fmix64(h2)
	h1 += h2
	h2 += h1
	return h1, h2
}

func fmix64(k uint64) uint64 {
	k ^= k >> 33
	k *= 0xff51afd7ed558ccd
	k ^= k >> 33
	k *= 0xc4ceb9fe1a85ec53
	return k ^ k>>33
}

// EPKFilter returns the test a change feed applies to each item's encoded
// partition key for the EPK range [start, end); nil when the range is the
// whole key space (the container's one range).
func (def PKDef) EPKFilter(start, end string) (func(pkEnc []byte) bool, error) {
	if start == "" && (end == "" || strings.EqualFold(end, "FF")) {
		return nil, nil
	}
	start, end = strings.ToUpper(start), strings.ToUpper(end)
	return func(pkEnc []byte) bool {
		epk, err := def.EPKOfKey(pkEnc)
		return err == nil && epk >= start && (end == "" || epk < end)
	}, nil
}

// v1MaxString is how much of a string version 1 hashing reads: its
// first 100 UTF-16 code units (StringPartitionKeyComponent.Truncate), and
// the binary encoding appends at most 100 bytes of it
// (MaxStringBytesToAppend), then a 101st to mark the cut.
const v1MaxString = 100

// EPKV1 returns the version 1 EPK of pk (upper-case hex).
func EPKV1(pk PartitionKey) string {
	cut := make(PartitionKey, len(pk))
	var in []byte
	for i, c := range pk {
		if c.Kind == PKString {
			c.Str = truncateUTF16(c.Str, v1MaxString)
		}
		cut[i] = c
		in = AppendEPKInputV1(in, c)
	}
	out := appendV1Number(nil, float64(murmur3x86(in)))
	for _, c := range cut {
		out = appendV1Binary(out, c)
	}
	return strings.ToUpper(hex.EncodeToString(out))
}

// HashEPKV1 is version 1's hash of an encoded value (AppendEPKInputV1),
// the number that leads its EPK.
func HashEPKV1(data []byte) uint32 { return murmur3x86(data) }

// AppendEPKInputV1 appends one value as the version 1 hash reads it: as
// version 2 does, but a string ends with 0x00.
func AppendEPKInputV1(dst []byte, c PKComponent) []byte {
	if c.Kind == PKString {
		return append(append(append(dst, 0x08), c.Str...), 0x00)
	}
	return AppendEPKInput(dst, c)
}

// truncateUTF16 cuts s to its first n UTF-16 code units, as .NET's
// Substring does; a surrogate pair split by the cut leaves its first half,
// which UTF-8 encoding turns into U+FFFD, as .NET's does.
func truncateUTF16(s string, n int) string {
	if len(s) <= n {
		return s // at most n bytes: at most n code units
	}
	units := 0
	for i, r := range s {
		w := 1
		if r >= 0x10000 {
			w = 2
		}
		if units+w > n {
			if units < n { // only the high surrogate fits
				return s[:i] + string(utf8.RuneError)
			}
			return s[:i]
		}
		units += w
	}
	return s
}

// appendV1Binary appends the order-preserving binary encoding of one value
// (WriteForBinaryEncoding): its type byte, then for a number its encoding
// below, for a string each UTF-8 byte plus one (0xFF stays) and a 0x00 end,
// or, past 100 bytes, the first 101 bytes and no end.
func appendV1Binary(dst []byte, c PKComponent) []byte {
	switch c.Kind {
	case PKNumber:
		return appendV1Number(dst, c.Num)
	case PKString:
		dst = append(dst, 0x08)
		short := len(c.Str) <= v1MaxString
		n := len(c.Str)
		if !short {
			n = v1MaxString + 1
		}
		for i := 0; i < n; i++ {
			b := c.Str[i]
			if b < 0xFF {
				b++
			}
			dst = append(dst, b)
		}
		if short {
			dst = append(dst, 0x00)
		}
		return dst
	}
	return AppendEPKInput(dst, c) // the type byte alone
}

// appendV1Number appends a number's binary encoding: 0x05, then the
// double mapped to an unsigned integer that sorts as the numbers do, its
// top byte whole and the rest in 7-bit groups, each byte's low bit 1 but
// the last's.
func appendV1Number(dst []byte, f float64) []byte {
	u := math.Float64bits(f)
	if u < 1<<63 {
		u ^= 1 << 63
	} else {
		u = ^u + 1
	}
	dst = append(dst, 0x05, byte(u>>56))
	u <<= 8
	var b byte
	for first := true; ; first = false {
		if !first {
			dst = append(dst, b)
		}
		b = byte(u>>56) | 0x01
		u <<= 7
		if u == 0 {
			break
		}
	}
	return append(dst, b&0xFE)
}

// murmur3x86 is MurmurHash3's x86 32-bit variant with seed 0.
func murmur3x86(data []byte) uint32 {
	const c1, c2 = 0xcc9e2d51, 0x1b873593
	var h uint32
	n := len(data)
	for len(data) >= 4 {
		k := binary.LittleEndian.Uint32(data)
		data = data[4:]
		h ^= bits.RotateLeft32(k*c1, 15) * c2
		h = bits.RotateLeft32(h, 13)*5 + 0xe6546b64
	}
	var k uint32
	for i := len(data) - 1; i >= 0; i-- {
		k = k<<8 | uint32(data[i])
	}
	if len(data) > 0 {
		h ^= bits.RotateLeft32(k*c1, 15) * c2
	}
	h ^= uint32(n)
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	return h ^ h>>16
}
