package engine

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/ebbdb/ebb/internal/engine/dberr"
	"github.com/ebbdb/ebb/internal/engine/document"
	"github.com/ebbdb/ebb/internal/engine/keyspace"
	"github.com/ebbdb/ebb/internal/engine/resource"
	"github.com/ebbdb/ebb/internal/engine/throughput"
	"github.com/ebbdb/ebb/internal/keys"
	"github.com/ebbdb/ebb/internal/script"
	"github.com/ebbdb/ebb/internal/storage"
)

// A container's server-side scripts (stored procedures, triggers and
// user-defined functions) are resources kept in the Script keyspace and
// read from the store on every request, so every node of a cluster sees
// a change at once; deleting the container deletes them. Ebb stores and
// checks them (a body that does not compile is refused at create, as the
// service refuses it) but does not run them yet: executing a stored
// procedure, or a write or query naming a trigger or function, is
// refused with 501 or 400 elsewhere.

// ScriptKind is the kind of a server-side script.
type ScriptKind byte

const (
	StoredProcedure ScriptKind = iota + 1
	Trigger
	UserDefinedFunction
)

// Feed is the name of the kind's list in a feed response.
func (k ScriptKind) Feed() string {
	switch k {
	case StoredProcedure:
		return "StoredProcedures"
	case Trigger:
		return "Triggers"
	}
	return "UserDefinedFunctions"
}

// path is the kind's segment in resource links.
func (k ScriptKind) path() string {
	switch k {
	case StoredProcedure:
		return "sprocs"
	case Trigger:
		return "triggers"
	}
	return "udfs"
}

// Quota is how many scripts of the kind a container may hold: the
// service's quota, which a container read reports in x-ms-resource-quota.
func (k ScriptKind) Quota() int {
	if k == StoredProcedure {
		return 100
	}
	return 25
}

func (k ScriptKind) what() string {
	switch k {
	case StoredProcedure:
		return "stored procedure"
	case Trigger:
		return "trigger"
	}
	return "user-defined function"
}

// maxScriptBody bounds a script's source.
const maxScriptBody = 256 << 10

// checkScript validates a script resource body for kind: its id, its
// JavaScript (compiled, not run), and a trigger's type and operation.
func checkScript(kind ScriptKind, body []byte) (id string, ms []document.Member, err error) {
	ms, err = document.ObjectBody(body)
	if err != nil {
		return "", nil, err
	}
	if id, err = resource.CheckID(document.Lookup(ms, "id"), kind.what()); err != nil {
		return "", nil, err
	}
	src := document.Lookup(ms, "body")
	if src == nil || src[0] != '"' {
		return "", nil, dberr.BadRequest("The %s needs its JavaScript as a string in \"body\".", kind.what())
	}
	code := document.Unquote(src)
	if len(code) > maxScriptBody {
		return "", nil, dberr.BadRequest("The %s body is %d bytes; the most Ebb accepts is %d.", kind.what(), len(code), maxScriptBody)
	}
	// The parser recurses once per nesting level: bound it (brackets in
	// strings count too, so the bound is generous).
	if depth := maxNesting(code); depth > maxScriptNesting {
		return "", nil, dberr.BadRequest("The %s body nests brackets %d deep; the most Ebb accepts is %d.", kind.what(), depth, maxScriptNesting)
	}
	if err := script.Compile(id, code); err != nil {
		return "", nil, dberr.BadRequest("The %s '%s' does not compile: %v", kind.what(), id, err)
	}
	if kind == Trigger {
		if err := checkEnum(document.Lookup(ms, "triggerType"), "triggerType", "Pre", "Post"); err != nil {
			return "", nil, err
		}
		if err := checkEnum(document.Lookup(ms, "triggerOperation"), "triggerOperation", "All", "Create", "Replace", "Delete", "Update", "Upsert"); err != nil {
			return "", nil, err
		}
	}
	return id, ms, nil
}

// maxScriptNesting bounds the bracket nesting of a script's source.
const maxScriptNesting = 1000

