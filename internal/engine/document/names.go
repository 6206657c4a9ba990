package document

import (
	"bytes"
	"math"
	"reflect"
	"strconv"
	"strings"
	"unsafe"

	"github.com/ebbdb/ebb/internal/engine/dberr"
)

// Why a document may not name a property twice.
//
// RFC 8259 leaves what {"id":"a","id":"b"} means to the reader, and Ebb's
// readers disagreed: Lookup (the id, the partition key, the ttl) took the
// last value, the query engine's field reader the first and its full
// parser refused the document. One stored item then had two ids. No
// public documentation, SDK test or issue found says what the service
// does with such a body; the one trace is the other way round, the Java
// SDK learning to accept a container the service returned with
// "uniqueKeyPolicy" twice (Azure/azure-sdk-for-java#41608). So Ebb
// refuses it with 400, at every depth, before anything reads it: a
// stored document then has one meaning for all. Names are compared after
// unescaping, so "\u0069d" repeats "id".

// linearNames is how many names of one object are compared one by one
// before the object's names go into a map.
const linearNames = 16

// nameRef locates a member's name in a document: the bounds of its
// literal, end negated when the literal has escapes. Offsets are int32,
// which CheckShape ensures, to keep a scan's state small.
type nameRef struct{ start, end int32 }

// nameAt returns the nameRef of the string literal at offset i of doc.
// REQUIRES: len(doc) <= math.MaxInt32.
func nameAt(doc []byte, i int) nameRef {
	end := skipString(doc, i)
	r := nameRef{int32(i), int32(end)}
	if bytes.IndexByte(doc[i+1:end], '\\') >= 0 {
		r.end = -r.end
	}
	return r
}

func abs(n int32) int32 {
	if n < 0 {
		return -n
	}
	return n
}

// name returns the name r stands for, sharing doc's memory when it has no
// escapes.
func (r nameRef) name(doc []byte) string {
	if r.end < 0 {
		return Unquote(doc[r.start:-r.end])
	}
	return unsafe.String(&doc[r.start+1], r.end-r.start-2)
}

// sameAs reports whether r and o name the same member once unescaped.
func (r nameRef) sameAs(o nameRef, doc []byte) bool {
	if r.end > 0 && o.end > 0 {
		return r.end-r.start == o.end-o.start && string(doc[r.start:r.end]) == string(doc[o.start:o.end])
	}
	return r.name(doc) == o.name(doc)
}

// nameFrame is one open object of a scan.
type nameFrame struct {
	// start is the index of the object's first name in the scan's names.
	start int32
	// set is 1 + the index of the object's map in the scan's sets, once it
	// has more than linearNames names; 0 before.
	set int32
}

// duplicateName is the error for a name repeated at offset off of doc.
func duplicateName(doc []byte, off int, name string) error {
	where := "the top-level object"
	if p := containerPath(doc, off); p != "" {
		where = "the object at " + p
	}
	return dberr.BadRequest("Duplicate property name '%s' in %s (byte offset %d); a property may appear only once in an object.", Truncate([]byte(name), 64), where, off)
}

// containerPath returns the JSON Pointer of the object or array whose
// member is at offset off of doc ("" for the top level). It runs only to
// word an error, so it walks doc again rather than slow the scan down.
// REQUIRES: json.Valid(doc).
func containerPath(doc []byte, off int) string {
	var path []string
	i := SkipSpace(doc, 0)
	for depth := 0; depth <= MaxDepth && i < len(doc); depth++ {
		open := doc[i]
		next := -1
		j := SkipSpace(doc, i+1)
		for n := 0; j < len(doc) && doc[j] != '}' && doc[j] != ']'; n++ {
			tok := strconv.Itoa(n)
			if open == '{' {
				keyEnd := skipString(doc, j)
				tok = Unquote(doc[j:keyEnd])
				j = SkipSpace(doc, SkipSpace(doc, keyEnd)+1) // ':'
			}
			end := SkipValue(doc, j)
			if j <= off && off < end && j < len(doc) && (doc[j] == '{' || doc[j] == '[') {
				next = j
				path = append(path, tok)
				break
			}
			if j = SkipSpace(doc, end); j < len(doc) && doc[j] == ',' {
				j = SkipSpace(doc, j+1)
			}
		}
		if next < 0 {
			break
		}
		i = next
	}
	var b strings.Builder
	for _, tok := range path {
		b.WriteByte('/')
		b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(Truncate([]byte(tok), 64)))
	}
	return b.String()
}

// Fields returns the JSON names of v's struct fields, as encoding/json
// decodes them (a field's tag name, else its Go name; "-" is skipped).
// REQUIRES: v is a struct.
func Fields(v any) []string {
	t := reflect.TypeOf(v)
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch name {
		case "-":
			continue
		case "":
			name = f.Name
		}
		out = append(out, name)
	}
	return out
}

// CheckFields refuses the JSON object at offset off of doc when two of its
// members would decode into the same one of fields: encoding/json keeps
// the last of them and matches names regardless of case, so {"op":"set",
// "OP":"remove"} would be a remove to Ebb and perhaps a set to whoever
// wrote it. Members that match no field are ignored, as the decoder
// ignores them. Requests decoded into Go structs (a patch's operations, a
// batch's) call it on each such object. It does nothing when doc[off:]
// is not an object, which the decoder reports, and allocates nothing for
// names without escapes.
// REQUIRES: json.Valid(doc); len(fields) <= 16.
func CheckFields(doc []byte, off int, fields []string) error {
	if len(doc) > math.MaxInt32 {
		return dberr.BadRequest("The request body is too large to check: %d bytes.", len(doc))
	}
	i := SkipSpace(doc, off)
	if i >= len(doc) || doc[i] != '{' {
		return nil
	}
	var seen [16]int // 1 + the offset of the member holding each field
	for i = SkipSpace(doc, i+1); i < len(doc) && doc[i] == '"'; {
		name := nameAt(doc, i)
		key := name.name(doc)
		for f, field := range fields[:min(len(fields), len(seen))] {
			if !strings.EqualFold(key, field) {
				continue
			}
			if seen[f] == 0 {
				seen[f] = i + 1
				break
			}
			first := nameAt(doc, seen[f]-1)
			if first.sameAs(name, doc) {
				return duplicateName(doc, i, key)
			}
			where := "the top-level object"
			if p := containerPath(doc, i); p != "" {
				where = "the object at " + p
			}
			return dberr.BadRequest("The properties '%s' and '%s' in %s (byte offset %d) are the same property '%s'; send it once.", Truncate([]byte(first.name(doc)), 64), Truncate([]byte(key), 64), where, i, field)
		}
		i = SkipSpace(doc, SkipValue(doc, SkipSpace(doc, SkipSpace(doc, int(abs(name.end)))+1)))
		if i >= len(doc) || doc[i] != ',' {
			break
		}
		i = SkipSpace(doc, i+1)
	}
	return nil
}

// CheckFieldsOfEach runs CheckFields on each element of the JSON array
// at offset off of doc; it does nothing when that is not an array.
// REQUIRES: json.Valid(doc).
func CheckFieldsOfEach(doc []byte, off int, fields []string) error {
	i := SkipSpace(doc, off)
	if i >= len(doc) || doc[i] != '[' {
		return nil
	}
	for i = SkipSpace(doc, i+1); i < len(doc) && doc[i] != ']'; {
		if err := CheckFields(doc, i, fields); err != nil {
			return err
		}
		if i = SkipSpace(doc, SkipValue(doc, i)); i < len(doc) && doc[i] == ',' {
			i = SkipSpace(doc, i+1)
		}
	}
	return nil
}
