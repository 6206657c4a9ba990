package engine

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/ebbdb/ebb/internal/engine/dberr"
	"github.com/ebbdb/ebb/internal/engine/document"
	"github.com/ebbdb/ebb/internal/engine/keyspace"
	"github.com/ebbdb/ebb/internal/engine/resource"
	"github.com/ebbdb/ebb/internal/engine/throughput"
	"github.com/ebbdb/ebb/internal/keys"
	"github.com/ebbdb/ebb/internal/storage"
)

// A database's users and their permissions are resources as the
// service has them (dbs/{db}/users/{user}/permissions/{perm}), kept in
// the CatUser and CatPerm keyspaces; a permission is keyed by its user's
// _rid, so renaming a user keeps its permissions, and deleting a user or
// a database deletes them with one range. Reading a permission returns
// a resource token for it (_token), which grants.go checks.

// Token validity, x-ms-documentdb-expiry-seconds: an hour unless the
// request asks for up to five hours, as the service allows.
const (
	DefaultTokenExpiry = time.Hour
	MaxTokenExpiry     = 5 * time.Hour
)

// TokenSealer signs the payload of a resource token: the server's
// auth.Verifier, keyed by its master keys.
type TokenSealer interface {
	SealResourceToken(payload []byte) string
}

// ---- users ----

// userRID is the _rid of the user made as resource number n in db: the
// database's four bytes, then four of n.
func userRID(db *database, n uint64) [8]byte {
	var rid [8]byte
	copy(rid[:4], db.rid[:])
	binary.BigEndian.PutUint32(rid[4:], uint32(n))
	return rid
}

func userResource(db *database, body []byte, ms []document.Member, rid string, n uint64, now int64) []byte {
	return document.WithSystemProps(nil, body, ms, document.SystemProps{
		RID: rid, Self: "dbs/" + db.ridStr + "/users/" + rid + "/", Etag: resource.Etag(n), Ts: now,
		Extra: [][2]string{{"_permissions", "permissions/"}},
	})
}

// checkUser validates a user resource body.
func checkUser(body []byte) (string, []document.Member, error) {
	ms, err := document.ObjectBody(body)
	if err != nil {
		return "", nil, err
	}
	id, err := resource.CheckID(document.Lookup(ms, "id"), "user")
	return id, ms, err
}

// CreateUser creates a user in a database.
func (e *Engine) CreateUser(ctx context.Context, dbID string, body []byte) (Resource, error) {
	db, err := e.database(dbID)
	if err != nil {
		return Resource{}, err
	}
	id, ms, err := checkUser(body)
	if err != nil {
		return Resource{}, err
	}
	var raw []byte
	err = e.catalogUpdate(ctx, func(w storage.Writer) error {
		key := keyspace.CatUserKey(db.rid, id)
		if _, err := w.Get(key); err == nil {
			return ErrConflict
		}
		n, err := nextNumber(w)
		if err != nil {
			return err
		}
		rid := userRID(db, n)
		raw = userResource(db, body, ms, resource.RIDString(rid[:]), n, e.now().Unix())
		return w.Set(key, raw)
	})
	if err != nil {
		return Resource{}, err
	}
	return catalogResult(raw, throughput.CatalogWrite)
}

// ReadUser returns a user.
func (e *Engine) ReadUser(ctx context.Context, dbID, id string) (Resource, error) {
	db, err := e.database(dbID)
	if err != nil {
		return Resource{}, err
	}
	raw, err := e.store.Get(ctx, keyspace.CatUserKey(db.rid, id))
	if errors.Is(err, storage.ErrNotFound) {
		return Resource{}, dberr.NotFound("Resource Not Found. The user '%s' does not exist in database '%s'.", id, dbID)
	}
	if err != nil {
		return Resource{}, err
	}
	return catalogResult(raw, throughput.CatalogRead)
}

// ReplaceUser replaces a user; a body with another id renames it. The
// user's tokens stop working: they are bound to its version.
func (e *Engine) ReplaceUser(ctx context.Context, dbID, id string, body []byte, ifMatch string) (Resource, error) {
	db, err := e.database(dbID)
	if err != nil {
		return Resource{}, err
	}
	newID, ms, err := checkUser(body)
	if err != nil {
		return Resource{}, err
	}
	var raw []byte
	err = e.catalogUpdate(ctx, func(w storage.Writer) error {
		key := keyspace.CatUserKey(db.rid, id)
		old, err := readMatching(w, key, ifMatch)
		if err != nil {
			return err
		}
		var f resource.Fields
		if err := json.Unmarshal(old, &f); err != nil {
			return err
		}
		if newID != id {
			if _, err := w.Get(keyspace.CatUserKey(db.rid, newID)); err == nil {
				return ErrConflict
			}
			if err := w.Delete(key); err != nil {
				return err
			}
			key = keyspace.CatUserKey(db.rid, newID)
		}
		n, err := nextNumber(w)
		if err != nil {
			return err
		}
		raw = userResource(db, body, ms, f.RID, n, e.now().Unix())
		return w.Set(key, raw)
	})
	if err != nil {
		return Resource{}, err
	}
	return catalogResult(raw, throughput.CatalogWrite)
}

