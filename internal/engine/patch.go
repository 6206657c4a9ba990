package engine

import (
	"context"
	"fmt"

	"github.com/ebbdb/ebb/internal/engine/dberr"
	"github.com/ebbdb/ebb/internal/engine/document"
	"github.com/ebbdb/ebb/internal/engine/patch"
	"github.com/ebbdb/ebb/internal/engine/resource"
	"github.com/ebbdb/ebb/internal/engine/throughput"
	"github.com/ebbdb/ebb/internal/query"
)

// PatchItem applies a partial update to an item atomically. A patch is a
// write: it sets a new _ts, _etag and LSN, and its effect on ttl is
// validated like any write. The optional condition is a filter such as
// "from c where c.status = 'open'"; when it does not match, 412.
func (e *Engine) PatchItem(ctx context.Context, ref ItemRef, body []byte, ifMatch string) (Resource, error) {
	return retrySplit(ctx, e, func() (Resource, error) { return e.patchItem(ctx, ref, body, ifMatch) })
}

// patchItem is PatchItem, run again by retrySplit when it finds its
// partition split.
func (e *Engine) patchItem(ctx context.Context, ref ItemRef, body []byte, ifMatch string) (Resource, error) {
	c, _, key, err := e.resolvePoint(ref)
	if err != nil {
		return Resource{}, err
	}
	pr, err := c.parsePatchRequest(body)
	if err != nil {
		return Resource{}, err
	}
	var w written
	err = e.updateItem(ctx, c, key, func(t *itemTx) error {
		var err error
		w, err = t.patch(key, pr, ifMatch)
		return err
	})
	if err != nil {
		return Resource{}, err
	}
	return c.resource(w.doc, w.hdr, throughput.Write(len(w.doc))), nil
}

// patchRequest is a validated patch: its operations and condition.
type patchRequest struct {
	ops    []patch.Op
	filter *query.Filter // nil: no condition
}

// parsePatchRequest validates a patch body for container c: its
// operations, that none touches the partition key, and its condition.
func (c *container) parsePatchRequest(body []byte) (patchRequest, error) {
	ops, condition, err := patch.Parse(body)
	if err != nil {
		return patchRequest{}, err
	}
	for _, op := range ops {
		if op.TouchesPK(c.pk) {
			return patchRequest{}, dberr.BadRequest("Patch operation %s %s would change the partition key %s, which cannot be patched.", op.Op, op.Path, resource.PKPaths(c.pk))
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
	var w written
	err := t.lendMatching(key, ifMatch, func(old storedItem) error {
		var err error
		w, err = t.patchVersion(key, pr, old)
		return err
	})
	return w, err
}

// patchVersion applies pr to old, the visible version stored at key.
func (t *itemTx) patchVersion(key []byte, pr patchRequest, old storedItem) (written, error) {
	// The stored document is parsed once: the condition is evaluated on
	// it, the operations change it in place and it is encoded once.
	doc, err := query.ParseJSON(old.doc)
	if err != nil {
		return written{}, fmt.Errorf("engine: stored document does not parse: %w", err)
	}
	if pr.filter != nil && !pr.filter.MatchValue(doc, query.Env{Now: t.at}) {
		return written{}, ErrPreconditionFailed
	}
	reach := 0
	for i := range pr.ops {
		op := pr.ops[i] // apply may set op.value; keep ops reusable on retry
		if err := op.Apply(doc, i+1); err != nil {
			return written{}, err
		}
		reach = max(reach, op.Reach())
	}
	if reach > document.MaxDepth && patch.Depth(doc) > document.MaxDepth {
		return written{}, dberr.BadRequest("The document nests objects and arrays more than %d levels deep.", document.MaxDepth)
	}
	p, err := t.c.preparePatched(doc)
	if err != nil {
		return written{}, err
	}
	return t.put(key, p, old, true)
}

// preparePatched encodes a patched document once and prepares it for
// put without validating the encoding again: every string in doc is
// UTF-8 (query.ParseJSON refuses any other), no object names a member
// twice (Value.Set replaces), every number is a double, and patch checks
// the nesting. The system properties are left out, as put writes them
// anew.
func (c *container) preparePatched(doc query.Value) (prepared, error) {
	members := doc.Members()
	type span struct {
		name            string
		start, val, end int
	}
	spans := make([]span, 0, len(members))
	body := make([]byte, 0, 1024)
	body = append(body, '{')
	for _, m := range members {
		if document.IsSystemProperty(m.Name) || !m.Value.IsDefined() {
			continue
		}
		if len(spans) > 0 {
			body = append(body, ',')
		}
		sp := span{name: m.Name, start: len(body)}
		body = query.StringValue(m.Name).AppendJSON(body)
		body = append(body, ':')
		sp.val = len(body)
		body = m.Value.AppendJSON(body)
		sp.end = len(body)
		spans = append(spans, sp)
	}
	body = append(body, '}')
	// The members are sliced only now that body has stopped growing.
	ms := make([]document.Member, 0, len(spans))
	for _, sp := range spans {
		ms = append(ms, document.Member{Key: sp.name, Val: body[sp.val:sp.end], Start: sp.start, End: sp.end})
	}
	if err := checkSize(body); err != nil {
		return prepared{}, err
	}
	return c.prepareMembers(body, ms)
}