// maxNesting is the deepest nesting of (, [ and { in src.
func maxNesting(src string) int {
	depth, deepest := 0, 0
	for i := 0; i < len(src); i++ {
		switch src[i] {
		case '(', '[', '{':
			depth++
			deepest = max(deepest, depth)
		case ')', ']', '}':
			depth--
		}
	}
	return deepest
}

// checkEnum checks a required string member against its values, in any
// case as the SDKs send them ("Pre" from .NET, "pre" from JavaScript).
func checkEnum(raw []byte, name string, values ...string) error {
	if raw != nil && raw[0] == '"' {
		v := document.Unquote(raw)
		for _, ok := range values {
			if strings.EqualFold(v, ok) {
				return nil
			}
		}
	}
	return dberr.BadRequest("%s must be one of %s; found %s.", name, strings.Join(values, ", "), document.Truncate(raw, 64))
}

// CreateScript creates a script of kind in a container.
func (e *Engine) CreateScript(ctx context.Context, dbID, collID string, kind ScriptKind, body []byte) (Resource, error) {
	c, err := e.container(dbID, collID)
	if err != nil {
		return Resource{}, err
	}
	id, ms, err := checkScript(kind, body)
	if err != nil {
		return Resource{}, err
	}
	var raw []byte
	err = e.store.Update(ctx, func(w storage.Writer) error {
		if _, err := readPartitionState(w, c.rid, 0); err != nil {
			return err // deleted meanwhile
		}
		key := keyspace.ScriptKey(c.rid, byte(kind), id)
		if _, err := w.Get(key); err == nil {
			return ErrConflict
		}
		if count, err := countScripts(w, c, kind); err != nil {
			return err
		} else if count >= kind.Quota() {
			return &Error{Kind: KindForbidden, Message: "Resource quota reached: a container holds at most " + strconv.Itoa(kind.Quota()) + " " + kind.Feed() + "; delete one first."}
		}
		n, err := nextNumber(w)
		if err != nil {
			return err
		}
		raw = c.scriptResource(kind, body, ms, c.scriptRID(n), n, e.now().Unix())
		return w.Set(key, raw)
	})
	if err != nil {
		return Resource{}, err
	}
	return catalogResult(raw, throughput.CatalogWrite)
}

// scriptRID is the _rid of the script made as resource number n.
func (c *container) scriptRID(n uint64) string {
	var rid [16]byte
	copy(rid[:8], c.rid[:])
	binary.BigEndian.PutUint64(rid[8:], n)
	rid[15] |= 0x80 // never the _rid of an item, whose last byte is a sequence's high byte
	return resource.RIDString(rid[:])
}

// scriptResource is a script's stored JSON: body with its system
// properties, version n.
func (c *container) scriptResource(kind ScriptKind, body []byte, ms []document.Member, rid string, n uint64, now int64) []byte {
	return document.WithSystemProps(nil, body, ms, document.SystemProps{
		RID: rid, Self: c.self + kind.path() + "/" + rid + "/", Etag: resource.Etag(n), Ts: now,
	})
}

// catalogResult is a stored catalog resource (a script, user or
// permission) as an answer: its JSON and _etag.
func catalogResult(raw []byte, charge float64) (Resource, error) {
	var f resource.Fields
	if err := json.Unmarshal(raw, &f); err != nil {
		return Resource{}, err
	}
	return Resource{Body: raw, ETag: f.Etag, Charge: charge}, nil
}

// ReadScript returns a script.
func (e *Engine) ReadScript(ctx context.Context, dbID, collID string, kind ScriptKind, id string) (Resource, error) {
	c, err := e.container(dbID, collID)
	if err != nil {
		return Resource{}, err
	}
	raw, err := e.store.Get(ctx, keyspace.ScriptKey(c.rid, byte(kind), id))
	if errors.Is(err, storage.ErrNotFound) {
		return Resource{}, ErrNotFound
	}
	if err != nil {
		return Resource{}, err
	}
	return catalogResult(raw, throughput.CatalogRead)
}