// DeleteUser deletes a user and its permissions.
func (e *Engine) DeleteUser(ctx context.Context, dbID, id, ifMatch string) (Resource, error) {
	db, err := e.database(dbID)
	if err != nil {
		return Resource{}, err
	}
	err = e.catalogUpdate(ctx, func(w storage.Writer) error {
		key := keyspace.CatUserKey(db.rid, id)
		old, err := readMatching(w, key, ifMatch)
		if err != nil {
			return err
		}
		rid, err := ridOf(old, 8)
		if err != nil {
			return err
		}
		p := keyspace.CatPermPrefix(rid)
		if err := w.DeleteRange(p, keys.PrefixEnd(p)); err != nil {
			return err
		}
		if _, err := nextNumber(w); err != nil { // tells other nodes
			return err
		}
		return w.Delete(key)
	})
	if err != nil {
		return Resource{}, err
	}
	return Resource{Charge: throughput.CatalogWrite}, nil
}

// Users returns a database's users, ordered by id, and its _rid.
func (e *Engine) Users(ctx context.Context, dbID string) ([][]byte, string, error) {
	db, err := e.database(dbID)
	if err != nil {
		return nil, "", err
	}
	rows, err := e.scanResources(ctx, keyspace.CatUserPrefix(db.rid))
	return rows, db.ridStr, err
}

// QueryUsers runs a query over a database's users.
func (e *Engine) QueryUsers(ctx context.Context, dbID string, body []byte) (QueryResult, error) {
	rows, rid, err := e.Users(ctx, dbID)
	return e.queryResources(ctx, rows, rid, err, body)
}

// deleteUsers deletes every user of a database, with their permissions
// (whose keys start with the database's _rid): part of deleting it.
func deleteUsers(w storage.Writer, db *database) error {
	for _, p := range [][]byte{keyspace.CatUserPrefix(db.rid), keyspace.CatPermPrefix(db.rid[:])} {
		if err := w.DeleteRange(p, keys.PrefixEnd(p)); err != nil {
			return err
		}
	}
	return nil
}

// scanResources returns the values under prefix, in key order.
func (e *Engine) scanResources(ctx context.Context, prefix []byte) ([][]byte, error) {
	var rows [][]byte
	err := e.store.View(ctx, func(r storage.Reader) error {
		it := r.Scan(prefix, keys.PrefixEnd(prefix), false)
		defer it.Close()
		for it.Next() {
			rows = append(rows, append([]byte(nil), it.Value()...))
		}
		return it.Err()
	})
	return rows, err
}

// ridOf is the decoded _rid (n bytes) of a stored resource.
func ridOf(raw []byte, n int) ([]byte, error) {
	var f resource.Fields
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, err
	}
	return resource.DecodeRID(f.RID, n)
}

// catalogUpdate runs fn in one transaction and then refreshes the grants
// resource tokens are checked against (grants.go), so a change to a
// user or permission takes effect on this node before the request
// answers (and on the others at their next catalog poll).
func (e *Engine) catalogUpdate(ctx context.Context, fn func(w storage.Writer) error) error {
	if err := e.store.Update(ctx, fn); err != nil {
		return err
	}
	return e.loadGrants(ctx)
}

// ---- permissions ----

// permissionRID is the _rid of the permission made as resource number
// n for user: the user's eight bytes, then eight of n.
func permissionRID(user [8]byte, n uint64) string {
	var rid [16]byte
	copy(rid[:8], user[:])
	binary.BigEndian.PutUint64(rid[8:], n)
	return resource.RIDString(rid[:])
}

// permissionUser is a permission's user as a request addresses it.
type permissionUser struct {
	db   *database
	raw  []byte
	rid  [8]byte
	self string
	etag string
}

