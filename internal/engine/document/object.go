package document

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/ebbdb/ebb/internal/engine/dberr"
)

// ObjectBody validates that body is one JSON object that every later
// stage can handle and returns its members.
func ObjectBody(body []byte) ([]Member, error) {
	if !json.Valid(body) {
		return nil, dberr.BadRequest("The request body is not valid JSON. %s", JSONErrorDetail(body))
	}
	if !utf8.Valid(body) {
		return nil, dberr.BadRequest("The request body is not valid UTF-8.")
	}
	if err := CheckShape(body); err != nil {
		return nil, err
	}
	ms, ok := ObjectMembers(body)
	if !ok {
		return nil, dberr.BadRequest("The request body must be a JSON object.")
	}
	return ms, nil
}

// Pair is one member of an object under construction: a key and its raw
// JSON value.
type Pair struct {
	Key string
	Val []byte
}

// Rebuild writes an object from ordered (key, raw value) pairs.
func Rebuild(pairs []Pair) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, p := range pairs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(AppendQuoted(nil, p.Key))
		b.WriteByte(':')
		b.Write(p.Val)
	}
	b.WriteByte('}')
	return b.Bytes()
}
