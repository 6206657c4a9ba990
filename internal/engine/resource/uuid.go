package resource

import (
	"crypto/rand"
	"encoding/hex"
)

// NewUUID returns a random (version 4) UUID in its text form: an
// activity id, or the id a stored procedure's createDocument gives a
// document that has none.
func NewUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}
