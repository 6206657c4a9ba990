package engine

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// Documents are kept as the bytes the client sent, with system properties
// appended, so reads return stored bytes without re-encoding. These
// helpers walk the top level of a JSON object that has already passed
// json.Valid, which is what lets them skip values without re-validating.

// member is one top-level member of a JSON object.
type member struct {
	key string
	// val is the raw JSON value.
	val []byte
	// start and end bound the whole "key": value text in the document.
	start, end int
}

// objectMembers returns the members of a JSON object in document order.
// REQUIRES: json.Valid(doc).
func objectMembers(doc []byte) ([]member, bool) {
	i := skipSpace(doc, 0)
	if i >= len(doc) || doc[i] != '{' {
		return nil, false
	}
	var out []member
	i = skipSpace(doc, i+1)
	if i < len(doc) && doc[i] == '}' {
		return out, true
	}
	for i < len(doc) {
		start := i
		keyEnd := skipString(doc, i)
		key := unquote(doc[i:keyEnd])
		i = skipSpace(doc, keyEnd)
		i = skipSpace(doc, i+1) // ':'
		valEnd := skipValue(doc, i)
		out = append(out, member{key: key, val: doc[i:valEnd], start: start, end: valEnd})
		i = skipSpace(doc, valEnd)
		if i >= len(doc) || doc[i] == '}' {
			break
		}
		i = skipSpace(doc, i+1) // ','
	}
	return out, true
}

// lookup returns the value of the last member named key (the last one
// wins, as in JavaScript's JSON.parse).
func lookup(ms []member, key string) []byte {
	var v []byte
	for _, m := range ms {
		if m.key == key {
			v = m.val
		}
	}
	return v
}

// memberValue returns the value of the last member of the JSON object doc
// named name, nil if doc is not an object or has none. Unlike
// objectMembers it allocates nothing for names without escapes.
// REQUIRES: json.Valid(doc).
func memberValue(doc []byte, name string) []byte {
	i := skipSpace(doc, 0)
	if i >= len(doc) || doc[i] != '{' {
		return nil
	}
	var v []byte
	for i = skipSpace(doc, i+1); i < len(doc) && doc[i] == '"'; {
		keyEnd := skipString(doc, i)
		lit := doc[i:keyEnd]
		match := len(lit) >= 2 && string(lit[1:len(lit)-1]) == name
		if !match && bytes.IndexByte(lit, '\\') >= 0 {
			match = unquote(lit) == name
		}
		i = skipSpace(doc, skipSpace(doc, keyEnd)+1) // ':'
		valEnd := skipValue(doc, i)
		if match {
			v = doc[i:valEnd]
		}
		i = skipSpace(doc, valEnd)
		if i >= len(doc) || doc[i] != ',' {
			break
		}
		i = skipSpace(doc, i+1)
	}
	return v
}

func skipSpace(b []byte, i int) int {
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

// skipValue returns the index after the value starting at b[i].
func skipValue(b []byte, i int) int {
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

// unquote decodes a JSON string literal; plain strings take the fast path.
func unquote(lit []byte) string {
	if len(lit) >= 2 && bytes.IndexByte(lit, '\\') < 0 {
		return string(lit[1 : len(lit)-1])
	}
	var s string
	if err := json.Unmarshal(lit, &s); err != nil {
		return ""
	}
	return s
}

// appendQuoted appends s as a JSON string.
func appendQuoted(dst []byte, s string) []byte {
	safe := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			safe = false
			break
		}
	}
	if safe {
		dst = append(dst, '"')
		dst = append(dst, s...)
		return append(dst, '"')
	}
	b, _ := json.Marshal(s)
	return append(dst, b...)
}

// isSystemProperty reports whether a top-level member is one the server
// owns; clients may send them back (a read-modify-write) and they are
// replaced, never stored from the client.
func isSystemProperty(key string) bool {
	switch key {
	case "_rid", "_self", "_etag", "_ts", "_attachments", "_lsn":
		return true
	}
	return false
}

// systemProps are the server-owned properties appended to a resource.
type systemProps struct {
	rid, self, etag string
	ts              int64
	// extra are resource-specific link members (e.g. "_colls":"colls/"),
	// written after _etag as Cosmos does.
	extra [][2]string
}

// withSystemProps rebuilds an object from the client's members (minus
// any system properties) and appends the server's.
func withSystemProps(dst []byte, doc []byte, ms []member, sp systemProps) []byte {
	dst = append(dst, '{')
	first := true
	for _, m := range ms {
		if isSystemProperty(m.key) || isLinkProperty(m.key, sp.extra) {
			continue
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, doc[m.start:m.end]...)
	}
	if !first {
		dst = append(dst, ',')
	}
	dst = append(dst, `"_rid":`...)
	dst = appendQuoted(dst, sp.rid)
	dst = append(dst, `,"_self":`...)
	dst = appendQuoted(dst, sp.self)
	dst = append(dst, `,"_etag":`...)
	dst = appendQuoted(dst, sp.etag)
	for _, kv := range sp.extra {
		dst = append(dst, ',')
		dst = appendQuoted(dst, kv[0])
		dst = append(dst, ':')
		dst = appendQuoted(dst, kv[1])
	}
	dst = append(dst, `,"_ts":`...)
	dst = strconv.AppendInt(dst, sp.ts, 10)
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

// maxDepth is how deeply a document may nest objects and arrays. The
// query engine parses documents recursively and shares this limit.
const maxDepth = 128

// checkShape rejects what json.Valid lets through but a document cannot
// be: nesting beyond maxDepth and numbers beyond float64's range (Cosmos
// numbers are IEEE doubles).
// REQUIRES: json.Valid(doc).
func checkShape(doc []byte) error {
	depth := 0
	for i := 0; i < len(doc); i++ {
		switch c := doc[i]; {
		case c == '"':
			i = skipString(doc, i) - 1
		case c == '{' || c == '[':
			if depth++; depth > maxDepth {
				return badRequest("The document nests objects and arrays more than %d levels deep.", maxDepth)
			}
		case c == '}' || c == ']':
			depth--
		case c == '-' || c >= '0' && c <= '9':
			end := skipValue(doc, i)
			num := doc[i:end]
			// Only an exponent or a very long literal can leave float64's
			// range; parse just those.
			if len(num) > 300 || bytes.ContainsAny(num, "eE") {
				if _, err := strconv.ParseFloat(string(num), 64); err != nil {
					return badRequest("The number %s is outside the range of a double.", truncate(num, 40))
				}
			}
			i = end - 1
		}
	}
	return nil
}
