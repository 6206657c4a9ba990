package query

import (
	"strings"
	"unsafe"
)

// parseDocFields parses a stored document (a JSON object) building only
// the top-level members named in fields; the others are skipped without
// being built or validated, and parsing stops once every field was found.
// The executor uses it when the query refers to the document only through
// such members. Documents from a Source were validated when written.
//
// The parse reads doc in place and then copies the strings of the members
// it built, so the result does not refer to doc.
func parseDocFields(doc []byte, fields []string) (Value, error) {
	if len(doc) == 0 {
		return Value{}, &JSONError{Msg: "unexpected end of input"}
	}
	p := getJSONParser(unsafe.String(&doc[0], len(doc)))
	v, err := p.fieldsObject(fields)
	if err == nil && v.kind == Object {
		// Member names come from fields already; copy the values' strings.
		ms := v.ref.members
		for i := range ms {
			ms[i].Value.str = strings.Clone(ms[i].Value.str)
			detach(ms[i].Value)
		}
	}
	p.release()
	return v, err
}

// detach copies every string of v (which was parsed from memory about to
// be reused) in place.
func detach(v Value) {
	switch v.kind {
	case String, Number:
		// Scalars are copied by value; their strings are handled by the
		// container that holds them.
	case Array:
		es := v.ref.elems
		for i := range es {
			es[i].str = strings.Clone(es[i].str)
			detach(es[i])
		}
	case Object:
		ms := v.ref.members
		for i := range ms {
			ms[i].Name = strings.Clone(ms[i].Name)
			ms[i].Value.str = strings.Clone(ms[i].Value.str)
			detach(ms[i].Value)
		}
	}
}

func (p *jsonParser) fieldsObject(fields []string) (Value, error) {
	p.skipSpace()
	if p.i >= len(p.s) || p.s[p.i] != '{' {
		v, err := p.document() // not an object: parse it all (and report errors)
		v.str = strings.Clone(v.str)
		return v, err
	}
	p.i++
	var ms []Member
	if p.reuse {
		ms = p.allocMembers(len(fields))[:0]
	} else {
		ms = make([]Member, 0, len(fields))
	}
	for len(ms) < len(fields) {
		p.skipSpace()
		if p.i >= len(p.s) {
			return Value{}, p.fail("unexpected end of input in object")
		}
		if p.s[p.i] == '}' {
			break
		}
		if p.s[p.i] == ',' {
			p.i++
			continue
		}
		if p.s[p.i] != '"' {
			return Value{}, p.fail("expected member name, found " + quoteByte(p.s[p.i]))
		}
		name, err := p.str()
		if err != nil {
			return Value{}, err
		}
		p.skipSpace()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return Value{}, p.fail("expected ':'")
		}
		p.i++
		p.skipSpace()
		wanted, found := "", false
		for _, f := range fields {
			if f == name {
				wanted, found = f, true // f, not name, which points into doc
				break
			}
		}
		if !found {
			if err := p.skipValue(); err != nil {
				return Value{}, err
			}
			continue
		}
		v, err := p.value(1)
		if err != nil {
			return Value{}, err
		}
		ms = append(ms, Member{Name: wanted, Value: v})
	}
	if p.reuse {
		n := p.allocNode()
		n.members = ms
		return Value{kind: Object, ref: n}, nil
	}
	return Value{kind: Object, ref: &node{members: ms}}, nil
}

// pageParser parses the documents of a page whose values do not outlive
// the document they came from (a streaming page, whose rows are encoded
// as they are produced): it reads each document in place, its strings
// are substrings of the document, and the slabs that hold its arrays and
// objects are reused for the next document, so once they have grown to
// the documents' shape a document costs no allocation.
//
// INVARIANT: a value parse returns is used only until the next parse,
// and only while the document it was parsed from is valid (for a
// Source's document: during the yield call).
type pageParser struct {
	p jsonParser
}

// parse parses doc: whole, or (whole false) only the top-level members
// named in fields, as parseDocFields does.
func (pp *pageParser) parse(doc []byte, fields []string, whole bool) (Value, error) {
	if len(doc) == 0 {
		return Value{}, &JSONError{Msg: "unexpected end of input"}
	}
	p := &pp.p
	p.s, p.i, p.reuse = unsafe.String(&doc[0], len(doc)), 0, true
	p.slabV, p.slabM, p.slabN = p.slabV[:0], p.slabM[:0], p.slabN[:0]
	if whole {
		return p.document()
	}
	return p.fieldsObject(fields)
}

// skipValue moves past one value without building or validating it.
func (p *jsonParser) skipValue() error {
	s := p.s
	i := p.i
	depth := 0
	for i < len(s) {
		switch s[i] {
		case '"':
			j := i + 1
			for {
				k := strings.IndexByte(s[j:], '"')
				if k < 0 {
					p.i = i
					return p.fail("unterminated string")
				}
				j += k
				bs := 0
				for m := j - 1; m > i && s[m] == '\\'; m-- {
					bs++
				}
				j++
				if bs%2 == 0 {
					break
				}
			}
			i = j
			if depth == 0 {
				p.i = i
				return nil
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				p.i = i
				return nil
			}
			depth--
			if depth == 0 {
				p.i = i + 1
				return nil
			}
		case ',':
			if depth == 0 {
				p.i = i
				return nil
			}
		}
		i++
	}
	p.i = i
	if depth > 0 {
		return p.fail("unexpected end of input")
	}
	return nil
}
