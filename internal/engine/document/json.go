package document

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/ebbdb/ebb/internal/engine/dberr"

	"github.com/ebbdb/ebb/internal/jsontext"
)

// Documents are kept as the bytes the client sent, with system properties
// appended, so reads return stored bytes without re-encoding. These
// helpers walk the top level of a JSON object that has already passed
// json.Valid, which is what lets them skip values without re-validating.

// Member is one top-level Member of a JSON object.
type Member struct {
	Key string
	// Val is the raw JSON value.
	Val []byte
	// Start and End bound the whole "key": value text in the document.
	Start, End int
}

// ObjectMembers returns the members of a JSON object in document order.
// REQUIRES: json.Valid(doc).
func ObjectMembers(doc []byte) ([]Member, bool) {
	return AppendMembers(nil, doc)
}

// AppendMembers is ObjectMembers appending to out, for a caller that
// keeps a buffer of members from one document to the next.
// REQUIRES: json.Valid(doc).
func AppendMembers(out []Member, doc []byte) ([]Member, bool) {
	i := SkipSpace(doc, 0)
	if i >= len(doc) || doc[i] != '{' {
		return out, false
	}
	i = SkipSpace(doc, i+1)
	if i < len(doc) && doc[i] == '}' {
		return out, true
	}
	for i < len(doc) {
		start := i
		keyEnd := skipString(doc, i)
		key := Unquote(doc[i:keyEnd])
		i = SkipSpace(doc, keyEnd)
		i = SkipSpace(doc, i+1) // ':'
		valEnd := SkipValue(doc, i)
		out = append(out, Member{Key: key, Val: doc[i:valEnd], Start: start, End: valEnd})
		i = SkipSpace(doc, valEnd)
		if i >= len(doc) || doc[i] == '}' {
			break
		}
		i = SkipSpace(doc, i+1) // ','
	}
	return out, true
}

// Lookup returns the value of the last member named key, nil if there is
// none. An object that passed CheckShape has at most one.
func Lookup(ms []Member, key string) []byte {
	var v []byte
	for _, m := range ms {
		if m.Key == key {
			v = m.Val
		}
	}
	return v
}

// MemberValue returns the value of the last member of the JSON object doc
// named name, nil if doc is not an object or has none. Unlike
// objectMembers it allocates nothing for names without escapes.
// REQUIRES: json.Valid(doc).
func MemberValue(doc []byte, name string) []byte {
	i := SkipSpace(doc, 0)
	if i >= len(doc) || doc[i] != '{' {
		return nil
	}
	var v []byte
	for i = SkipSpace(doc, i+1); i < len(doc) && doc[i] == '"'; {
		keyEnd := skipString(doc, i)
		lit := doc[i:keyEnd]
		match := len(lit) >= 2 && string(lit[1:len(lit)-1]) == name
		if !match && bytes.IndexByte(lit, '\\') >= 0 {
			match = Unquote(lit) == name
		}
		i = SkipSpace(doc, SkipSpace(doc, keyEnd)+1) // ':'
		valEnd := SkipValue(doc, i)
		if match {
			v = doc[i:valEnd]
		}
		i = SkipSpace(doc, valEnd)
		if i >= len(doc) || doc[i] != ',' {
			break
		}
		i = SkipSpace(doc, i+1)
	}
	return v
}

func SkipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] == '"'.
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// SkipValue returns the index after the value starting at b[i].
func SkipValue(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = skipString(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return len(b)
	default:
		for i < len(b) && !bytes.ContainsRune([]byte(",}] \t\r\n"), rune(b[i])) {
			i++
		}
		return i
	}
}

// Unquote decodes a JSON string literal; plain strings take the fast path.
func Unquote(lit []byte) string {
	if len(lit) >= 2 && bytes.IndexByte(lit, '\\') < 0 {
		return string(lit[1 : len(lit)-1])
	}
	var s string
	if err := json.Unmarshal(lit, &s); err != nil {
		return ""
	}
	return s
}

