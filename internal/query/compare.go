package query

import (
	"math"
	"slices"
	"strings"
)

// Compare orders two values the way Cosmos DB's ORDER BY, MIN and MAX do:
// first by type (undefined < null < false < true < numbers < strings <
// arrays < objects), then by value. Numbers compare numerically (-0 equals
// 0), strings by their UTF-8 bytes (code-point order). Arrays compare
// element by element, a shorter prefix first. Objects compare by their
// members taken in name order: name first, then value, a member-set that is
// a prefix of the other first. It returns -1, 0 or +1.
func Compare(a, b Value) int {
	if a.kind != b.kind {
		if a.kind < b.kind {
			return -1
		}
		return 1
	}
	switch a.kind {
	case Undefined, Null:
		return 0
	case Bool, Number:
		switch {
		case a.num < b.num:
			return -1
		case a.num > b.num:
			return 1
		}
		return 0
	case String:
		return strings.Compare(a.str, b.str)
	case Array:
		ae, be := a.ref.elems, b.ref.elems
		for i := 0; i < len(ae) && i < len(be); i++ {
			if c := Compare(ae[i], be[i]); c != 0 {
				return c
			}
		}
		return cmpInt(len(ae), len(be))
	case Object:
		am, bm := sortedMembers(a), sortedMembers(b)
		for i := 0; i < len(am) && i < len(bm); i++ {
			if c := strings.Compare(am[i].Name, bm[i].Name); c != 0 {
				return c
			}
			if c := Compare(am[i].Value, bm[i].Value); c != 0 {
				return c
			}
		}
		return cmpInt(len(am), len(bm))
	}
	return 0
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// sortedMembers returns the defined members of o sorted by name.
func sortedMembers(o Value) []Member {
	ms := make([]Member, 0, len(o.ref.members))
	for _, m := range o.ref.members {
		if m.Value.kind != Undefined {
			ms = append(ms, m)
		}
	}
	slices.SortFunc(ms, func(x, y Member) int { return strings.Compare(x.Name, y.Name) })
	return ms
}

// Equal reports whether a and b are the same JSON value: same type and
// value; arrays element-wise; objects with the same member names and equal
// values, in any order. Undefined equals only undefined.
func Equal(a, b Value) bool {
	if a.kind != b.kind {
		return false
	}
	switch a.kind {
	case Undefined, Null:
		return true
	case Bool, Number:
		return a.num == b.num
	case String:
		return a.str == b.str
	case Array:
		ae, be := a.ref.elems, b.ref.elems
		if len(ae) != len(be) {
			return false
		}
		for i := range ae {
			if !Equal(ae[i], be[i]) {
				return false
			}
		}
		return true
	case Object:
		if a.ref == b.ref {
			return true
		}
		n := 0
		for _, m := range a.ref.members {
			if m.Value.kind == Undefined {
				continue
			}
			n++
			if !Equal(m.Value, b.Get(m.Name)) {
				return false
			}
		}
		for _, m := range b.ref.members {
			if m.Value.kind != Undefined {
				n--
			}
		}
		return n == 0
	}
	return false
}

// appendKey appends a canonical, type-tagged encoding of v to dst: two
// values have the same key exactly when Equal reports true. DISTINCT and
// GROUP BY use it as a map key.
func appendKey(dst []byte, v Value) []byte {
	switch v.kind {
	case Undefined:
		return append(dst, 'u')
	case Null:
		return append(dst, 'n')
	case Bool:
		if v.num != 0 {
			return append(dst, 't')
		}
		return append(dst, 'f')
	case Number:
		f := v.num
		if f == 0 {
			f = 0 // fold -0
		}
		bits := math.Float64bits(f)
		return append(dst, 'd', byte(bits>>56), byte(bits>>48), byte(bits>>40), byte(bits>>32),
			byte(bits>>24), byte(bits>>16), byte(bits>>8), byte(bits))
	case String:
		return appendString(append(dst, 's'), v.str)
	case Array:
		dst = append(dst, '[')
		for _, e := range v.ref.elems {
			dst = appendKey(dst, e)
		}
		return append(dst, ']')
	case Object:
		dst = append(dst, '{')
		for _, m := range sortedMembers(v) {
			dst = appendString(dst, m.Name)
			dst = appendKey(dst, m.Value)
		}
		return append(dst, '}')
	}
	return dst
}
