package query

import (
	"math"
	"strconv"
	"unicode/utf8"
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

var hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string literal. Invalid UTF-8 is
// replaced by U+FFFD so the output is always valid JSON.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, "\ufffd"...)
			i++
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
