package engine

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/ebbdb/ebb/internal/engine/document"
	"github.com/ebbdb/ebb/internal/engine/keyspace"
	"github.com/ebbdb/ebb/internal/engine/resource"
	"github.com/ebbdb/ebb/internal/keys"
	"github.com/ebbdb/ebb/internal/storage"
)

// A resource token names a permission, the versions (_etag) of the
// permission and of its user when it was issued, and when it expires
// (tokenClaims); the gateway has checked its signature
// (auth.OpenResourceToken). It authorizes a request while it has not
// expired on the engine's clock, both versions are still current, and
// the request is within what the permission grants (AuthorizeResourceToken).
// Replacing or deleting the permission or its user changes or removes
// what the token names, so it stops working. The permissions are kept in
// memory (grantTable), refreshed by every change on this node and by the
// catalog poll on the others: checking a token reads no storage.

// tokenClaimsVersion is the first byte of a token's payload.
const tokenClaimsVersion = 1

// tokenClaims is what a resource token carries.
type tokenClaims struct {
	permission, version, userVersion string
	expires                          int64 // Unix seconds
}

func (c tokenClaims) encode() []byte {
	b := []byte{tokenClaimsVersion}
	b = keys.AppendString(b, c.permission)
	b = keys.AppendString(b, c.version)
	b = keys.AppendString(b, c.userVersion)
	return binary.BigEndian.AppendUint64(b, uint64(c.expires))
}

var errBadClaims = errors.New("engine: malformed token claims")

func decodeClaims(b []byte) (tokenClaims, error) {
	if len(b) == 0 || b[0] != tokenClaimsVersion {
		return tokenClaims{}, errBadClaims
	}
	var c tokenClaims
	rest := b[1:]
	for _, f := range []*string{&c.permission, &c.version, &c.userVersion} {
		v, r, err := keys.DecodeBytes(rest)
		if err != nil {
			return tokenClaims{}, errBadClaims
		}
		*f, rest = string(v), r
	}
	if len(rest) != 8 {
		return tokenClaims{}, errBadClaims
	}
	c.expires = int64(binary.BigEndian.Uint64(rest))
	return c, nil
}

// grant is a permission as tokens are checked against it.
type grant struct {
	version, userVersion string
	readOnly             bool
	// scope is the path of names the permission grants
	// ("dbs/db/colls/coll[/kind/id]"); "" when its resource no longer
	// exists.
	scope string
	// pk limits it to one logical partition; nil for none.
	pk document.PartitionKey
}

// grantTable is every permission by _rid.
type grantTable map[string]*grant

// loadGrants reads every permission into the table tokens are checked
// against.
func (e *Engine) loadGrants(ctx context.Context) error {
	cat := e.catalogSnapshot()
	table := grantTable{}
	err := e.store.View(ctx, func(r storage.Reader) error {
		users := map[string]string{} // _rid → _etag
		if err := scanAll(r, keyspace.CatUser, func(v []byte) error {
			var f resource.Fields
			if err := json.Unmarshal(v, &f); err != nil {
				return err
			}
			users[f.RID] = f.Etag
			return nil
		}); err != nil {
			return err
		}
		return scanAll(r, keyspace.CatPerm, func(v []byte) error {
			var p struct {
				resource.Fields
				Mode     string          `json:"permissionMode"`
				Resource string          `json:"resource"`
				PK       json.RawMessage `json:"resourcePartitionKey"`
			}
			if err := json.Unmarshal(v, &p); err != nil {
				return err
			}
			raw, err := resource.DecodeRID(p.RID, 16)
			if err != nil {
				return err
			}
			g := &grant{version: p.Etag, userVersion: users[resource.RIDString(raw[:8])], readOnly: !strings.EqualFold(p.Mode, "All")}
			if scope, err := cat.permissionScope(p.Resource); err == nil {
				g.scope = strings.Join(scope, "/")
			}
			if len(p.PK) > 0 && string(p.PK) != "null" {
				g.pk, _ = document.ParsePKHeader(string(p.PK))
			}
			table[p.RID] = g
			return nil
		})
	})
	if err != nil {
		return err
	}
	e.grants.Store(&table)
	return nil
}

