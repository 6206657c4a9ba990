// Package patch is Cosmos DB's partial document update: parsing a patch
// body (the Go SDK's {"condition", "operations"} or the JS SDK's bare
// array), checking each operation (add, set, replace, remove, incr,
// move) against the service's rules and limits, and applying it to a
// parsed document. incr adds integers exactly in 64 bits and refuses,
// rather than rounds or wraps, a sum it cannot represent (incr.go says
// what the service is known to do). The engine runs a patch as a write:
// it reads the visible item, checks the condition, applies the
// operations here and stores the result through the same path as a
// replace.
package patch

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/ebbdb/ebb/internal/engine/dberr"
	"github.com/ebbdb/ebb/internal/engine/document"
	"github.com/ebbdb/ebb/internal/query"
)

// MaxOperations is the service's limit per patch request.
const MaxOperations = 10

// Op is one operation of a partial document update.
type Op struct {
	Op    string          `json:"op"`
	Path  string          `json:"path"`
	From  string          `json:"from"`
	Value json.RawMessage `json:"value"`

	path, from []string
	value      query.Value
}

// request is the Go SDK's patch body.
type request struct {
	Condition  string `json:"condition"`
	Operations []Op   `json:"operations"`
}

// The names encoding/json decodes a patch body's objects by.
var (
	requestFields = document.Fields(request{})
	opFields      = document.Fields(Op{})
)

// checkRequestFields runs document.CheckFields on the request object at
// offset off of body and on each of its operations.
// REQUIRES: json.Valid(body).
func checkRequestFields(body []byte, off int) error {
	if err := document.CheckFields(body, off, requestFields); err != nil {
		return err
	}
	ms, _ := document.ObjectMembers(body[off:])
	for _, m := range ms {
		if strings.EqualFold(m.Key, "operations") {
			if err := document.CheckFieldsOfEach(body, off+m.End-len(m.Val), opFields); err != nil {
				return err
			}
		}
	}
	return nil
}

// Parse reads a patch body: the Go SDK's {"condition", "operations"}
// or the JS SDK's bare array of operations.
func Parse(body []byte) (ops []Op, condition string, err error) {
	// The values become part of the document, so they get the document's
	// checks (a name repeated at any depth, nesting, numbers), worded with
	// where in the body they are; and no member may mean something else
	// to encoding/json than to the client (document.CheckFields).
	ok, err := document.CheckJSON(body)
	if !ok {
		return nil, "", dberr.BadRequest("The patch body is not valid JSON. %s", document.JSONErrorDetail(body))
	}
	if err != nil {
		return nil, "", err
	}
	if i := document.SkipSpace(body, 0); body[i] == '[' {
		if err := document.CheckFieldsOfEach(body, i, opFields); err != nil {
			return nil, "", err
		}
		err = json.Unmarshal(body, &ops)
	} else {
		if err := checkRequestFields(body, i); err != nil {
			return nil, "", err
		}
		var in request
		err = json.Unmarshal(body, &in)
		ops, condition = in.Operations, in.Condition
	}
	if err != nil {
		return nil, "", dberr.BadRequest("The patch body is invalid: %v. Send {\"operations\": [{\"op\": \"set\", \"path\": \"/a\", \"value\": 1}]}.", err)
	}
	if len(ops) == 0 {
		return nil, "", dberr.BadRequest("The patch has no operations.")
	}
	if len(ops) > MaxOperations {
		// The service's text (partial-document-update.md, "Supported
		// operations"), as the errors below where it documents one.
		return nil, "", dberr.BadRequest("The number of patch operations cannot exceed %d. This patch has %d.", MaxOperations, len(ops))
	}
	for i := range ops {
		if err := ops[i].check(i); err != nil {
			return nil, "", err
		}
	}
	return ops, condition, nil
}

