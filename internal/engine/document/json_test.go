package document

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ebbdb/ebb/internal/query"
)

func TestCheckShapeDuplicateNames(t *testing.T) {
	wide := func(extra string) string {
		var b strings.Builder
		b.WriteString(`{"id":"w"`)
		for i := range 40 {
			b.WriteString(`,"f` + strconv.Itoa(i) + `":` + strconv.Itoa(i))
		}
		return b.String() + extra + `}`
	}
	for _, tc := range []struct{ name, doc, want string }{
		{"top level", `{"id":"dup1","id":"dup2"}`,
			`Duplicate property name 'id' in the top-level object (byte offset 13); a property may appear only once in an object.`},
		{"an escaped name", `{"id":"dup1","\u0069d":"dup2"}`,
			`Duplicate property name 'id' in the top-level object (byte offset 13); a property may appear only once in an object.`},
		{"white space", "{ \"pk\" : 1 ,\n \"pk\"\t: 2 }",
			`Duplicate property name 'pk' in the top-level object (byte offset 14); a property may appear only once in an object.`},
		{"nested", `{"id":"a","tenant":{"id":1,"id":2}}`,
			`Duplicate property name 'id' in the object at /tenant (byte offset 27); a property may appear only once in an object.`},
		{"in an array", `{"a":[{"x":1},{"y":1,"x":2,"y":3}]}`,
			`Duplicate property name 'y' in the object at /a/1 (byte offset 27); a property may appear only once in an object.`},
		{"after a nested object", `{"a":{"b":1},"c":{"b":2},"a":3}`,
			`Duplicate property name 'a' in the top-level object (byte offset 25); a property may appear only once in an object.`},
		{"a pointer's escapes", `{"a/b":{"~":[{"k":1,"k":2}]}}`,
			`Duplicate property name 'k' in the object at /a~1b/~0/0 (byte offset 20); a property may appear only once in an object.`},
		{"an escaped quote", `{"a\"b":1,"a\"b":2}`,
			`Duplicate property name 'a"b' in the top-level object (byte offset 10); a property may appear only once in an object.`},
		{"lone surrogates read alike", `{"\ud800":1,"\udbff":2}`,
			`Duplicate property name '�' in the top-level object (byte offset 12); a property may appear only once in an object.`},
		{"a wide object", wide(`,"f39":0`),
			`Duplicate property name 'f39' in the top-level object (byte offset 350); a property may appear only once in an object.`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckShape([]byte(tc.doc))
			if err == nil || err.Error() != tc.want {
				t.Fatalf("CheckShape(%s) = %v\nwant %s", tc.doc, err, tc.want)
			}
		})
	}
	for _, doc := range []string{
		`{"id":"a","ID":"b","Id":"c"}`,
		`{"a":{"a":{"a":1}},"b":{"a":2}}`,
		`{"a":[{"x":1},{"x":2}],"x":3}`,
		`{"a":"b:c","s":["a","a"],"t":{"u":"a","v":"a"}}`,
		`{"":1,"\u0000":2,"a":{"":3}}`,
		wide(""),
	} {
		if err := CheckShape([]byte(doc)); err != nil {
			t.Errorf("CheckShape(%s) = %v, want nil", doc, err)
		}
	}
}

// FuzzCheckShape checks that CheckShape refuses exactly the JSON texts
// the query engine's parser refuses: a document that passes the write
// path's validation is one every reader can read, and reads alike.
func FuzzCheckShape(f *testing.F) {
	for _, s := range []string{
		`{"id":"a","id":"b"}`, `{"\u0069d":1,"id":2}`, `{"a":{"b":1,"b":2}}`, `{"a":[{"b":1},{"b":1}]}`,
		`{"\ud800":1,"\udfff":2}`, `{"a":1e400}`, `[` + strings.Repeat(`[`, 128) + strings.Repeat(`]`, 129),
		`{"a\"":1,"a\\":2}`, `"x"`, `{"a" : {"b" :[ {"c":1} ] } , "b":2}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		if !json.Valid([]byte(doc)) || !utf8.ValidString(doc) {
			return
		}
		shapeErr := CheckShape([]byte(doc))
		_, parseErr := query.ParseJSON([]byte(doc))
		if (shapeErr == nil) != (parseErr == nil) {
			t.Fatalf("%q: CheckShape says %v, the query parser %v", doc, shapeErr, parseErr)
		}
	})
}

func TestCheckFields(t *testing.T) {
	fields := Fields(struct {
		Op    string `json:"op"`
		Path  string `json:"path,omitempty"`
		Skip  string `json:"-"`
		Plain int
	}{})
	if want := []string{"op", "path", "Plain"}; strings.Join(fields, ",") != strings.Join(want, ",") {
		t.Fatalf("Fields = %v, want %v", fields, want)
	}
	for _, tc := range []struct{ doc, want string }{
		{`{"op":"set","path":"/a"}`, ""},
		{`{"op":"set","other":1,"OTHER":2,"-":1,"Skip":2,"skip":3}`, ""},
		{`[{"op":"set"}]`, ""},
		{`{"op":"set","path":"/a","op":"remove"}`, `Duplicate property name 'op' in the top-level object (byte offset 24); a property may appear only once in an object.`},
		{`{"\u006fp":"set","op":"remove"}`, `Duplicate property name 'op' in the top-level object (byte offset 17); a property may appear only once in an object.`},
		{`{"plain":1,"PLAIN":2}`, `The properties 'plain' and 'PLAIN' in the top-level object (byte offset 11) are the same property 'Plain'; send it once.`},
		{`{"Path":"/a","x":{"path":1},"pATH":"/b"}`, `The properties 'Path' and 'pATH' in the top-level object (byte offset 28) are the same property 'path'; send it once.`},
	} {
		err := CheckFields([]byte(tc.doc), 0, fields)
		if got := fmt.Sprint(err); tc.want == "" && err != nil || tc.want != "" && got != tc.want {
			t.Errorf("CheckFields(%s) = %v\nwant %s", tc.doc, err, tc.want)
		}
	}
	doc := `[{"op":"a"},{"path":"/x","Path":"/y"}]`
	if err := CheckFieldsOfEach([]byte(doc), 0, fields); err == nil || !strings.Contains(err.Error(), "in the object at /1 (byte offset 25)") {
		t.Errorf("CheckFieldsOfEach(%s) = %v", doc, err)
	}
}

// TestAppendQuoted holds AppendQuoted to json.Marshal, which it replaced.
func TestAppendQuoted(t *testing.T) {
	for _, s := range []string{
		"", "plain", `"00000001-0000-0000-0000-000000000002"`, `a\b`, "tab\there", "\b\f\n\r\t\x00\x1f\x7f",
		"<script>&amp;</script>", "é€😀", "\u2028\u2029", "bad \xff utf8 \xc3", "\xed\xa0\x80", "dbs/x+y=/colls/",
	} {
		checkQuoted(t, s)
	}
}

func checkQuoted(t *testing.T, s string) {
	t.Helper()
	want, _ := json.Marshal(s)
	if got := AppendQuoted([]byte("x"), s); string(got) != "x"+string(want) {
		t.Fatalf("AppendQuoted(%q) = %s, want x%s", s, got, want)
	}
}

func FuzzAppendQuoted(f *testing.F) {
	f.Add("a\"b\\c<>&\u2028\xff\x01é")
	f.Fuzz(checkQuoted)
}