// AppendQuoted appends s as a JSON string, byte for byte as
// encoding/json writes it (so <, > and & as \u003c, \u003e and \u0026,
// U+2028 and U+2029 escaped, invalid UTF-8 as \ufffd), without its
// reflection: etags, which hold quotes, take this path on every write.
// TestAppendQuoted holds it to json.Marshal.
func AppendQuoted(dst []byte, s string) []byte {
	return jsontext.EncodingJSON.AppendString(dst, s)
}

// IsSystemProperty reports whether a top-level member is one the server
// owns; clients may send them back (a read-modify-write) and they are
// replaced, never stored from the client.
func IsSystemProperty(key string) bool {
	switch key {
	case "_rid", "_self", "_etag", "_ts", "_attachments", "_lsn":
		return true
	}
	return false
}

// SystemProps are the server-owned properties appended to a resource.
type SystemProps struct {
	RID, Self, Etag string
	Ts              int64
	// Extra are resource-specific link members (e.g. "_colls":"colls/"),
	// written after _etag as Cosmos does.
	Extra [][2]string
}

// WithSystemProps rebuilds an object from the client's members (minus
// any system properties) and appends the server's.
func WithSystemProps(dst []byte, doc []byte, ms []Member, sp SystemProps) []byte {
	var tailBuf [256]byte
	tail := sp.appendTail(tailBuf[:0])
	dst = slices.Grow(dst, objectSize(ms, sp.Extra)+len(tail))
	return append(appendClientMembers(dst, doc, ms, sp.Extra), tail...)
}

// StoredItem returns the stored value of a document: h, then the
// client's members of doc and the system properties sp, in one
// allocation of its exact size.
func StoredItem(h ItemHeader, doc []byte, ms []Member, sp SystemProps) []byte {
	var tailBuf [256]byte
	tail := sp.appendTail(tailBuf[:0])
	v := make([]byte, 0, HeaderLen+objectSize(ms, sp.Extra)+len(tail))
	v = h.Append(v)
	return append(appendClientMembers(v, doc, ms, sp.Extra), tail...)
}

// objectSize is the length of what appendClientMembers appends for ms.
func objectSize(ms []Member, extra [][2]string) int {
	n := 1 // '{'
	for _, m := range ms {
		if !IsSystemProperty(m.Key) && !isLinkProperty(m.Key, extra) {
			n += m.End - m.Start + 1 // and the ',' after it
		}
	}
	return n
}

// appendClientMembers appends '{' and the members of doc in ms that are
// not the server's, each followed by ','.
func appendClientMembers(dst []byte, doc []byte, ms []Member, extra [][2]string) []byte {
	dst = append(dst, '{')
	for _, m := range ms {
		if !IsSystemProperty(m.Key) && !isLinkProperty(m.Key, extra) {
			dst = append(dst, doc[m.Start:m.End]...)
			dst = append(dst, ',')
		}
	}
	return dst
}

// appendTail appends the system properties and the closing '}'.
func (sp *SystemProps) appendTail(dst []byte) []byte {
	dst = append(dst, `"_rid":`...)
	dst = AppendQuoted(dst, sp.RID)
	dst = append(dst, `,"_self":`...)
	dst = AppendQuoted(dst, sp.Self)
	dst = append(dst, `,"_etag":`...)
	dst = AppendQuoted(dst, sp.Etag)
	for _, kv := range sp.Extra {
		dst = append(dst, ',')
		dst = AppendQuoted(dst, kv[0])
		dst = append(dst, ':')
		dst = AppendQuoted(dst, kv[1])
	}
	dst = append(dst, `,"_ts":`...)
	dst = strconv.AppendInt(dst, sp.Ts, 10)
	return append(dst, '}')
}

func isLinkProperty(key string, extra [][2]string) bool {
	for _, kv := range extra {
		if kv[0] == key {
			return true
		}
	}
	return false
}