func (op *Op) check(i int) error {
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
		return dberr.BadRequest("Invalid patch request: check syntax of patch specification. Operation %d's op '%s' is not one of add, set, replace, remove, incr, move.", i+1, op.Op)
	}
	switch op.path[0] {
	case "id", "_rid", "_self", "_etag", "_ts", "_attachments":
		return dberr.BadRequest("Invalid patch request: Cannot patch system property %s.", op.path[0])
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

// Apply runs op on doc in place. op may be applied again, to another
// document, with the same result: nothing of op becomes part of doc.
// n is the operation's place in the patch, from 1; the service's
// messages count from 0, as "For Operation(0): …".
func (op *Op) Apply(doc query.Value, n int) error {
	fail := func(err error) error {
		var np noParent
		var bi badIndex
		switch {
		case errors.As(err, &np) && (op.Op == "add" || op.Op == "move"):
			return dberr.BadRequest("For Operation(%d): Add Operation can only create a child object of an existing node(array or object) and cannot create path recursively, no path found beyond: %s.", n-1, np.path)
		case errors.As(err, &np) && (op.Op == "set" || op.Op == "incr"):
			return dberr.BadRequest("For Operation(%d): Given Operation can only create a child object of an existing node(array or object) and cannot create path recursively, no path found beyond: %s.", n-1, np.path)
		case errors.As(err, &bi):
			return dberr.BadRequest("For Operation(%d): Index(%s) to operate on is out of array bounds.", n-1, bi.index)
		case (errors.As(err, &np) || errors.Is(err, errAbsent)) && op.Op == "remove":
			return dberr.BadRequest("For Operation(%d): Node(%s) to be removed is absent. Note: it may also have been removed earlier in the transaction.", n-1, op.Path)
		case errors.As(err, &np) || errors.Is(err, errAbsent):
			return dberr.BadRequest("For Operation(%d): Node(%s) to be replaced is absent.", n-1, op.Path)
		}
		return dberr.BadRequest("Patch operation %d (%s %s): %v", n, op.Op, op.Path, err)
	}
	if op.Op == "move" {
		v, err := remove(doc, op.from)
		var bi badIndex
		switch {
		case errors.As(err, &bi):
			return fail(err)
		case err != nil:
			// The service documents no text for this one.
			return dberr.BadRequest("For Operation(%d): Node(%s) to be moved is absent.", n-1, op.From)
		}
		op.value = v
		if err := insert(doc, op.path, v, "add"); err != nil {
			return fail(err)
		}
		return nil
	}
	switch op.Op {
	case "remove":
		if _, err := remove(doc, op.path); err != nil {
			return fail(err)
		}
	case "incr":
		parent, last, err := parentOf(doc, op.path)
		if err != nil {
			return fail(err)
		}
		cur := child(parent, last)
		switch cur.Kind() {
		case query.Undefined:
		case query.Number:
			if op.value, err = increment(cur, op.value); err != nil {
				return fail(err)
			}
		default:
			return dberr.BadRequest("For Operation(%d): Node(%s) is not a number. It is a %s.", n-1, op.Path, cur.Kind())
		}
		if err := insert(doc, op.path, op.value, "set"); err != nil {
			return fail(err)
		}
	default:
		// The document gets its own copy: a later operation may write
		// into the value, and op may be applied again (a transaction
		// that runs again after a conflict) and must insert it as sent.
		if err := insert(doc, op.path, op.value.Clone(), op.Op); err != nil {
			return fail(err)
		}
	}
	return nil
}

// The ways an operation's path can fail to apply: a parent that is
// missing or not a container, an array index out of bounds, and a
// target that is not there (Apply words each as the service does).
type (
	noParent struct{ path string }
	badIndex struct{ index string }
)

func (e noParent) Error() string { return "no path found beyond " + e.path }
func (e badIndex) Error() string { return "index " + e.index + " is out of array bounds" }

var errAbsent = errors.New("the target is absent")

// parentOf walks to the container holding the path's last token.
func parentOf(doc query.Value, path []string) (query.Value, string, error) {
	cur := doc
	for i, tok := range path[:len(path)-1] {
		next := child(cur, tok)
		if k := next.Kind(); k != query.Object && k != query.Array {
			return query.Value{}, "", noParent{"/" + strings.Join(path[:i+1], "/")}
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
			return errAbsent
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
		return badIndex{last}
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
		if parent.Kind() == query.Array {
			return query.Value{}, badIndex{last}
		}
		return query.Value{}, errAbsent
	}
	if parent.Kind() == query.Object {
		parent.Delete(last)
	} else {
		i, _ := strconv.Atoi(last)
		parent.RemoveAt(i)
	}
	return v, nil
}

// TouchesPK reports whether op writes or removes a partition key path
// or one of its ancestors.
func (op *Op) TouchesPK(def document.PKDef) bool {
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

// Reach is how deep in the document the value op wrote sits, counting
// the document itself as 1, the containers around the value and the
// value's own nesting; 0 for a remove. The stored document was within
// document.MaxDepth, and a patch changes the document only where its
// operations write, so when no operation reaches beyond the limit
// neither does the patched document, and it need not be walked again.
// REQUIRES: op was applied (a move's value is the one it moved).
func (op *Op) Reach() int {
	if op.Op == "remove" {
		return 0
	}
	return len(op.path) + Depth(op.value)
}

// Depth is how deeply v nests objects and arrays: 0 for a scalar, 1 for
// an empty object or array.
func Depth(v query.Value) int {
	switch v.Kind() {
	case query.Array:
		d := 0
		for _, e := range v.Elems() {
			d = max(d, Depth(e))
		}
		return d + 1
	case query.Object:
		d := 0
		for _, m := range v.Members() {
			d = max(d, Depth(m.Value))
		}
		return d + 1
	}
	return 0
}
