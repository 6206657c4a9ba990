package document

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// objectBodyPasses is what ObjectBody replaced: one pass per check. The
// tests hold the scan to it, error text included.
func objectBodyPasses(body []byte) ([]Member, error) {
	if !json.Valid(body) {
		return nil, fmt.Errorf("The request body is not valid JSON. %s", JSONErrorDetail(body))
	}
	if !utf8.Valid(body) {
		return nil, fmt.Errorf("The request body is not valid UTF-8.")
	}
	if err := CheckShape(body); err != nil {
		return nil, err
	}
	ms, ok := ObjectMembers(body)
	if !ok {
		return nil, fmt.Errorf("The request body must be a JSON object.")
	}
	return ms, nil
}

// checkScan fails t unless ObjectBody and objectBodyPasses agree on doc.
func checkScan(t *testing.T, doc string) {
	t.Helper()
	got, gotErr := ObjectBody([]byte(doc))
	want, wantErr := objectBodyPasses([]byte(doc))
	if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
		t.Fatalf("ObjectBody(%q)\n got error %v\nwant error %v", doc, gotErr, wantErr)
	}
	if wantErr == nil && !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
		t.Fatalf("ObjectBody(%q)\n got %+v\nwant %+v", doc, got, want)
	}
}

// TestScan compares the one-pass ObjectBody with the passes it replaced
// on documents that each stop being valid in one way, and on some that
// are valid in more than one way at once: the first check that fails
// must still be the one that answers.
func TestScan(t *testing.T) {
	for _, doc := range []string{
		`{}`, ` { } `, `{"id":"a"}`, `{"id":"a","pk":1,"n":null,"t":true,"f":false,"x":[1,{"y":[]}],"o":{}}`,
		`{"a":-0.5e+10,"b":0,"c":-1,"d":1E-2,"e":12.0}`, `{"\u0069d":"a","s":"\"\\\/\b\f\n\r\t"}`, "{\"é\":\"ü€😀\"}",
		``, ` `, `{`, `}`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{"a":1 "b":2}`, `{,}`, `[1,]`, `[,1]`, `{"a":1}}`, `{"a":1} x`,
		`{"a":01}`, `{"a":-}`, `{"a":1.}`, `{"a":1e}`, `{"a":.5}`, `{"a":+1}`, `{"a":tru}`, `{"a":nul}`, `{"a":falsey}`,
		`{"a":"\x"}`, `{"a":"\u12"}`, `{"a":"\u12g4"}`, "{\"a\":\"\x01\"}", `{"a":"unterminated}`, `{"a":NaN}`,
		`[]`, `[1,2]`, `"x"`, `1`, `null`, `{"a":1}{}`,
		"{\"a\":\"\xff\"}", "{\"\xc3\":1}", "{\"a\":\"\xed\xa0\x80\"}", "{\"a\":\"\xef\xbf\xbd\"}",
		"{\"a\":\"\xff\",\"a\":1}", "{\"a\":1,\"a\":\"\xff\"}", `{"a":1,"a":2,}`, `{"a":1e999,"b":`,
		`{"a":1e999}`, `{"a":-1e999}`, `{"a":1e-999}`, `{"a":1,"a":1e999}`, `{"a":1e999,"a":1}`,
		`{"a":` + strings.Repeat("1", 400) + `}`, `{"a":` + strings.Repeat("9", 310) + `}`,
		`{"a":` + strings.Repeat(`[`, 127) + strings.Repeat(`]`, 127) + `}`,
		`{"a":` + strings.Repeat(`[`, 128) + strings.Repeat(`]`, 128) + `}`,
		`{"a":` + strings.Repeat(`[`, 128) + strings.Repeat(`]`, 127) + `}`,
		`{"a":` + strings.Repeat(`{"b":`, 200) + `1` + strings.Repeat(`}`, 200) + `,"a":2}`,
		`{"a":` + strings.Repeat(`[`, 9998) + strings.Repeat(`]`, 9998) + `}`,
		`{"a":` + strings.Repeat(`[`, 9999) + strings.Repeat(`]`, 9999) + `}`,
		`{"a":` + strings.Repeat(`[`, 10000) + strings.Repeat(`]`, 10000) + `}`,
		`{"id":"a","tenant":{"id":1,"id":2}}`, `{"a":[{"x":1},{"y":1,"x":2,"y":3}]}`, `{"\ud800":1,"\udbff":2}`,
	} {
		checkScan(t, doc)
	}
}

// FuzzScan holds ObjectBody to encoding/json on what is JSON and to the
// passes it replaced (objectBodyPasses) on everything else it answers:
// the error text and the members; and CheckJSON to json.Valid and
// CheckShape.
func FuzzScan(f *testing.F) {
	for _, s := range []string{
		`{"id":"a","pk":"p","n":1.5e3,"t":[true,false,null],"o":{"x":"\u00e9\n"}}`,
		`{"id":"a","id":"b"}`, `{"a":{"b":1,"b":2}}`, `{"a":1e400}`, `{"a":[` + strings.Repeat(`[`, 128) + strings.Repeat(`]`, 128) + `]}`,
		"{\"a\":\"\xff\"}", `{"a":"\ud800"}`, `[1,2]`, `{"a":1,}`, `{"a":01}`, ` {"a" : [ ] , "b" : { } } `,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		_, err := ObjectBody([]byte(doc))
		isJSON := err == nil || !strings.HasPrefix(err.Error(), "The request body is not valid JSON.")
		if isJSON != json.Valid([]byte(doc)) {
			t.Fatalf("%q: ObjectBody says %v; json.Valid %v", doc, err, !isJSON)
		}
		checkScan(t, doc)
		ok, err := CheckJSON([]byte(doc))
		if ok != json.Valid([]byte(doc)) || ok && fmt.Sprint(err) != fmt.Sprint(CheckShape([]byte(doc))) {
			t.Fatalf("%q: CheckJSON = %v, %v; json.Valid %v, CheckShape %v", doc, ok, err, json.Valid([]byte(doc)), CheckShape([]byte(doc)))
		}
	})
}