// MaxDepth is how deeply a document may nest objects and arrays. The
// query engine parses documents recursively and shares this limit.
const MaxDepth = 128

// CheckShape rejects what json.Valid lets through but a document cannot
// be: nesting beyond MaxDepth, numbers beyond float64's range (Cosmos
// numbers are IEEE doubles) and an object that names a property twice
// (names.go says why). It is one scan over doc; it allocates only for an
// object with more than linearNames members, more than 32 objects or 64
// names open at once.
// REQUIRES: json.Valid(doc).
func CheckShape(doc []byte) error {
	if len(doc) > math.MaxInt32 {
		return dberr.BadRequest("The document is too large to check: %d bytes.", len(doc))
	}
	// The open objects (frames) and their names (names[frame.start:]),
	// innermost last. Arrays need no frame: '}' closes an object and ']'
	// an array.
	var frameBuf [32]nameFrame
	var nameBuf [64]nameRef
	frames, names := frameBuf[:0], nameBuf[:0]
	var sets []map[string]struct{}
	depth := 0
	for i := 0; i < len(doc); i++ {
		switch c := doc[i]; {
		case c == '"':
			end := skipString(doc, i)
			// A string followed by ':' is a member's name (doc is JSON).
			j := SkipSpace(doc, end)
			if j >= len(doc) || doc[j] != ':' || len(frames) == 0 {
				i = end - 1
				continue
			}
			f, name := &frames[len(frames)-1], nameRef{int32(i), int32(end)}
			if bytes.IndexByte(doc[i+1:end], '\\') >= 0 {
				name.end = -name.end // as nameAt, without skipping the string twice
			}
			if f.set == 0 {
				for _, n := range names[f.start:] {
					if n.sameAs(name, doc) {
						return duplicateName(doc, i, name.name(doc))
					}
				}
				if names = append(names, name); len(names)-int(f.start) <= linearNames {
					i = j
					continue
				}
				// The object is wide: its names go into a map from now on.
				set := make(map[string]struct{}, 4*linearNames)
				for _, n := range names[f.start:] {
					set[n.name(doc)] = struct{}{}
				}
				sets = append(sets, set)
				f.set, names = int32(len(sets)), names[:f.start]
			} else {
				// One map operation: the length stays the same if key was there.
				set, key := sets[f.set-1], name.name(doc)
				n := len(set)
				if set[key] = struct{}{}; len(set) == n {
					return duplicateName(doc, i, key)
				}
			}
			i = j
		case c == '{' || c == '[':
			if depth++; depth > MaxDepth {
				return dberr.BadRequest("The document nests objects and arrays more than %d levels deep.", MaxDepth)
			}
			if c == '{' {
				frames = append(frames, nameFrame{start: int32(len(names))})
			}
		case c == '}' || c == ']':
			depth--
			if c == '}' && len(frames) > 0 {
				f := frames[len(frames)-1]
				if f.set != 0 {
					sets[f.set-1] = nil
				}
				names, frames = names[:f.start], frames[:len(frames)-1]
			}
		case c == '-' || c >= '0' && c <= '9':
			end := SkipValue(doc, i)
			num := doc[i:end]
			// Only an exponent or a very long literal can leave float64's
			// range; parse just those.
			if len(num) > 300 || bytes.ContainsAny(num, "eE") {
				if _, err := strconv.ParseFloat(string(num), 64); err != nil {
					return dberr.BadRequest("The number %s is outside the range of a double.", Truncate(num, 40))
				}
			}
			i = end - 1
		}
	}
	return nil
}

// JSONErrorDetail says where a body stops being JSON.
func JSONErrorDetail(body []byte) string {
	var v any
	err := json.Unmarshal(body, &v)
	if se, ok := err.(*json.SyntaxError); ok {
		return fmt.Sprintf("Syntax error at byte offset %d: %v.", se.Offset, se)
	}
	if err != nil {
		return err.Error()
	}
	return ""
}
