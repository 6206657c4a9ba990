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

	"github.com/ebbdb/ebb/internal/engine/dberr"
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

// offerRIDLen is the length of an offer's resource id: three bytes,
// which render as four characters (e.g. "AbCD").
const offerRIDLen = 3

// CheckOfferID refuses an id that cannot be an offer's: the service reads
// the id in an offer's path as a resource id and answers 400 when it is
// not one (ResourceId.Parse throws BadRequestException with
// RMResources.InvalidResourceID, azure-cosmos-dotnet-v3), where a
// well-formed id of no offer is 404.
func CheckOfferID(id string) error {
	if b, err := ridDecode(id); err != nil || len(b) != offerRIDLen {
		return dberr.BadRequest("Invalid resource id '%s': an offer is addressed by its resource id (_rid), four characters such as 'AbCD'.", id)
	}
	return nil
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
