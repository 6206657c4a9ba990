package document

import "bytes"

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
