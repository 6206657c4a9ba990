// Package jsontext appends JSON string literals without reflection, in
// the two styles Ebb writes: as encoding/json does (etags and other text
// Ebb encodes itself, held to json.Marshal byte for byte), and as the
// service writes query results (only what JSON requires is escaped).
package jsontext

import "unicode/utf8"

// Style is a way of writing JSON strings.
type Style struct {
	// safe marks the ASCII bytes written as they are.
	safe *[utf8.RuneSelf]bool
	// encodingJSON also escapes U+2028 and U+2029 and writes invalid
	// UTF-8 as the escape \ufffd; otherwise invalid UTF-8 is written as
	// the character U+FFFD.
	encodingJSON bool
}

var (
	// EncodingJSON writes as encoding/json does: <, > and & as \u003c,
	// \u003e and \u0026, U+2028 and U+2029 escaped, invalid UTF-8 as
	// \ufffd.
	EncodingJSON = Style{safe: table(func(c byte) bool { return c != '<' && c != '>' && c != '&' }), encodingJSON: true}
	// Minimal escapes only quotes, backslashes and control characters, as
	// the service's query results do; invalid UTF-8 becomes U+FFFD, so
	// the output is always valid JSON.
	Minimal = Style{safe: table(func(byte) bool { return true })}
)

func table(also func(c byte) bool) *[utf8.RuneSelf]bool {
	var t [utf8.RuneSelf]bool
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && also(byte(c))
	}
	return &t
}

const hexDigits = "0123456789abcdef"

// AppendString appends s to dst as a JSON string literal.
func (st Style) AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if st.safe[c] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '\\', '"':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			if st.encodingJSON {
				dst = append(dst, `\ufffd`...)
			} else {
				dst = append(dst, "\ufffd"...)
			}
		case st.encodingJSON && (r == '\u2028' || r == '\u2029'):
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
