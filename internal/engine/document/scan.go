package document

import (
	"bytes"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/ebbdb/ebb/internal/engine/dberr"
)

// ObjectBody validates that body is one JSON object that every later
// stage can handle and returns its members.
//
// It is one pass over body (scan) that does the work of four:
// json.Valid, utf8.Valid, CheckShape and ObjectMembers. Its errors are
// theirs, in their order: a body that is not JSON is refused as such even
// when a name repeats before the syntax error, and so on. FuzzScan checks
// that it agrees with encoding/json on what is JSON and with CheckShape
// on the rest.
func ObjectBody(body []byte) ([]Member, error) {
	if len(body) > math.MaxInt32 {
		return nil, dberr.BadRequest("The document is too large to check: %d bytes.", len(body))
	}
	ms, r := scan(body, true)
	switch {
	case !r.json:
		return nil, dberr.BadRequest("The request body is not valid JSON. %s", JSONErrorDetail(body))
	case r.badUTF8:
		return nil, dberr.BadRequest("The request body is not valid UTF-8.")
	case r.shape.kind != shapeOK:
		return nil, r.shape.err(body)
	case !r.object:
		return nil, dberr.BadRequest("The request body must be a JSON object.")
	}
	return ms, nil
}

// CheckJSON is json.Valid and CheckShape in one pass over body, for
// JSON that need not be an object: ok is false when body is not JSON;
// otherwise err is what CheckShape would answer.
func CheckJSON(body []byte) (ok bool, err error) {
	if len(body) > math.MaxInt32 {
		return true, dberr.BadRequest("The document is too large to check: %d bytes.", len(body))
	}
	_, r := scan(body, false)
	if !r.json {
		return false, nil
	}
	return true, r.shape.err(body)
}

// maxSyntaxDepth is the deepest nesting encoding/json accepts as JSON
// (its scanner's maxNestingDepth); deeper is a syntax error there, so it
// is one here too, however far beyond MaxDepth that is.
const maxSyntaxDepth = 10000

// shapeKind is what makes a valid JSON text no document (see CheckShape).
type shapeKind uint8

const (
	shapeOK shapeKind = iota
	shapeDuplicate
	shapeDepth
	shapeNumber
)

// shapeError is the first shape problem a scan meets, kept as offsets so
// that the message, which walks the document again, is worded only once
// the document is known to be JSON.
type shapeError struct {
	kind shapeKind
	// off is the offset of the repeated name or of the number; end is
	// the end of the number; name is the repeated name's literal.
	off, end int
	name     nameRef
}

func (e shapeError) err(doc []byte) error {
	switch e.kind {
	case shapeDuplicate:
		return duplicateName(doc, e.off, e.name.name(doc))
	case shapeDepth:
		return dberr.BadRequest("The document nests objects and arrays more than %d levels deep.", MaxDepth)
	case shapeNumber:
		return dberr.BadRequest("The number %s is outside the range of a double.", Truncate(doc[e.off:e.end], 40))
	}
	return nil
}

// scanResult is what a scan found.
type scanResult struct {
	// json: the text is JSON to encoding/json. The rest means something
	// only when it is.
	json bool
	// badUTF8: a string holds bytes that are not UTF-8.
	badUTF8 bool
	// shape is the first shape problem (CheckShape's), if any.
	shape shapeError
	// object: the text is an object.
	object bool
}

