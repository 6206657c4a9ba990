package engine

import (
	"bytes"
	"testing"
)

// FuzzTokenClaims decodes any payload: nothing panics, and what decodes
// encodes back to the same bytes (a token carries one reading only).
func FuzzTokenClaims(f *testing.F) {
	f.Add(tokenClaims{permission: "AAAAAAAAAAAAAAAAAAAAAA==", version: `"00000000-0000-0000-0000-000000000001"`, userVersion: `"x"`, expires: 1}.encode())
	f.Add([]byte{1})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := decodeClaims(b)
		if err != nil {
			return
		}
		if again := c.encode(); !bytes.Equal(again, b) {
			t.Fatalf("%x decodes to %+v, which encodes to %x", b, c, again)
		}
	})
}
