package resource

import (
	"strings"

	"github.com/ebbdb/ebb/internal/engine/dberr"
	"github.com/ebbdb/ebb/internal/engine/document"
)

// Fields are the system fields every stored catalog resource has.
type Fields struct {
	ID   string `json:"id"`
	RID  string `json:"_rid"`
	Etag string `json:"_etag"`
}

// CheckID applies Cosmos's rules for database and container ids.
func CheckID(raw []byte, what string) (string, error) {
	if raw == nil {
		return "", dberr.BadRequest("The input content is invalid because the required properties - 'id; ' - are missing")
	}
	if raw[0] != '"' {
		return "", dberr.BadRequest("The %s id must be a string; found %s.", what, document.Truncate(raw, 64))
	}
	id := document.Unquote(raw)
	switch {
	case id == "":
		return "", dberr.BadRequest("The %s id must not be empty.", what)
	case len(id) > 255:
		return "", dberr.BadRequest("The %s id is %d characters long; the maximum is 255.", what, len(id))
	case strings.ContainsAny(id, "/\\?#"):
		return "", dberr.BadRequest("The input name '%s' is invalid. Ensure to provide a unique non-empty string less than '255' characters and that does not contain '/', '\\', '?' or '#'.", id)
	case strings.HasSuffix(id, " "):
		return "", dberr.BadRequest("The input name '%s' is invalid. A %s id must not end with a space.", id, what)
	}
	return id, nil
}