// TokenRequest is what a request asks of a resource token.
type TokenRequest struct {
	// Path is the request path, unescaped, without its leading and
	// trailing slashes ("" for the account).
	Path string
	// Write says the request changes something (a read-only permission
	// refuses it); Method is its HTTP method.
	Write  bool
	Method string
	// PK is the partition key header, if HasPK.
	PK    string
	HasPK bool
}

// Errors of resource tokens. The 403 is the service's text, on which
// clients match.
var (
	errTokenForbidden = &Error{Kind: KindForbidden, Message: "Insufficient permissions provided in the authorization header for the corresponding request. Please retry with another authorization header."}
	errTokenRevoked   = &Error{Kind: KindUnauthorized, Message: "The resource token is no longer valid: its permission, or the permission's user, was replaced or deleted. Read the permission again for a new token."}
)

// AuthorizeResourceToken checks a request against the payload of a
// resource token whose signature the gateway has checked.
func (e *Engine) AuthorizeResourceToken(payload []byte, req TokenRequest) error {
	c, err := e.claims(payload)
	if err != nil {
		return errTokenRevoked
	}
	if now := e.now(); now.Unix() >= c.expires {
		return &Error{Kind: KindUnauthorized, Message: "The resource token expired at " + time.Unix(c.expires, 0).UTC().Format(time.RFC1123) + " (server time " + now.UTC().Format(time.RFC1123) + "). Read the permission again for a new token."}
	}
	g := e.grant(c.permission)
	if g == nil || g.version != c.version || g.userVersion != c.userVersion {
		return errTokenRevoked
	}
	if req.Path == "" {
		return nil // the account, which any valid token may read
	}
	if !within(req.Path, g.scope) || (req.Write && g.readOnly) {
		return errTokenForbidden
	}
	if g.pk != nil && inPartition(req) {
		if !req.HasPK {
			return errTokenForbidden
		}
		pk, err := document.ParsePKHeader(req.PK)
		if err != nil || !pk.Equal(g.pk) {
			return errTokenForbidden
		}
	}
	return nil
}

// within reports whether path is scope or below it.
func within(path, scope string) bool {
	return scope != "" && strings.HasPrefix(path, scope) && (len(path) == len(scope) || path[len(scope)] == '/')
}

// inPartition reports whether a request acts on items of one logical
// partition, which a permission with a resourcePartitionKey limits: the
// items of a container (reads, writes, queries, feeds) and stored
// procedure runs. The container's own resource and its partition key
// ranges stay readable: the SDKs read them to route.
func inPartition(req TokenRequest) bool {
	// dbs/{db}/colls/{coll}/{kind}[/{id}]
	rest := req.Path
	for range 4 {
		i := strings.IndexByte(rest, '/')
		if i < 0 {
			return false
		}
		rest = rest[i+1:]
	}
	kind, id, hasID := strings.Cut(rest, "/")
	return kind == "docs" || (kind == "sprocs" && hasID && id != "" && req.Method == "POST")
}

// claims decodes a token's payload, remembering the tokens seen: a
// client sends the same one on every request.
func (e *Engine) claims(payload []byte) (tokenClaims, error) {
	e.claimsMu.RLock()
	c, ok := e.claimsSeen[string(payload)]
	e.claimsMu.RUnlock()
	if ok {
		return c, nil
	}
	c, err := decodeClaims(payload)
	if err != nil {
		return c, err
	}
	e.claimsMu.Lock()
	if len(e.claimsSeen) >= maxClaimsSeen {
		clear(e.claimsSeen) // tokens are re-decoded, no harm done
	}
	e.claimsSeen[string(payload)] = c
	e.claimsMu.Unlock()
	return c, nil
}

// maxClaimsSeen bounds the decoded tokens remembered.
const maxClaimsSeen = 4096

// grant returns the permission rid names. When the store is shared and
// the permission is unknown, or its resource is, the catalog and the
// permissions are read again once: either may have been created on
// another node a moment ago.
func (e *Engine) grant(rid string) *grant {
	if t := e.grants.Load(); t != nil {
		if g, ok := (*t)[rid]; ok && (g.scope != "" || e.cluster == nil) {
			return g
		}
	}
	if e.cluster == nil {
		return nil
	}
	if _, err := e.refreshCatalog(context.Background(), nil); err != nil {
		return nil
	}
	return (*e.grants.Load())[rid]
}
