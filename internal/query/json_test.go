package query

import (
	"errors"
	"strings"
	"testing"
)

func TestParseJSONRoundTrip(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"object order kept", `{"b":1,"a":2}`, `{"b":1,"a":2}`},
		{"white space dropped", " { \"a\" : [ 1 , 2 ] ,\n\t\"b\" : { } }\r\n", `{"a":[1,2],"b":{}}`},
		{"number literal kept", `[1.0,1e3,-0,0.10,12345678901234567890,1E-2]`, `[1.0,1e3,-0,0.10,12345678901234567890,1E-2]`},
		{"scalars", `[true,false,null,"x"]`, `[true,false,null,"x"]`},
		{"top-level scalar", `"s"`, `"s"`},
		{"top-level number", ` 42 `, `42`},
		{"escapes decoded and re-encoded", `"a\"b\\c\/d\b\f\n\r\t\u0001\u00e9"`, `"a\"b\\c/d\b\f\n\r\t\u0001é"`},
		{"surrogate pair", `"\ud83d\ude00"`, `"😀"`},
		{"lone surrogate replaced", `"\ud83d!"`, `"` + "\ufffd" + `!"`},
		{"utf8 kept", `"héllo 世界"`, `"héllo 世界"`},
		{"empty containers", `[[],{},[{}]]`, `[[],{},[{}]]`},
		{"deep but allowed", strings.Repeat("[", 128) + strings.Repeat("]", 128), strings.Repeat("[", 128) + strings.Repeat("]", 128)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := ParseJSON([]byte(tt.in))
			if err != nil {
				t.Fatalf("ParseJSON(%q): %v", tt.in, err)
			}
			if got := string(v.AppendJSON(nil)); got != tt.want {
				t.Errorf("ParseJSON(%q) re-encoded: got %s, want %s", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseJSONErrors(t *testing.T) {
	tests := []struct {
		name, in string
		offset   int
		msg      string
	}{
		{"empty", ``, 0, "unexpected end of input"},
		{"only space", `   `, 3, "unexpected end of input"},
		{"trailing comma array", `[1,]`, 3, "unexpected ']'"},
		{"trailing comma object", `{"a":1,}`, 7, "expected member name"},
		{"single quotes", `{'a':1}`, 1, "expected member name"},
		{"unquoted key", `{a:1}`, 1, "expected member name"},
		{"missing colon", `{"a" 1}`, 5, "expected ':'"},
		{"trailing garbage", `{} x`, 3, "after top-level value"},
		{"two values", `1 2`, 2, "after top-level value"},
		{"leading zero", `01`, 1, "after top-level value"},
		{"bare minus", `-`, 1, "invalid number"},
		{"dot without digits", `1.`, 2, "digit expected after '.'"},
		{"exponent without digits", `1e+`, 3, "digit expected in exponent"},
		{"NaN", `NaN`, 0, "unexpected 'N'"},
		{"huge number", `1e400`, 0, "number out of range"},
		{"comment", `/*x*/1`, 0, "unexpected '/'"},
		{"bad literal", `tru`, 0, "invalid literal"},
		{"unterminated string", `"abc`, 4, "unterminated string"},
		{"control char", "\"a\nb\"", 2, "control character"},
		{"bad escape", `"\x"`, 1, "invalid escape"},
		{"bad unicode escape", `"\u12G4"`, 3, "invalid \\u escape"},
		{"invalid utf8", "\"a\xffb\"", 2, "invalid UTF-8"},
		{"duplicate name", `{"a":1,"a":2}`, 7, `duplicate member name "a"`},
		{"too deep", strings.Repeat("[", 129) + strings.Repeat("]", 129), 128, "nesting too deep"},
		{"unclosed object", `{"a":1`, 6, "unexpected end of input in object"},
		{"unclosed array", `[1`, 2, "unexpected end of input in array"},
		{"missing comma", `[1 2]`, 3, "expected ',' or ']'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseJSON([]byte(tt.in))
			var je *JSONError
			if !errors.As(err, &je) {
				t.Fatalf("ParseJSON(%q): got error %v, want a *JSONError", tt.in, err)
			}
			if je.Offset != tt.offset || !strings.Contains(je.Msg, tt.msg) {
				t.Errorf("ParseJSON(%q): got offset %d %q, want offset %d containing %q", tt.in, je.Offset, je.Msg, tt.offset, tt.msg)
			}
		})
	}
}

func TestParseJSONDuplicateInLargeObject(t *testing.T) {
	var b strings.Builder
	b.WriteString("{")
	for i := 0; i < 100; i++ {
		b.WriteString(`"k` + string(rune('a'+i%26)) + string(rune('a'+i/26)) + `":1,`)
	}
	b.WriteString(`"kaa":2}`)
	if _, err := ParseJSON([]byte(b.String())); err == nil || !strings.Contains(err.Error(), "duplicate") {
		t.Errorf("got %v, want a duplicate member error", err)
	}
}

func TestParseJSONDoesNotAlias(t *testing.T) {
	in := []byte(`{"a":"xyz","b":[1]}`)
	v, err := ParseJSON(in)
	if err != nil {
		t.Fatal(err)
	}
	for i := range in {
		in[i] = ' '
	}
	if got := v.JSON(); got != `{"a":"xyz","b":[1]}` {
		t.Errorf("after overwriting the input: got %s", got)
	}
}
