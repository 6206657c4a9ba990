package query

import (
	"math"
	"strconv"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxJSONDepth is the deepest nesting of arrays and objects ParseJSON
// accepts.
const MaxJSONDepth = 128

// JSONError describes malformed JSON.
type JSONError struct {
	Offset int // byte offset of the problem
	Msg    string
}

func (e *JSONError) Error() string {
	return "query: invalid JSON at offset " + strconv.Itoa(e.Offset) + ": " + e.Msg
}

// ParseJSON parses one strict JSON text (RFC 8259): no comments, no
// trailing commas, no NaN, strings must be valid UTF-8, nesting at most
// MaxJSONDepth, no duplicate member names, and nothing but white space after
// the value. Numbers keep their literal so AppendJSON reproduces them
// exactly. The result does not refer to b.
func ParseJSON(b []byte) (Value, error) {
	return parseJSONString(string(b))
}

// parseJSONString is ParseJSON on a string; strings and numbers in the
// result share the memory of s.
func parseJSONString(s string) (Value, error) {
	p := getJSONParser(s)
	v, err := p.document()
	p.release()
	return v, err
}

var jsonParserPool = sync.Pool{New: func() any { return new(jsonParser) }}

// getJSONParser takes a parser from the pool, set to read s.
func getJSONParser(s string) *jsonParser {
	p := jsonParserPool.Get().(*jsonParser)
	p.s, p.i = s, 0
	p.slabV, p.slabM, p.slabN = nil, nil, nil
	return p
}

// release returns p to the pool, dropping every reference into what it
// parsed so the pool keeps no document alive.
func (p *jsonParser) release() {
	p.s = ""
	p.slabV, p.slabM, p.slabN = nil, nil, nil
	clear(p.stackV[:cap(p.stackV)])
	clear(p.stackM[:cap(p.stackM)])
	p.stackV, p.stackM = p.stackV[:0], p.stackM[:0]
	jsonParserPool.Put(p)
}

// jsonParser parses JSON text held in a string. Unescaped strings and number
// literals in the result are substrings of s (no copy); array and object
// bodies are carved from slabs allocated per document, each slice capped so
// a later append reallocates instead of overwriting its neighbour.
type jsonParser struct {
	s      string
	i      int
	stackV []Value  // elements of the arrays being parsed
	stackM []Member // members of the objects being parsed
	slabV  []Value
	slabM  []Member
	slabN  []node
	// reuse is set for a pageParser: its slabs outlive a document, so
	// fieldsObject carves its object from them too.
	reuse bool
}

func (p *jsonParser) fail(msg string) error { return &JSONError{Offset: p.i, Msg: msg} }

func (p *jsonParser) document() (Value, error) {
	p.skipSpace()
	if p.i >= len(p.s) {
		return Value{}, p.fail("unexpected end of input")
	}
	v, err := p.value(0)
	if err != nil {
		return Value{}, err
	}
	p.skipSpace()
	if p.i < len(p.s) {
		return Value{}, p.fail("unexpected " + quoteByte(p.s[p.i]) + " after top-level value")
	}
	return v, nil
}

func quoteByte(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return "'" + string(rune(c)) + "'"
	}
	return "byte 0x" + strconv.FormatUint(uint64(c), 16)
}

// separator consumes what follows an array element or object member: ','
// (more follow) or the closing byte (done).
func (p *jsonParser) separator(closing byte, what string) (more bool, err error) {
	p.skipSpace()
	if p.i >= len(p.s) {
		return false, p.fail("unexpected end of input in " + what)
	}
	switch c := p.s[p.i]; c {
	case ',':
		p.i++
		return true, nil
	case closing:
		p.i++
		return false, nil
	default:
		return false, p.fail("expected ',' or '" + string(closing) + "', found " + quoteByte(c))
	}
}

func (p *jsonParser) skipSpace() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// slabSize returns the size of the next slab: small at first, doubling as
// the document proves large, and never less than n.
func slabSize(prevCap, n int) int {
	size := 16
	if prevCap > 0 {
		size = min(prevCap*2, 1024)
	}
	return max(size, n)
}

func (p *jsonParser) allocValues(n int) []Value {
	if n == 0 {
		return nil
	}
	if cap(p.slabV)-len(p.slabV) < n {
		p.slabV = make([]Value, 0, slabSize(cap(p.slabV), n))
	}
	start := len(p.slabV)
	p.slabV = p.slabV[:start+n]
	return p.slabV[start : start+n : start+n]
}

