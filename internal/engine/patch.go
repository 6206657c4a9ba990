package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/ebbdb/ebb/internal/engine/dberr"
	"github.com/ebbdb/ebb/internal/engine/document"
	"github.com/ebbdb/ebb/internal/query"
)

// maxPatchOperations is the service's limit per patch request.
const maxPatchOperations = 10

// patchOp is one operation of a partial document update.
type patchOp struct {
	Op    string          `json:"op"`
	Path  string          `json:"path"`
	From  string          `json:"from"`
	Value json.RawMessage `json:"value"`

	path, from []string
	value      query.Value
}

// parsePatch reads a patch body: the Go SDK's {"condition", "operations"}
// or the JS SDK's bare array of operations.
func parsePatch(body []byte) (ops []patchOp, condition string, err error) {
	if !json.Valid(body) {
		return nil, "", dberr.BadRequest("The patch body is not valid JSON. %s", jsonErrorDetail(body))
	}
	if b := body[document.SkipSpace(body, 0)]; b == '[' {
		err = json.Unmarshal(body, &ops)
	} else {
		var in struct {
			Condition  string    `json:"condition"`
			Operations []patchOp `json:"operations"`
		}
		err = json.Unmarshal(body, &in)
		ops, condition = in.Operations, in.Condition
	}
	if err != nil {
		return nil, "", dberr.BadRequest("The patch body is invalid: %v. Send {\"operations\": [{\"op\": \"set\", \"path\": \"/a\", \"value\": 1}]}.", err)
	}
	if len(ops) == 0 {
		return nil, "", dberr.BadRequest("The patch has no operations.")
	}
	if len(ops) > maxPatchOperations {
		return nil, "", dberr.BadRequest("The patch has %d operations; at most %d are allowed in one request.", len(ops), maxPatchOperations)
	}
	for i := range ops {
		if err := ops[i].check(i); err != nil {
			return nil, "", err
		}
	}
	return ops, condition, nil
}

func (op *patchOp) check(i int) error {
	var err error
	if op.path, err = pointer(op.Path); err != nil {
		return dberr.BadRequest("Patch operation %d: the path '%s' is invalid: %v.", i+1, op.Path, err)
	}
	switch op.Op {
	case "add", "set", "replace", "incr":
		if op.Value == nil {
			return dberr.BadRequest("Patch operation %d (%s %s) needs a value.", i+1, op.Op, op.Path)
		}
		if op.value, err = query.ParseJSON(op.Value); err != nil {
			return dberr.BadRequest("Patch operation %d (%s %s): the value is invalid: %v.", i+1, op.Op, op.Path, err)
		}
		if op.Op == "incr" && op.value.Kind() != query.Number {
			return dberr.BadRequest("Patch operation %d (incr %s): the value must be a number.", i+1, op.Path)
		}
	case "remove":
	case "move":
		if op.from, err = pointer(op.From); err != nil {
			return dberr.BadRequest("Patch operation %d (move): the from path '%s' is invalid: %v.", i+1, op.From, err)
		}
		if strings.HasPrefix(op.Path+"/", op.From+"/") {
			return dberr.BadRequest("Patch operation %d (move): cannot move '%s' into its own child '%s'.", i+1, op.From, op.Path)
		}
	default:
		return dberr.BadRequest("Patch operation %d: the operation '%s' is not one of add, set, replace, remove, incr, move.", i+1, op.Op)
	}
	switch op.path[0] {
	case "id", "_rid", "_self", "_etag", "_ts", "_attachments":
		return dberr.BadRequest("Patch operation %d: the system property '/%s' cannot be patched.", i+1, op.path[0])
	}
	return nil
}

