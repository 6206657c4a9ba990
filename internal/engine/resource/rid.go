// Package resource is the shape of the catalog's resources: what the
// service accepts in a database, container or offer body and the
// messages it refuses the rest with (CheckID, ParseContainerSpec), the
// normalized JSON Ebb stores and serves for each (ContainerBody,
// ContainerProps, OfferJSON), and the encodings of their ids and etags.
// The engine keeps the catalog itself (which resources exist, cached in
// memory, changed under its lock); this package only reads and writes
// their bytes, so it holds no state.
package resource

import (
	"encoding/base64"
	"fmt"
	"strings"
)

// RIDString renders a resource id as Cosmos does: standard base64 with
// '/' replaced by '-'.
func RIDString(b []byte) string {
	s := base64.StdEncoding.EncodeToString(b)
	out := []byte(s)
	for i, c := range out {
		if c == '/' {
			out[i] = '-'
		}
	}
	return string(out)
}

// ridDecode reverses RIDString.
func ridDecode(s string) ([]byte, error) {
	return base64.StdEncoding.DecodeString(strings.ReplaceAll(s, "-", "/"))
}

// DecodeRID decodes a stored resource id of n bytes (4 for a database,
// 8 for a container).
func DecodeRID(s string, n int) ([]byte, error) {
	b, err := ridDecode(s)
	if err != nil || len(b) != n {
		return nil, fmt.Errorf("resource: corrupt resource id %q", s)
	}
	return b, nil
}

// Etag renders an etag for a catalog resource from its number.
func Etag(n uint64) string {
	return fmt.Sprintf("\"00000000-0000-0000-%04x-%012x\"", (n>>48)&0xffff, n&0xffffffffffff)
}