func (p *jsonParser) allocMembers(n int) []Member {
	if n == 0 {
		return nil
	}
	if cap(p.slabM)-len(p.slabM) < n {
		p.slabM = make([]Member, 0, slabSize(cap(p.slabM), n))
	}
	start := len(p.slabM)
	p.slabM = p.slabM[:start+n]
	return p.slabM[start : start+n : start+n]
}

func (p *jsonParser) allocNode() *node {
	if len(p.slabN) == cap(p.slabN) {
		p.slabN = make([]node, 0, slabSize(cap(p.slabN), 1)/2)
	}
	p.slabN = p.slabN[:len(p.slabN)+1]
	n := &p.slabN[len(p.slabN)-1]
	*n = node{} // a pageParser's slab holds the last document's nodes
	return n
}

// value parses one value starting at p.i (not white space).
func (p *jsonParser) value(depth int) (Value, error) {
	if p.i >= len(p.s) {
		return Value{}, p.fail("unexpected end of input")
	}
	switch c := p.s[p.i]; c {
	case '{':
		return p.object(depth + 1)
	case '[':
		return p.array(depth + 1)
	case '"':
		s, err := p.str()
		if err != nil {
			return Value{}, err
		}
		return Value{kind: String, str: s}, nil
	case 't':
		return p.word("true", trueValue)
	case 'f':
		return p.word("false", falseValue)
	case 'n':
		return p.word("null", nullValue)
	default:
		if c == '-' || (c >= '0' && c <= '9') {
			return p.number()
		}
		return Value{}, p.fail("unexpected " + quoteByte(c))
	}
}

func (p *jsonParser) word(w string, v Value) (Value, error) {
	if len(p.s)-p.i >= len(w) && p.s[p.i:p.i+len(w)] == w {
		p.i += len(w)
		return v, nil
	}
	return Value{}, p.fail("invalid literal")
}

func (p *jsonParser) number() (Value, error) {
	start := p.i
	s := p.s
	i := p.i
	if s[i] == '-' {
		i++
	}
	if i >= len(s) {
		p.i = i
		return Value{}, p.fail("invalid number")
	}
	switch {
	case s[i] == '0':
		i++
	case s[i] >= '1' && s[i] <= '9':
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	default:
		p.i = i
		return Value{}, p.fail("invalid number")
	}
	simple := true
	if i < len(s) && s[i] == '.' {
		simple = false
		i++
		d := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == d {
			p.i = i
			return Value{}, p.fail("invalid number: digit expected after '.'")
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		simple = false
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		d := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == d {
			p.i = i
			return Value{}, p.fail("invalid number: digit expected in exponent")
		}
	}
	p.i = i
	lit := s[start:i]
	if simple && len(lit) <= 15 {
		// Fast path: an integer that fits exactly in a float64.
		var n int64
		j := 0
		if lit[0] == '-' {
			j = 1
		}
		for ; j < len(lit); j++ {
			n = n*10 + int64(lit[j]-'0')
		}
		if lit[0] == '-' {
			n = -n
		}
		return Value{kind: Number, num: float64(n), str: lit}, nil
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil || math.IsInf(f, 0) {
		p.i = start
		return Value{}, p.fail("number out of range")
	}
	return Value{kind: Number, num: f, str: lit}, nil
}

// str parses a string literal at p.i (which holds '"').
func (p *jsonParser) str() (string, error) {
	s := p.s
	i := p.i + 1
	start := i
	for i < len(s) {
		c := s[i]
		if c == '"' {
			p.i = i + 1
			return s[start:i], nil
		}
		if c == '\\' {
			break
		}
		if c < 0x20 {
			p.i = i
			return "", p.fail("control character in string")
		}
		if c < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			p.i = i
			return "", p.fail("invalid UTF-8 in string")
		}
		i += size
	}
	if i >= len(s) {
		p.i = i
		return "", p.fail("unterminated string")
	}
	// Slow path: the string has escapes.
	buf := make([]byte, 0, i-start+16)
	buf = append(buf, s[start:i]...)
	for i < len(s) {
		c := s[i]
		switch {
		case c == '"':
			p.i = i + 1
			return string(buf), nil
		case c == '\\':
			if i+1 >= len(s) {
				p.i = i
				return "", p.fail("unterminated string")
			}
			e := s[i+1]
			i += 2
			switch e {
			case '"', '\\', '/':
				buf = append(buf, e)
			case 'b':
				buf = append(buf, '\b')
			case 'f':
				buf = append(buf, '\f')
			case 'n':
				buf = append(buf, '\n')
			case 'r':
				buf = append(buf, '\r')
			case 't':
				buf = append(buf, '\t')
			case 'u':
				r, ok := hex4(s, i)
				if !ok {
					p.i = i
					return "", p.fail("invalid \\u escape")
				}
				i += 4
				if utf16.IsSurrogate(r) {
					r2, ok2 := rune(0), false
					if i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
						r2, ok2 = hex4(s, i+2)
					}
					if ok2 {
						if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
							r = dec
							i += 6
						} else {
							r = utf8.RuneError
						}
					} else {
						r = utf8.RuneError
					}
				}
				buf = utf8.AppendRune(buf, r)
			default:
				p.i = i - 2
				return "", p.fail("invalid escape " + quoteByte(e))
			}
		case c < 0x20:
			p.i = i
			return "", p.fail("control character in string")
		case c < utf8.RuneSelf:
			buf = append(buf, c)
			i++
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				p.i = i
				return "", p.fail("invalid UTF-8 in string")
			}
			buf = append(buf, s[i:i+size]...)
			i += size
		}
	}
	p.i = i
	return "", p.fail("unterminated string")
}

