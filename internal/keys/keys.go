// Package keys is Ebb's order-preserving tuple encoding for storage keys.
//
// A key is a sequence of elements appended one after another. Each
// encoding preserves order bytewise, so a storage scan walks tuples in
// tuple order, and no encoded element is a prefix of a different element
// of the same kind, so a tuple prefix bounds exactly the keys below it.
//
//   - Bytes/String: the bytes with 0x00 escaped as 0x00 0xFF, then the
//     terminator 0x00 0x01.
//   - Uint64: 8 bytes big-endian. Int64: the same with the sign bit
//     flipped, so negatives sort first.
//   - Fixed: raw bytes of a length both sides know (resource ids).
//
// Decoders return an error, never panic, on malformed input; the fuzz
// tests hold them to that.
package keys

import (
	"encoding/binary"
	"errors"
)

// ErrMalformed is returned when a key does not decode.
var ErrMalformed = errors.New("keys: malformed key")

const (
	escape     = 0x00
	escapedNul = 0xFF
	terminator = 0x01
)

// AppendBytes appends an escaped, terminated byte string.
func AppendBytes(dst, b []byte) []byte {
	for _, c := range b {
		if c == escape {
			dst = append(dst, escape, escapedNul)
			continue
		}
		dst = append(dst, c)
	}
	return append(dst, escape, terminator)
}

// AppendString appends s as AppendBytes would.
func AppendString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if s[i] == escape {
			dst = append(dst, escape, escapedNul)
			continue
		}
		dst = append(dst, s[i])
	}
	return append(dst, escape, terminator)
}

// DecodeBytes decodes one element written by AppendBytes and returns it
// with the rest of the key.
func DecodeBytes(key []byte) (elem, rest []byte, err error) {
	elem, rest, err = AppendDecodedBytes(nil, key)
	if err == nil && elem == nil {
		elem = []byte{}
	}
	return elem, rest, err
}

// AppendDecodedBytes is DecodeBytes that appends the element to dst.
func AppendDecodedBytes(dst, key []byte) (_, rest []byte, err error) {
	for i := 0; i < len(key); i++ {
		c := key[i]
		if c != escape {
			dst = append(dst, c)
			continue
		}
		if i+1 >= len(key) {
			return nil, nil, ErrMalformed
		}
		switch key[i+1] {
		case escapedNul:
			dst = append(dst, escape)
			i++
		case terminator:
			return dst, key[i+2:], nil
		default:
			return nil, nil, ErrMalformed
		}
	}
	return nil, nil, ErrMalformed
}

// AppendUint64 appends v as 8 big-endian bytes.
func AppendUint64(dst []byte, v uint64) []byte {
	return binary.BigEndian.AppendUint64(dst, v)
}

// DecodeUint64 decodes one element written by AppendUint64.
func DecodeUint64(key []byte) (v uint64, rest []byte, err error) {
	if len(key) < 8 {
		return 0, nil, ErrMalformed
	}
	return binary.BigEndian.Uint64(key), key[8:], nil
}

// AppendInt64 appends v so that signed order is byte order.
func AppendInt64(dst []byte, v int64) []byte {
	return AppendUint64(dst, uint64(v)^(1<<63))
}

// DecodeInt64 decodes one element written by AppendInt64.
func DecodeInt64(key []byte) (v int64, rest []byte, err error) {
	u, rest, err := DecodeUint64(key)
	return int64(u ^ (1 << 63)), rest, err
}

// DecodeFixed splits off n raw bytes.
func DecodeFixed(key []byte, n int) (elem, rest []byte, err error) {
	if len(key) < n {
		return nil, nil, ErrMalformed
	}
	return key[:n], key[n:], nil
}

// PrefixEnd returns the smallest key greater than every key that starts
// with prefix, or nil when there is none (all 0xFF).
func PrefixEnd(prefix []byte) []byte {
	end := append([]byte(nil), prefix...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] != 0xFF {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}
