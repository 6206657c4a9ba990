package query

import (
	"math"
	"strconv"

	"github.com/ebbdb/ebb/internal/jsontext"
)

// AppendJSON appends the compact JSON text of v to dst. Object members keep
// their order; undefined members are omitted; undefined array elements are
// written as null. An undefined v appends nothing.
func (v Value) AppendJSON(dst []byte) []byte {
	switch v.kind {
	case Undefined:
		return dst
	case Null:
		return append(dst, "null"...)
	case Bool:
		if v.num != 0 {
			return append(dst, "true"...)
		}
		return append(dst, "false"...)
	case Number:
		if v.str != "" {
			return append(dst, v.str...)
		}
		return appendNumber(dst, v.num)
	case String:
		return appendString(dst, v.str)
	case Array:
		dst = append(dst, '[')
		for i, e := range v.ref.elems {
			if i > 0 {
				dst = append(dst, ',')
			}
			if e.kind == Undefined {
				dst = append(dst, "null"...)
			} else {
				dst = e.AppendJSON(dst)
			}
		}
		return append(dst, ']')
	case Object:
		dst = append(dst, '{')
		first := true
		for _, m := range v.ref.members {
			if m.Value.kind == Undefined {
				continue
			}
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = appendString(dst, m.Name)
			dst = append(dst, ':')
			dst = m.Value.AppendJSON(dst)
		}
		return append(dst, '}')
	}
	return dst
}

// appendNumber formats f the way JavaScript's Number.prototype.toString
// does (which is what Cosmos DB emits): integers without a fraction, the
// shortest round-tripping digits, exponent form below 1e-6 and from 1e21.
func appendNumber(dst []byte, f float64) []byte {
	if f == 0 {
		return append(dst, '0')
	}
	abs := math.Abs(f)
	if abs < 1e15 && f == math.Trunc(f) {
		return strconv.AppendInt(dst, int64(f), 10)
	}
	if abs >= 1e21 || abs < 1e-6 {
		start := len(dst)
		dst = strconv.AppendFloat(dst, f, 'e', -1, 64)
		// Go writes e-07; JavaScript writes e-7.
		for j := start; j < len(dst); j++ {
			if dst[j] == 'e' && j+2 < len(dst) && dst[j+2] == '0' && j+3 < len(dst) {
				copy(dst[j+2:], dst[j+3:])
				dst = dst[:len(dst)-1]
				break
			}
		}
		return dst
	}
	return strconv.AppendFloat(dst, f, 'f', -1, 64)
}

// appendString appends s as a JSON string literal, as the service
// writes query results.
func appendString(dst []byte, s string) []byte {
	return jsontext.Minimal.AppendString(dst, s)
}
