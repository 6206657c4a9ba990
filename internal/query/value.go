package query

import (
	"math"
	"strconv"
)

// Kind is the type of a Value. The constants are declared in Cosmos type
// order, so comparing kinds compares types the way ORDER BY does.
type Kind uint8

// The kinds of value, in Cosmos type order.
const (
	Undefined Kind = iota
	Null
	Bool
	Number
	String
	Array
	Object
)

var kindNames = [...]string{"undefined", "null", "boolean", "number", "string", "array", "object"}

// String returns the lower-case name of the kind.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Value is a JSON value or undefined. The zero Value is undefined.
//
// Scalars are held inline. Arrays and objects point to shared contents: a
// copy of a Value refers to the same array or object, and the mutators
// (Set, Delete, SetIndex, Insert, RemoveAt, Append) change it in place for
// every copy. Use Clone for an independent deep copy.
type Value struct {
	kind Kind
	// num is the number for Number and 1 or 0 for Bool.
	num float64
	// str is the contents of a String. For a Number parsed from JSON it is
	// the original literal, so that re-encoding is lossless; it is empty for
	// computed numbers.
	str string
	// ref holds the contents of an Array or Object. INVARIANT: non-nil for
	// those kinds, nil for the others.
	ref *node
}

// node is the shared body of an array or object.
type node struct {
	elems   []Value  // array elements
	members []Member // object members, in document order; names are unique
}

// Member is one name/value pair of an object.
type Member struct {
	Name  string
	Value Value
}

var (
	undefinedValue = Value{}
	nullValue      = Value{kind: Null}
	trueValue      = Value{kind: Bool, num: 1}
	falseValue     = Value{kind: Bool}
)

// UndefinedValue returns undefined (the zero Value).
func UndefinedValue() Value { return undefinedValue }

// NullValue returns JSON null.
func NullValue() Value { return nullValue }

// BoolValue returns a boolean.
func BoolValue(b bool) Value {
	if b {
		return trueValue
	}
	return falseValue
}

// NumberValue returns a number. NaN and the infinities cannot be written as
// JSON; for them NumberValue returns undefined.
func NumberValue(f float64) Value {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return undefinedValue
	}
	return Value{kind: Number, num: f}
}

// StringValue returns a string.
func StringValue(s string) Value { return Value{kind: String, str: s} }

// NewArray returns an array holding elems (the slice is used, not copied).
// Undefined elements are kept in memory but written as null by AppendJSON,
// as JavaScript does; the query engine never puts undefined in an array.
func NewArray(elems ...Value) Value {
	return Value{kind: Array, ref: &node{elems: elems}}
}

// NewObject returns an object with the given members, in order. If a name
// repeats, the last one wins (at the position of the first). Undefined
// members are dropped.
func NewObject(members ...Member) Value {
	o := Value{kind: Object, ref: &node{members: make([]Member, 0, len(members))}}
	for _, m := range members {
		o.Set(m.Name, m.Value)
	}
	return o
}

// Kind returns the type of v.
func (v Value) Kind() Kind { return v.kind }

// IsDefined reports whether v is not undefined.
func (v Value) IsDefined() bool { return v.kind != Undefined }

// String returns the contents of a string value; for any other kind it
// returns the compact JSON text ("undefined" for undefined), which makes
// values print usefully with fmt.
func (v Value) String() string {
	switch v.kind {
	case String:
		return v.str
	case Undefined:
		return "undefined"
	}
	return string(v.AppendJSON(nil))
}

// JSON returns the compact JSON text of v (empty for undefined).
func (v Value) JSON() string { return string(v.AppendJSON(nil)) }

// Number returns the number held by v, or 0 if v is not a number.
func (v Value) Number() float64 {
	if v.kind == Number {
		return v.num
	}
	return 0
}

// Bool returns the boolean held by v, or false if v is not a boolean.
func (v Value) Bool() bool { return v.kind == Bool && v.num != 0 }

// AsString returns the string held by v and whether v is a string.
func (v Value) AsString() (string, bool) { return v.str, v.kind == String }

// AsNumber returns the number held by v and whether v is a number.
func (v Value) AsNumber() (float64, bool) { return v.num, v.kind == Number }

// AsBool returns the boolean held by v and whether v is a boolean.
func (v Value) AsBool() (bool, bool) { return v.num != 0, v.kind == Bool }

// NumberLiteral returns the JSON literal a number was parsed from, or ""
// for a computed number or a non-number.
func (v Value) NumberLiteral() string {
	if v.kind == Number {
		return v.str
	}
	return ""
}

// IsTrue reports whether v is the boolean true.
func (v Value) IsTrue() bool { return v.kind == Bool && v.num != 0 }