// pointer splits a JSON Pointer ("/a/b~1c/0") into its unescaped tokens.
func pointer(p string) ([]string, error) {
	if p == "" || p[0] != '/' || p == "/" {
		return nil, fmt.Errorf("a path starts with '/' and names a property, e.g. /address/city")
	}
	toks := strings.Split(p[1:], "/")
	for i, t := range toks {
		toks[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	return toks, nil
}

// apply runs op on doc in place.
func (op *patchOp) apply(doc query.Value, n int) error {
	fail := func(format string, args ...any) error {
		return dberr.BadRequest("Patch operation %d (%s %s): %s", n, op.Op, op.Path, fmt.Sprintf(format, args...))
	}
	if op.Op == "move" {
		v, err := remove(doc, op.from)
		if err != nil {
			return fail("%v", err)
		}
		op.value = v
		if err := insert(doc, op.path, v, "add"); err != nil {
			return fail("%v", err)
		}
		return nil
	}
	switch op.Op {
	case "remove":
		if _, err := remove(doc, op.path); err != nil {
			return fail("%v", err)
		}
	case "incr":
		parent, last, err := parentOf(doc, op.path)
		if err != nil {
			return fail("%v", err)
		}
		cur := child(parent, last)
		switch cur.Kind() {
		case query.Undefined:
		case query.Number:
			sum := cur.Number() + op.value.Number()
			if isInt(cur) && isInt(op.value) {
				a, _ := strconv.ParseInt(cur.JSON(), 10, 64)
				b, _ := strconv.ParseInt(op.value.JSON(), 10, 64)
				sum = float64(a + b)
			}
			op.value = query.NumberValue(sum)
		default:
			return fail("the target is a %s, not a number.", cur.Kind())
		}
		if err := insert(doc, op.path, op.value, "set"); err != nil {
			return fail("%v", err)
		}
	default:
		if err := insert(doc, op.path, op.value, op.Op); err != nil {
			return fail("%v", err)
		}
	}
	return nil
}

func isInt(v query.Value) bool {
	_, err := strconv.ParseInt(v.JSON(), 10, 64)
	return err == nil
}

// parentOf walks to the container holding the path's last token.
func parentOf(doc query.Value, path []string) (query.Value, string, error) {
	cur := doc
	for i, tok := range path[:len(path)-1] {
		next := child(cur, tok)
		if k := next.Kind(); k != query.Object && k != query.Array {
			return query.Value{}, "", fmt.Errorf("the parent /%s does not exist or is not an object or array.", strings.Join(path[:i+1], "/"))
		}
		cur = next
	}
	return cur, path[len(path)-1], nil
}

func child(v query.Value, tok string) query.Value {
	if v.Kind() == query.Array {
		i, err := strconv.Atoi(tok)
		if err != nil {
			return query.Value{}
		}
		return v.Index(i)
	}
	return v.Get(tok)
}

// insert writes v at path with add, set or replace semantics.
func insert(doc query.Value, path []string, v query.Value, mode string) error {
	parent, last, err := parentOf(doc, path)
	if err != nil {
		return err
	}
	if parent.Kind() == query.Object {
		if mode == "replace" && !child(parent, last).IsDefined() {
			return fmt.Errorf("the target does not exist, so it cannot be replaced.")
		}
		parent.Set(last, v)
		return nil
	}
	n := parent.Len()
	if last == "-" && mode != "replace" {
		parent.Append(v)
		return nil
	}
	i, err := strconv.Atoi(last)
	if err != nil || i < 0 || i > n || (i == n && mode == "replace") {
		return fmt.Errorf("'%s' is not a valid index into an array of %d elements.", last, n)
	}
	if mode == "add" || i == n {
		parent.Insert(i, v)
		return nil
	}
	parent.SetIndex(i, v)
	return nil
}

// remove deletes and returns the value at path.
func remove(doc query.Value, path []string) (query.Value, error) {
	parent, last, err := parentOf(doc, path)
	if err != nil {
		return query.Value{}, err
	}
	v := child(parent, last)
	if !v.IsDefined() {
		return query.Value{}, fmt.Errorf("the path does not exist.")
	}
	if parent.Kind() == query.Object {
		parent.Delete(last)
	} else {
		i, _ := strconv.Atoi(last)
		parent.RemoveAt(i)
	}
	return v, nil
}

// PatchItem applies a partial update to an item atomically. A patch is a
// write: it sets a new _ts, _etag and LSN, and its effect on ttl is
// validated like any write. The optional condition is a filter such as
// "from c where c.status = 'open'"; when it does not match, 412.
func (e *Engine) PatchItem(ctx context.Context, ref ItemRef, body []byte, ifMatch string) (Resource, error) {
	c, _, key, err := e.resolvePoint(ref)
	if err != nil {
		return Resource{}, err
	}
	pr, err := c.parsePatchRequest(body)
	if err != nil {
		return Resource{}, err
	}
	var w written
	err = e.updateItems(ctx, c, func(t *itemTx) error {
		var err error
		w, err = t.patch(key, pr, ifMatch)
		return err
	})
	if err != nil {
		return Resource{}, err
	}
	return c.resource(w.doc, w.hdr, chargeWrite(len(w.doc))), nil
}

// patchRequest is a validated patch: its operations and condition.
type patchRequest struct {
	ops    []patchOp
	filter *query.Filter // nil: no condition
}

// parsePatchRequest validates a patch body for container c: its
// operations, that none touches the partition key, and its condition.
func (c *container) parsePatchRequest(body []byte) (patchRequest, error) {
	ops, condition, err := parsePatch(body)
	if err != nil {
		return patchRequest{}, err
	}
	for _, op := range ops {
		if op.pathTouchesPK(c.pk) {
			return patchRequest{}, dberr.BadRequest("Patch operation %s %s would change the partition key %s, which cannot be patched.", op.Op, op.Path, pkPaths(c.pk))
		}
	}
	pr := patchRequest{ops: ops}
	if condition != "" {
		if pr.filter, err = query.ParseFilter(condition); err != nil {
			return patchRequest{}, queryError(err)
		}
	}
	return pr, nil
}

// patch applies pr to the visible item at key with PatchItem's
// preconditions; the condition is evaluated at the transaction's instant.
func (t *itemTx) patch(key []byte, pr patchRequest, ifMatch string) (written, error) {
	old, exists, err := t.items.get(key)
	switch {
	case err != nil:
		return written{}, err
	case !exists:
		return written{}, ErrNotFound
	case ifMatch != "" && ifMatch != "*" && ifMatch != itemEtag(old.h.LSN):
		return written{}, ErrPreconditionFailed
	}
	if pr.filter != nil {
		ok, err := pr.filter.Match(old.doc, t.env)
		if err != nil {
			return written{}, queryError(err)
		}
		if !ok {
			return written{}, ErrPreconditionFailed
		}
	}
	doc, err := query.ParseJSON(old.doc)
	if err != nil {
		return written{}, fmt.Errorf("engine: stored document does not parse: %w", err)
	}
	for i := range pr.ops {
		op := pr.ops[i] // apply may set op.value; keep ops reusable on retry
		if err := op.apply(doc, i+1); err != nil {
			return written{}, err
		}
	}
	p, err := t.c.prepare(doc.AppendJSON(nil))
	if err != nil {
		return written{}, err
	}
	return t.put(key, p, old, true)
}

// pathTouchesPK reports whether op writes or removes a partition key path
// or one of its ancestors.
func (op *patchOp) pathTouchesPK(def document.PKDef) bool {
	touches := func(path []string) bool {
		for _, kp := range def.Paths {
			n := min(len(path), len(kp))
			if strings.Join(path[:n], "/") == strings.Join(kp[:n], "/") {
				return true
			}
		}
		return false
	}
	return touches(op.path) || (op.Op == "move" && touches(op.from))
}