// scan is one validating pass over doc: the grammar as encoding/json
// checks it, the UTF-8 of strings and the shape CheckShape checks. With
// members set it returns the members of a top-level object, in a slice
// of their number.
//
// The grammar is a loop over a stack of open containers (one bit each,
// set for an object), never recursion, so no input can exhaust the
// goroutine's stack. Names are tracked for duplicates as CheckShape
// tracks them (the names of the open objects, a map for a wide one);
// after the first shape problem only the grammar and UTF-8 are checked.
// The stacks are local variables, not a struct's fields behind a
// pointer, so that their first buffers stay on the stack: a scan
// allocates only for the members it returns, more than 256 levels, 32
// objects or 64 names open at once, 16 top-level members or a wide
// object.
// REQUIRES: len(doc) <= math.MaxInt32.
func scan(doc []byte, members bool) ([]Member, scanResult) {
	var r scanResult
	// The top-level members' offsets, made into Members at the end.
	var spanBuf [16]memberSpan
	spans := spanBuf[:0]
	var openBuf [4]uint64
	var frameBuf [32]nameFrame
	var nameBuf [64]nameRef
	open, frames, names := openBuf[:], frameBuf[:0], nameBuf[:0]
	var sets []map[string]struct{}
	depth := 0
	// keyStart and keyEnd bound the name of the top-level member being
	// read; valStart is where its value starts.
	keyStart, keyEnd, valStart := 0, 0, 0

	// member reads a member's name and the ':' after it, starting at i,
	// and returns where its value starts (0 when it is not JSON).
	member := func(i int) int {
		if i >= len(doc) || doc[i] != '"' {
			return 0
		}
		end, escaped, bad := scanString(doc, i)
		if end == 0 {
			return 0
		}
		r.badUTF8 = r.badUTF8 || bad
		if r.shape.kind == shapeOK {
			var dup bool
			if names, sets, dup = addName(doc, &frames[len(frames)-1], names, sets, i, end, escaped); dup {
				r.shape = shapeError{kind: shapeDuplicate, off: i, name: refOf(i, end, escaped)}
			}
		}
		j := SkipSpace(doc, end)
		if j >= len(doc) || doc[j] != ':' {
			return 0
		}
		j = SkipSpace(doc, j+1)
		if depth == 1 {
			keyStart, keyEnd, valStart = i, end, j
		}
		return j
	}

	i := SkipSpace(doc, 0)
	for {
		// A value starts at i.
		if i >= len(doc) {
			return nil, r
		}
		switch c := doc[i]; {
		case c == '{' || c == '[':
			obj := c == '{'
			if depth == 0 {
				r.object = obj
			}
			// Open the container.
			d := depth
			if depth++; depth > maxSyntaxDepth {
				return nil, r
			}
			if d/64 == len(open) {
				open = append(open, 0)
			}
			if obj {
				open[d/64] |= 1 << (d % 64)
			} else {
				open[d/64] &^= 1 << (d % 64)
			}
			if r.shape.kind == shapeOK {
				if depth > MaxDepth {
					r.shape = shapeError{kind: shapeDepth}
				} else if obj {
					frames = append(frames, nameFrame{start: int32(len(names))})
				}
			}
			if i = SkipSpace(doc, i+1); i < len(doc) && doc[i] == closer(obj) {
				depth--
				frames, names, sets = closeObject(obj && r.shape.kind == shapeOK, frames, names, sets)
				i++
				break
			}
			if obj {
				if i = member(i); i == 0 {
					return nil, r
				}
			}
			continue
		case c == '"':
			end, _, bad := scanString(doc, i)
			if end == 0 {
				return nil, r
			}
			r.badUTF8 = r.badUTF8 || bad
			i = end
		case c == '-' || c >= '0' && c <= '9':
			end, inRange := scanNumber(doc, i, r.shape.kind == shapeOK)
			if end == 0 {
				return nil, r
			}
			if !inRange {
				r.shape = shapeError{kind: shapeNumber, off: i, end: end}
			}
			i = end
		case c == 't' && bytes.HasPrefix(doc[i:], litTrue):
			i += len(litTrue)
		case c == 'f' && bytes.HasPrefix(doc[i:], litFalse):
			i += len(litFalse)
		case c == 'n' && bytes.HasPrefix(doc[i:], litNull):
			i += len(litNull)
		default:
			return nil, r
		}
		// A value ended at i: close what it ends, then find the next one.
	next:
		for {
			if depth == 1 && r.object && members {
				spans = append(spans, memberSpan{keyStart, keyEnd, valStart, i})
			}
			if i = SkipSpace(doc, i); depth == 0 {
				if r.json = i == len(doc); !r.json || !r.object || !members {
					return nil, r
				}
				ms := make([]Member, len(spans))
				for j, sp := range spans {
					ms[j] = Member{Key: Unquote(doc[sp.key:sp.keyEnd]), Val: doc[sp.val:sp.end], Start: sp.key, End: sp.end}
				}
				return ms, r
			}
			if i >= len(doc) {
				return nil, r
			}
			d := depth - 1
			obj := open[d/64]&(1<<(d%64)) != 0
			switch doc[i] {
			case ',':
				i = SkipSpace(doc, i+1)
				if obj {
					if i = member(i); i == 0 {
						return nil, r
					}
				}
				break next
			case closer(obj):
				depth--
				frames, names, sets = closeObject(obj && r.shape.kind == shapeOK, frames, names, sets)
				i++
			default:
				return nil, r
			}
		}
	}
}

// memberSpan locates a member in a document: its name's literal, its
// value and its end.
type memberSpan struct{ key, keyEnd, val, end int }

