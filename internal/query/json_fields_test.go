package query

import "testing"

func TestParseDocFields(t *testing.T) {
	doc := []byte(`{"skip":"a \"quoted\" \\ string","":"empty","n":5,"deep":{"x":[1,{"y":"}"}]},"s":"v","arr":[1,[2]],"last":true}`)
	tests := []struct {
		fields []string
		want   string
	}{
		{[]string{"n"}, `{"n":5}`},
		{[]string{"s", "n"}, `{"n":5,"s":"v"}`},
		{[]string{"deep"}, `{"deep":{"x":[1,{"y":"}"}]}}`},
		{[]string{"last"}, `{"last":true}`},
		{[]string{"missing"}, `{}`},
		{[]string{}, `{}`},
		{[]string{""}, `{"":"empty"}`},
	}
	for _, tt := range tests {
		v, err := parseDocFields(doc, tt.fields)
		if err != nil {
			t.Fatalf("parseDocFields(%v): %v", tt.fields, err)
		}
		if got := v.JSON(); got != tt.want {
			t.Errorf("parseDocFields(%v): got %s, want %s", tt.fields, got, tt.want)
		}
	}
	// The result must not refer to the input.
	v, _ := parseDocFields(doc, []string{"s"})
	for i := range doc {
		doc[i] = 'X'
	}
	if got := v.JSON(); got != `{"s":"v"}` {
		t.Errorf("after overwriting the input: got %s", got)
	}
}