// lookupUser reads user userID of db in r.
func lookupUser(r storage.Reader, db *database, userID string) (permissionUser, error) {
	raw, err := r.Get(keyspace.CatUserKey(db.rid, userID))
	if errors.Is(err, storage.ErrNotFound) {
		return permissionUser{}, dberr.NotFound("Resource Not Found. The user '%s' does not exist in database '%s'.", userID, db.id)
	}
	if err != nil {
		return permissionUser{}, err
	}
	var f struct {
		resource.Fields
		Self string `json:"_self"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		return permissionUser{}, err
	}
	rid, err := resource.DecodeRID(f.RID, 8)
	if err != nil {
		return permissionUser{}, err
	}
	u := permissionUser{db: db, raw: raw, self: f.Self, etag: f.Etag}
	copy(u.rid[:], rid)
	return u, nil
}

// checkPermission validates a permission resource body: its id, its
// mode, the resource it grants (a container, or an item or script in
// one, by name or by _rid; it must exist) and the logical partition it
// is limited to, if any.
func (e *Engine) checkPermission(body []byte) (string, []document.Member, error) {
	ms, err := document.ObjectBody(body)
	if err != nil {
		return "", nil, err
	}
	id, err := resource.CheckID(document.Lookup(ms, "id"), "permission")
	if err != nil {
		return "", nil, err
	}
	if err := checkEnum(document.Lookup(ms, "permissionMode"), "permissionMode", "Read", "All"); err != nil {
		return "", nil, err
	}
	raw := document.Lookup(ms, "resource")
	if raw == nil || raw[0] != '"' {
		return "", nil, dberr.BadRequest("The permission needs the link of the resource it grants in \"resource\", such as dbs/{db}/colls/{container}.")
	}
	if _, err := e.catalogSnapshot().permissionScope(document.Unquote(raw)); err != nil {
		return "", nil, err
	}
	if pk := document.Lookup(ms, "resourcePartitionKey"); pk != nil && string(pk) != "null" {
		if _, err := document.ParsePKHeader(string(pk)); err != nil {
			return "", nil, dberr.BadRequest("The permission's resourcePartitionKey is not a partition key value such as [\"p\"]: %v", err)
		}
	}
	return id, ms, nil
}

// permissionScope resolves a permission's resource link to the path of
// names it grants (dbs, db, colls, coll[, kind, id]).
func (c *catalog) permissionScope(link string) ([]string, error) {
	segs := strings.Split(strings.Trim(link, "/"), "/")
	bad := dberr.BadRequest("The permission's resource '%s' is not the link of a container, or of an item, stored procedure, trigger or user-defined function in one (dbs/{db}/colls/{container}[/docs/{id}]), by id or by _rid.", link)
	if (len(segs) != 4 && len(segs) != 6) || segs[0] != "dbs" || segs[2] != "colls" {
		return nil, bad
	}
	if len(segs) == 6 {
		switch segs[4] {
		case "docs", "sprocs", "triggers", "udfs":
		default:
			return nil, bad
		}
	}
	if _, err := c.container(segs[1], segs[3]); err == nil {
		return segs, nil
	}
	for _, db := range c.dbs {
		if db.ridStr != segs[1] {
			continue
		}
		for _, coll := range db.colls {
			if coll.ridStr == segs[3] && len(segs) == 4 {
				return []string{"dbs", db.id, "colls", coll.id}, nil
			}
		}
	}
	return nil, dberr.NotFound("Resource Not Found. The permission's resource '%s' does not name an existing container (by id, or a container by _rid).", link)
}

func permissionResource(u permissionUser, body []byte, ms []document.Member, rid string, n uint64, now int64) []byte {
	return document.WithSystemProps(nil, body, ms, document.SystemProps{
		RID: rid, Self: u.self + "permissions/" + rid + "/", Etag: resource.Etag(n), Ts: now,
	})
}

// withToken is a stored permission as a read returns it: with a resource
// token valid for expiry from now.
func (e *Engine) withToken(raw []byte, u permissionUser, expiry time.Duration) []byte {
	var f resource.Fields
	if err := json.Unmarshal(raw, &f); err != nil || e.tokens == nil {
		return raw
	}
	c := tokenClaims{permission: f.RID, version: f.Etag, userVersion: u.etag, expires: e.now().Add(expiry).Unix()}
	token := e.tokens.SealResourceToken(c.encode())
	end := strings.LastIndexByte(string(raw), '}')
	out := append([]byte(nil), raw[:end]...)
	out = append(out, `,"_token":"`...)
	out = append(out, token...)
	return append(out, `"}`...)
}

// permissionUser resolves the database and user of a permission
// request.
func (e *Engine) permissionUser(ctx context.Context, dbID, userID string) (permissionUser, error) {
	db, err := e.database(dbID)
	if err != nil {
		return permissionUser{}, err
	}
	var u permissionUser
	err = e.store.View(ctx, func(r storage.Reader) error {
		u, err = lookupUser(r, db, userID)
		return err
	})
	return u, err
}

// CreatePermission creates a permission of a user; the answer carries a
// token valid for expiry.
func (e *Engine) CreatePermission(ctx context.Context, dbID, userID string, body []byte, expiry time.Duration) (Resource, error) {
	db, err := e.database(dbID)
	if err != nil {
		return Resource{}, err
	}
	id, ms, err := e.checkPermission(body)
	if err != nil {
		return Resource{}, err
	}
	var raw []byte
	var u permissionUser
	err = e.catalogUpdate(ctx, func(w storage.Writer) error {
		var err error
		if u, err = lookupUser(w, db, userID); err != nil {
			return err
		}
		key := keyspace.CatPermKey(u.rid, id)
		if _, err := w.Get(key); err == nil {
			return ErrConflict
		}
		n, err := nextNumber(w)
		if err != nil {
			return err
		}
		raw = permissionResource(u, body, ms, permissionRID(u.rid, n), n, e.now().Unix())
		return w.Set(key, raw)
	})
	if err != nil {
		return Resource{}, err
	}
	return catalogResult(e.withToken(raw, u, expiry), throughput.CatalogWrite)
}

// ReadPermission returns a permission with a token valid for expiry.
func (e *Engine) ReadPermission(ctx context.Context, dbID, userID, id string, expiry time.Duration) (Resource, error) {
	u, err := e.permissionUser(ctx, dbID, userID)
	if err != nil {
		return Resource{}, err
	}
	raw, err := e.store.Get(ctx, keyspace.CatPermKey(u.rid, id))
	if errors.Is(err, storage.ErrNotFound) {
		return Resource{}, dberr.NotFound("Resource Not Found. The permission '%s' does not exist for user '%s'.", id, userID)
	}
	if err != nil {
		return Resource{}, err
	}
	return catalogResult(e.withToken(raw, u, expiry), throughput.CatalogRead)
}

// ReplacePermission replaces a permission; its earlier tokens stop
// working.
func (e *Engine) ReplacePermission(ctx context.Context, dbID, userID, id string, body []byte, ifMatch string, expiry time.Duration) (Resource, error) {
	db, err := e.database(dbID)
	if err != nil {
		return Resource{}, err
	}
	bodyID, ms, err := e.checkPermission(body)
	if err != nil {
		return Resource{}, err
	}
	if bodyID != id {
		return Resource{}, dberr.BadRequest("The id '%s' in the request body does not match the id '%s' in the URL.", bodyID, id)
	}
	var raw []byte
	var u permissionUser
	err = e.catalogUpdate(ctx, func(w storage.Writer) error {
		var err error
		if u, err = lookupUser(w, db, userID); err != nil {
			return err
		}
		key := keyspace.CatPermKey(u.rid, id)
		old, err := readMatching(w, key, ifMatch)
		if err != nil {
			return err
		}
		var f resource.Fields
		if err := json.Unmarshal(old, &f); err != nil {
			return err
		}
		n, err := nextNumber(w)
		if err != nil {
			return err
		}
		raw = permissionResource(u, body, ms, f.RID, n, e.now().Unix())
		return w.Set(key, raw)
	})
	if err != nil {
		return Resource{}, err
	}
	return catalogResult(e.withToken(raw, u, expiry), throughput.CatalogWrite)
}

// DeletePermission deletes a permission; its tokens stop working.
func (e *Engine) DeletePermission(ctx context.Context, dbID, userID, id, ifMatch string) (Resource, error) {
	db, err := e.database(dbID)
	if err != nil {
		return Resource{}, err
	}
	err = e.catalogUpdate(ctx, func(w storage.Writer) error {
		u, err := lookupUser(w, db, userID)
		if err != nil {
			return err
		}
		key := keyspace.CatPermKey(u.rid, id)
		if _, err := readMatching(w, key, ifMatch); err != nil {
			return err
		}
		if _, err := nextNumber(w); err != nil { // tells other nodes
			return err
		}
		return w.Delete(key)
	})
	if err != nil {
		return Resource{}, err
	}
	return Resource{Charge: throughput.CatalogWrite}, nil
}

// Permissions returns a user's permissions, ordered by id, each with a
// token valid for expiry, and the user's _rid.
func (e *Engine) Permissions(ctx context.Context, dbID, userID string, expiry time.Duration) ([][]byte, string, error) {
	u, err := e.permissionUser(ctx, dbID, userID)
	if err != nil {
		return nil, "", err
	}
	rows, err := e.scanResources(ctx, keyspace.CatPermPrefix(u.rid[:]))
	for i, raw := range rows {
		rows[i] = e.withToken(raw, u, expiry)
	}
	return rows, resource.RIDString(u.rid[:]), err
}

// QueryPermissions runs a query over a user's permissions.
func (e *Engine) QueryPermissions(ctx context.Context, dbID, userID string, body []byte, expiry time.Duration) (QueryResult, error) {
	rows, rid, err := e.Permissions(ctx, dbID, userID, expiry)
	return e.queryResources(ctx, rows, rid, err, body)
}