// closeObject drops the innermost object's frame and names when obj.
func closeObject(obj bool, frames []nameFrame, names []nameRef, sets []map[string]struct{}) ([]nameFrame, []nameRef, []map[string]struct{}) {
	if !obj {
		return frames, names, sets
	}
	f := frames[len(frames)-1]
	if f.set != 0 {
		sets[f.set-1] = nil
	}
	return frames[:len(frames)-1], names[:f.start], sets
}

func refOf(start, end int, escaped bool) nameRef {
	r := nameRef{int32(start), int32(end)}
	if escaped {
		r.end = -r.end
	}
	return r
}

// addName records the member name doc[start:end] (escaped: it holds a
// backslash) in the object f, whose names are names[f.start:] or, once it
// is wide, the map sets[f.set-1]; dup reports that f already had it.
func addName(doc []byte, f *nameFrame, names []nameRef, sets []map[string]struct{}, start, end int, escaped bool) (_ []nameRef, _ []map[string]struct{}, dup bool) {
	name := refOf(start, end, escaped)
	if f.set == 0 {
		for _, n := range names[f.start:] {
			if n.sameAs(name, doc) {
				return names, sets, true
			}
		}
		if names = append(names, name); len(names)-int(f.start) <= linearNames {
			return names, sets, false
		}
		// The object is wide: its names go into a map from now on.
		set := make(map[string]struct{}, 4*linearNames)
		for _, n := range names[f.start:] {
			set[n.name(doc)] = struct{}{}
		}
		sets = append(sets, set)
		f.set = int32(len(sets))
		return names[:f.start], sets, false
	}
	// One map operation: the length stays the same if the name was there.
	set, key := sets[f.set-1], name.name(doc)
	n := len(set)
	set[key] = struct{}{}
	return names, sets, len(set) == n
}

var (
	litTrue  = []byte("true")
	litFalse = []byte("false")
	litNull  = []byte("null")
)

// closer is the byte that closes an object (obj) or an array.
func closer(obj bool) byte {
	if obj {
		return '}'
	}
	return ']'
}

// plain marks the bytes a string holds as they are: not '"', '\\', a
// control character or the start of a multi-byte UTF-8 sequence.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// scanString reads the string literal at i (doc[i] == '"') and returns
// the offset after it, 0 when it is not JSON; escaped reports a
// backslash in it and badUTF8 bytes that are not UTF-8, which
// encoding/json accepts in a string.
func scanString(doc []byte, i int) (end int, escaped, badUTF8 bool) {
	for i++; i < len(doc); {
		c := doc[i]
		if plain[c] {
			i++
			continue
		}
		switch {
		case c == '"':
			return i + 1, escaped, badUTF8
		case c == '\\':
			escaped = true
			if i+1 >= len(doc) {
				return 0, false, false
			}
			switch doc[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(doc) || !isHex(doc[i+2]) || !isHex(doc[i+3]) || !isHex(doc[i+4]) || !isHex(doc[i+5]) {
					return 0, false, false
				}
				i += 6
			default:
				return 0, false, false
			}
		case c < 0x20:
			return 0, false, false
		default:
			r, size := utf8.DecodeRune(doc[i:])
			if r == utf8.RuneError && size == 1 {
				badUTF8 = true
			}
			i += size
		}
	}
	return 0, false, false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// scanNumber reads the number at i and returns the offset after it, 0
// when it is not JSON. When check is set, inRange reports whether it is
// within float64's range; only an exponent or a very long literal can
// leave it, so only those are parsed (as CheckShape does).
func scanNumber(doc []byte, i int, check bool) (end int, inRange bool) {
	start := i
	if doc[i] == '-' {
		i++
	}
	switch {
	case i >= len(doc):
		return 0, false
	case doc[i] == '0':
		i++
	case '1' <= doc[i] && doc[i] <= '9':
		i = digits(doc, i)
	default:
		return 0, false
	}
	if i < len(doc) && doc[i] == '.' {
		d := digits(doc, i+1)
		if d == i+1 {
			return 0, false
		}
		i = d
	}
	exp := false
	if i < len(doc) && (doc[i] == 'e' || doc[i] == 'E') {
		exp = true
		if i++; i < len(doc) && (doc[i] == '+' || doc[i] == '-') {
			i++
		}
		d := digits(doc, i)
		if d == i {
			return 0, false
		}
		i = d
	}
	if check && (exp || i-start > 300) {
		if _, err := strconv.ParseFloat(string(doc[start:i]), 64); err != nil {
			return i, false
		}
	}
	return i, true
}

// digits returns the offset of the first byte at or after i that is not
// a decimal digit.
func digits(b []byte, i int) int {
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	return i
}
