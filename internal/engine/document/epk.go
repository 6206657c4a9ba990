package document

import (
	"encoding/binary"
	"encoding/hex"
	"math"
	"math/bits"
	"strings"

	"github.com/ebbdb/ebb/internal/engine/dberr"
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

// EPKV2 returns the version 2 EPK of pk (upper-case hex) for def.
func (def PKDef) EPKV2(pk PartitionKey) string {
	var sb strings.Builder
	if def.Kind != "MultiHash" {
		var buf []byte
		for _, c := range pk {
			buf = AppendEPKInput(buf, c)
		}
		sb.WriteString(HashEPKV2(buf, true))
		return sb.String()
	}
	for _, c := range pk {
		sb.WriteString(HashEPKV2(AppendEPKInput(nil, c), true))
	}
	return sb.String()
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
	return append(append(append(dst, 0x08), c.Str...), 0xFF)
}

// HashEPKV2 hashes an encoded value; routing clears the top two bits so
// every EPK sorts below "FF", the end of the key space.
func HashEPKV2(data []byte, routing bool) string {
	h1, h2 := murmur3x64(data)
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], h2)
	binary.BigEndian.PutUint64(b[8:], h1)
	if routing {
		b[0] &= 0x3F
	}
	return strings.ToUpper(hex.EncodeToString(b[:]))
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
	if def.version != 2 {
		return nil, dberr.BadRequest("The effective partition key range [%q, %q) covers part of a container whose partition key is version %d; Ebb serves such sub-ranges for version 2 keys only. Read the whole range, or by partition key.", start, end, def.version)
	}
	start, end = strings.ToUpper(start), strings.ToUpper(end)
	n := len(def.Paths)
	return func(pkEnc []byte) bool {
		pk, _, err := DecodePK(pkEnc, n)
		if err != nil {
			return false
		}
		epk := def.EPKV2(pk)
		return epk >= start && (end == "" || epk < end)
	}, nil
}