func hex4(s string, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var r rune
	for j := i; j < i+4; j++ {
		c := s[j]
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

func (p *jsonParser) array(depth int) (Value, error) {
	if depth > MaxJSONDepth {
		return Value{}, p.fail("nesting too deep")
	}
	p.i++ // '['
	base := len(p.stackV)
	p.skipSpace()
	if p.i < len(p.s) && p.s[p.i] == ']' {
		p.i++
		n := p.allocNode()
		return Value{kind: Array, ref: n}, nil
	}
	for {
		p.skipSpace()
		v, err := p.value(depth)
		if err != nil {
			return Value{}, err
		}
		p.stackV = append(p.stackV, v)
		more, err := p.separator(']', "array")
		if err != nil {
			return Value{}, err
		}
		if !more {
			break
		}
	}
	elems := p.allocValues(len(p.stackV) - base)
	copy(elems, p.stackV[base:])
	p.stackV = p.stackV[:base]
	n := p.allocNode()
	n.elems = elems
	return Value{kind: Array, ref: n}, nil
}

func (p *jsonParser) object(depth int) (Value, error) {
	if depth > MaxJSONDepth {
		return Value{}, p.fail("nesting too deep")
	}
	p.i++ // '{'
	base := len(p.stackM)
	var seen map[string]struct{} // member names, once the object is large
	p.skipSpace()
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		n := p.allocNode()
		return Value{kind: Object, ref: n}, nil
	}
	for {
		p.skipSpace()
		if p.i >= len(p.s) {
			return Value{}, p.fail("unexpected end of input in object")
		}
		if p.s[p.i] != '"' {
			return Value{}, p.fail("expected member name, found " + quoteByte(p.s[p.i]))
		}
		keyPos := p.i
		name, err := p.str()
		if err != nil {
			return Value{}, err
		}
		p.skipSpace()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			if p.i >= len(p.s) {
				return Value{}, p.fail("unexpected end of input in object")
			}
			return Value{}, p.fail("expected ':', found " + quoteByte(p.s[p.i]))
		}
		p.i++
		p.skipSpace()
		v, err := p.value(depth)
		if err != nil {
			return Value{}, err
		}
		dup := false
		if seen != nil {
			_, dup = seen[name]
			seen[name] = struct{}{}
		} else {
			dup = dupName(p.stackM[base:], name)
			if len(p.stackM)-base >= 32 {
				seen = make(map[string]struct{}, 64)
				for _, m := range p.stackM[base:] {
					seen[m.Name] = struct{}{}
				}
				seen[name] = struct{}{}
			}
		}
		if dup {
			p.i = keyPos
			return Value{}, p.fail("duplicate member name " + strconv.Quote(name))
		}
		p.stackM = append(p.stackM, Member{Name: name, Value: v})
		more, err := p.separator('}', "object")
		if err != nil {
			return Value{}, err
		}
		if !more {
			break
		}
	}
	ms := p.allocMembers(len(p.stackM) - base)
	copy(ms, p.stackM[base:])
	p.stackM = p.stackM[:base]
	n := p.allocNode()
	n.members = ms
	return Value{kind: Object, ref: n}, nil
}

// dupName reports whether name is among ms (a short list).
func dupName(ms []Member, name string) bool {
	for i := range ms {
		if ms[i].Name == name {
			return true
		}
	}
	return false
}