// Len returns the number of elements of an array or members of an object,
// and 0 for anything else.
func (v Value) Len() int {
	switch v.kind {
	case Array:
		return len(v.ref.elems)
	case Object:
		return len(v.ref.members)
	}
	return 0
}

// Elems returns the elements of an array (nil for other kinds). The slice
// is shared with v: do not modify it; use the mutators.
func (v Value) Elems() []Value {
	if v.kind == Array {
		return v.ref.elems
	}
	return nil
}

// Members returns the members of an object in order (nil for other kinds).
// The slice is shared with v: do not modify it; use the mutators.
func (v Value) Members() []Member {
	if v.kind == Object {
		return v.ref.members
	}
	return nil
}

// Index returns element i of an array, or undefined if v is not an array
// or i is out of range.
func (v Value) Index(i int) Value {
	if v.kind != Array || i < 0 || i >= len(v.ref.elems) {
		return undefinedValue
	}
	return v.ref.elems[i]
}

// Get returns the member called name, or undefined if v is not an object
// or has no such member.
func (v Value) Get(name string) Value {
	if v.kind != Object {
		return undefinedValue
	}
	for i := range v.ref.members {
		if v.ref.members[i].Name == name {
			return v.ref.members[i].Value
		}
	}
	return undefinedValue
}

// Lookup is Get that also reports whether the member exists.
func (v Value) Lookup(name string) (Value, bool) {
	x := v.Get(name)
	return x, x.kind != Undefined
}

// Set sets member name of an object to x, in place: an existing member
// keeps its position, a new one is appended. Setting undefined deletes the
// member. Set reports false (and does nothing) if v is not an object.
func (v Value) Set(name string, x Value) bool {
	if v.kind != Object {
		return false
	}
	if x.kind == Undefined {
		v.Delete(name)
		return true
	}
	ms := v.ref.members
	for i := range ms {
		if ms[i].Name == name {
			ms[i].Value = x
			return true
		}
	}
	v.ref.members = append(ms, Member{Name: name, Value: x})
	return true
}

// Delete removes member name from an object, in place, keeping the order of
// the others. It reports whether a member was removed.
func (v Value) Delete(name string) bool {
	if v.kind != Object {
		return false
	}
	ms := v.ref.members
	for i := range ms {
		if ms[i].Name == name {
			copy(ms[i:], ms[i+1:])
			ms[len(ms)-1] = Member{}
			v.ref.members = ms[:len(ms)-1]
			return true
		}
	}
	return false
}

// SetIndex replaces element i of an array, in place. It reports false if v
// is not an array or i is out of range.
func (v Value) SetIndex(i int, x Value) bool {
	if v.kind != Array || i < 0 || i >= len(v.ref.elems) {
		return false
	}
	v.ref.elems[i] = x
	return true
}

// Insert inserts x before element i of an array, in place; i == Len()
// appends. It reports false if v is not an array or i is out of range.
func (v Value) Insert(i int, x Value) bool {
	if v.kind != Array || i < 0 || i > len(v.ref.elems) {
		return false
	}
	es := append(v.ref.elems, Value{})
	copy(es[i+1:], es[i:])
	es[i] = x
	v.ref.elems = es
	return true
}

// Append appends x to an array, in place. It reports false if v is not an
// array.
func (v Value) Append(x Value) bool {
	if v.kind != Array {
		return false
	}
	v.ref.elems = append(v.ref.elems, x)
	return true
}

// RemoveAt removes element i of an array, in place. It reports false if v
// is not an array or i is out of range.
func (v Value) RemoveAt(i int) bool {
	if v.kind != Array || i < 0 || i >= len(v.ref.elems) {
		return false
	}
	es := v.ref.elems
	copy(es[i:], es[i+1:])
	es[len(es)-1] = Value{}
	v.ref.elems = es[:len(es)-1]
	return true
}

// Clone returns a deep copy of v: changing the copy never changes v.
func (v Value) Clone() Value {
	switch v.kind {
	case Array:
		es := make([]Value, len(v.ref.elems))
		for i, e := range v.ref.elems {
			es[i] = e.Clone()
		}
		return Value{kind: Array, ref: &node{elems: es}}
	case Object:
		ms := make([]Member, len(v.ref.members))
		for i, m := range v.ref.members {
			ms[i] = Member{Name: m.Name, Value: m.Value.Clone()}
		}
		return Value{kind: Object, ref: &node{members: ms}}
	}
	return v
}

// newObjectCap returns an empty object with room for n members.
func newObjectCap(n int) Value {
	return Value{kind: Object, ref: &node{members: make([]Member, 0, n)}}
}

// addMember appends a member without checking for duplicates.
// REQUIRES: o is an object, name is not already present, x is defined.
func (v Value) addMember(name string, x Value) {
	v.ref.members = append(v.ref.members, Member{Name: name, Value: x})
}