// ReplaceScript replaces a script; ifMatch is If-Match ("" for none).
func (e *Engine) ReplaceScript(ctx context.Context, dbID, collID string, kind ScriptKind, id string, body []byte, ifMatch string) (Resource, error) {
	c, err := e.container(dbID, collID)
	if err != nil {
		return Resource{}, err
	}
	bodyID, ms, err := checkScript(kind, body)
	if err != nil {
		return Resource{}, err
	}
	if bodyID != id {
		return Resource{}, dberr.BadRequest("The id '%s' in the request body does not match the id '%s' in the URL.", bodyID, id)
	}
	var raw []byte
	err = e.store.Update(ctx, func(w storage.Writer) error {
		key := keyspace.ScriptKey(c.rid, byte(kind), id)
		old, err := readMatching(w, key, ifMatch)
		if err != nil {
			return err
		}
		n, err := nextNumber(w)
		if err != nil {
			return err
		}
		// The _rid stays: a replace is the same resource.
		var f resource.Fields
		if err := json.Unmarshal(old, &f); err != nil {
			return err
		}
		raw = c.scriptResource(kind, body, ms, f.RID, n, e.now().Unix())
		return w.Set(key, raw)
	})
	if err != nil {
		return Resource{}, err
	}
	return catalogResult(raw, throughput.CatalogWrite)
}

// DeleteScript deletes a script; ifMatch is If-Match ("" for none).
func (e *Engine) DeleteScript(ctx context.Context, dbID, collID string, kind ScriptKind, id, ifMatch string) (Resource, error) {
	c, err := e.container(dbID, collID)
	if err != nil {
		return Resource{}, err
	}
	err = e.store.Update(ctx, func(w storage.Writer) error {
		key := keyspace.ScriptKey(c.rid, byte(kind), id)
		if _, err := readMatching(w, key, ifMatch); err != nil {
			return err
		}
		return w.Delete(key)
	})
	if err != nil {
		return Resource{}, err
	}
	return Resource{Charge: throughput.CatalogWrite}, nil
}

// Scripts returns a container's scripts of kind, ordered by id, and the
// container's _rid. There are at most kind.Quota() of them.
func (e *Engine) Scripts(ctx context.Context, dbID, collID string, kind ScriptKind) ([][]byte, string, error) {
	c, err := e.container(dbID, collID)
	if err != nil {
		return nil, "", err
	}
	var rows [][]byte
	err = e.store.View(ctx, func(r storage.Reader) error {
		p := keyspace.ScriptPrefix(c.rid, byte(kind))
		it := r.Scan(p, keys.PrefixEnd(p), false)
		defer it.Close()
		for it.Next() {
			rows = append(rows, append([]byte(nil), it.Value()...))
		}
		return it.Err()
	})
	return rows, c.ridStr, err
}

// QueryScripts runs a query over a container's scripts of kind.
func (e *Engine) QueryScripts(ctx context.Context, dbID, collID string, kind ScriptKind, body []byte) (QueryResult, error) {
	rows, rid, err := e.Scripts(ctx, dbID, collID, kind)
	return e.queryResources(ctx, rows, rid, err, body)
}

// readMatching reads the script resource at key for a replace or
// delete: 404 when there is none, 412 when ifMatch (If-Match, "" for
// none) is not its _etag.
func readMatching(r storage.Reader, key []byte, ifMatch string) ([]byte, error) {
	raw, err := r.Get(key)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, ErrNotFound
	}
	if err != nil || ifMatch == "" || ifMatch == "*" {
		return raw, err
	}
	var f resource.Fields
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, err
	}
	if f.Etag != ifMatch {
		return nil, ErrPreconditionFailed
	}
	return raw, nil
}

// countScripts counts c's scripts of kind: at most its quota.
func countScripts(r storage.Reader, c *container, kind ScriptKind) (int, error) {
	p := keyspace.ScriptPrefix(c.rid, byte(kind))
	it := r.Scan(p, keys.PrefixEnd(p), false)
	defer it.Close()
	n := 0
	for it.Next() {
		n++
	}
	return n, it.Err()
}
