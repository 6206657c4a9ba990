package query

import (
	"math"
	"testing"
)

func mustJSON(t *testing.T, s string) Value {
	t.Helper()
	v, err := ParseJSON([]byte(s))
	if err != nil {
		t.Fatalf("ParseJSON(%s): %v", s, err)
	}
	return v
}

func TestValueAccessors(t *testing.T) {
	v := mustJSON(t, `{"s":"x","n":2.5,"b":true,"z":null,"a":[1,"2"],"o":{"k":1}}`)
	if got := v.Kind(); got != Object {
		t.Errorf("Kind: got %v, want object", got)
	}
	if s, ok := v.Get("s").AsString(); !ok || s != "x" {
		t.Errorf("Get(s): got %q %v", s, ok)
	}
	if got := v.Get("n").Number(); got != 2.5 {
		t.Errorf("Get(n).Number(): got %v", got)
	}
	if !v.Get("b").Bool() || v.Get("z").Kind() != Null {
		t.Errorf("b/z wrong")
	}
	if v.Get("missing").IsDefined() {
		t.Errorf("missing member is defined")
	}
	if got := v.Get("a").Index(1).String(); got != "2" {
		t.Errorf("a[1]: got %q", got)
	}
	if v.Get("a").Index(5).IsDefined() || v.Get("a").Index(-1).IsDefined() {
		t.Errorf("out of range index defined")
	}
	if got := v.Get("o").String(); got != `{"k":1}` {
		t.Errorf("String of object: got %s", got)
	}
	if got := UndefinedValue().String(); got != "undefined" {
		t.Errorf("String of undefined: got %s", got)
	}
	if got := v.Len(); got != 6 {
		t.Errorf("Len: got %d", got)
	}
	if NumberValue(math.NaN()).IsDefined() || NumberValue(math.Inf(1)).IsDefined() {
		t.Errorf("non-finite numbers must be undefined")
	}
	if lit := v.Get("n").NumberLiteral(); lit != "2.5" {
		t.Errorf("NumberLiteral: got %q", lit)
	}
}

func TestValueMutators(t *testing.T) {
	v := mustJSON(t, `{"a":1,"b":2,"c":3}`)
	v.Set("b", StringValue("two"))
	v.Set("d", NewArray(NumberValue(1)))
	v.Delete("a")
	v.Set("c", UndefinedValue()) // deletes
	if got := v.JSON(); got != `{"b":"two","d":[1]}` {
		t.Fatalf("after object edits: got %s", got)
	}
	arr := v.Get("d")
	arr.Append(NumberValue(3))
	arr.Insert(1, NumberValue(2))
	arr.Insert(0, NumberValue(0))
	arr.SetIndex(3, StringValue("three"))
	if got := v.JSON(); got != `{"b":"two","d":[0,1,2,"three"]}` {
		t.Fatalf("after array edits through a copy: got %s", got)
	}
	arr.RemoveAt(0)
	if arr.RemoveAt(10) || arr.Insert(10, NullValue()) || arr.SetIndex(-1, NullValue()) {
		t.Errorf("out-of-range edits reported success")
	}
	if StringValue("x").Set("a", NullValue()) || NumberValue(1).Append(NullValue()) {
		t.Errorf("edits of scalars reported success")
	}
	c := v.Clone()
	c.Get("d").Append(NullValue())
	c.Set("b", NullValue())
	if got := v.JSON(); got != `{"b":"two","d":[1,2,"three"]}` {
		t.Errorf("Clone shares state: original became %s", got)
	}
	o := NewObject(Member{"x", NumberValue(1)}, Member{"y", UndefinedValue()}, Member{"x", NumberValue(2)})
	if got := o.JSON(); got != `{"x":2}` {
		t.Errorf("NewObject: got %s", got)
	}
	// Appending to a member list carved from a parse slab must not clobber
	// a neighbour.
	p := mustJSON(t, `[{"a":1},{"b":2}]`)
	p.Index(0).Set("z", NumberValue(9))
	if got := p.JSON(); got != `[{"a":1,"z":9},{"b":2}]` {
		t.Errorf("slab append: got %s", got)
	}
}

func TestCompareOrder(t *testing.T) {
	// Each value is strictly less than the next.
	ordered := []string{
		"undefined", `null`, `false`, `true`, `-1e10`, `-1`, `0`, `0.5`, `1`, `2`, `1e10`,
		`""`, `"A"`, `"B"`, `"a"`, `"ab"`, `"b"`, `"é"`,
		`[]`, `[1]`, `[1,2]`, `[2]`, `["a"]`, `[[]]`,
		`{}`, `{"a":1}`, `{"a":1,"b":1}`, `{"a":2}`, `{"b":0}`,
	}
	vals := make([]Value, len(ordered))
	for i, s := range ordered {
		if s != "undefined" {
			vals[i] = mustJSON(t, s)
		}
	}
	for i := range vals {
		for j := range vals {
			want := cmpInt(i, j)
			if got := Compare(vals[i], vals[j]); got != want {
				t.Errorf("Compare(%s, %s): got %d, want %d", ordered[i], ordered[j], got, want)
			}
		}
	}
}

func TestEqual(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{`1`, `1.0`, true},
		{`0`, `-0`, true},
		{`1`, `"1"`, false},
		{`null`, `null`, true},
		{`[1,2]`, `[1,2]`, true},
		{`[1,2]`, `[2,1]`, false},
		{`{"a":1,"b":[1]}`, `{"b":[1],"a":1}`, true},
		{`{"a":1}`, `{"a":1,"b":2}`, false},
		{`{"a":1,"b":2}`, `{"a":1}`, false},
		{`true`, `1`, false},
	}
	for _, tt := range tests {
		a, b := mustJSON(t, tt.a), mustJSON(t, tt.b)
		if got := Equal(a, b); got != tt.want {
			t.Errorf("Equal(%s, %s): got %v, want %v", tt.a, tt.b, got, tt.want)
		}
		ka, kb := string(appendKey(nil, a)), string(appendKey(nil, b))
		if (ka == kb) != tt.want {
			t.Errorf("appendKey(%s) == appendKey(%s): got %v, want %v", tt.a, tt.b, ka == kb, tt.want)
		}
	}
	if !Equal(UndefinedValue(), UndefinedValue()) || Equal(UndefinedValue(), NullValue()) {
		t.Errorf("undefined equality wrong")
	}
}
