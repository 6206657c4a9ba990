package engine

import (
	"context"
	"errors"
	"strings"

	"github.com/ebbdb/ebb/internal/engine/dberr"
	"github.com/ebbdb/ebb/internal/engine/document"
	"github.com/ebbdb/ebb/internal/engine/keyspace"
	"github.com/ebbdb/ebb/internal/engine/throughput"
	"github.com/ebbdb/ebb/internal/script"
	"github.com/ebbdb/ebb/internal/storage"
)

// Triggers run with the item write that names them
// (x-ms-documentdb-pre-trigger-include and -post-trigger-include), in
// its transaction (scriptTx): a pre-trigger before the write, reading
// and changing the request's document (getRequest().getBody/setBody); a
// post-trigger after it, reading the stored document
// (getResponse().getBody()) and writing other items of the partition.
// A trigger that throws aborts the write and everything the triggers
// wrote. Only item creates, replaces, upserts and deletes take triggers,
// as the service's do.

// Triggers are the triggers an item write names: the raw values of its
// pre- and post-trigger headers ("" for none).
type Triggers struct {
	Pre, Post string
}

// named reports whether the write names any trigger.
func (tr Triggers) named() bool { return tr.Pre != "" || tr.Post != "" }

// trigger is a stored trigger as a write runs it.
type trigger struct {
	id, version, source string
}

// operationName is the trigger operation a write is, as
// getRequest().getOperationType() and triggerOperation name it.
func operationName(kind WriteKind, deleting bool) string {
	switch {
	case deleting:
		return "Delete"
	case kind == Upsert:
		return "Upsert"
	case kind == Replace:
		return "Replace"
	}
	return "Create"
}

// loadTriggers reads the triggers tr names for operation op, checking
// each one's type and operation as the service does.
func (e *Engine) loadTriggers(ctx context.Context, c *container, tr Triggers, op string) (pre, post []trigger, err error) {
	if pre, err = e.loadTriggerList(ctx, c, tr.Pre, "Pre", op); err != nil {
		return nil, nil, err
	}
	if post, err = e.loadTriggerList(ctx, c, tr.Post, "Post", op); err != nil {
		return nil, nil, err
	}
	return pre, post, nil
}

func (e *Engine) loadTriggerList(ctx context.Context, c *container, header, typ, op string) ([]trigger, error) {
	if header == "" {
		return nil, nil
	}
	names := strings.Split(header, ",")
	if len(names) > 1 {
		// "Currently only one PreTrigger is permitted per operation"
		// (the .NET SDK's ItemRequestOptions.PreTriggers).
		return nil, dberr.BadRequest("Only one %s-trigger is permitted per operation; the request names %d: %s.", strings.ToLower(typ), len(names), header)
	}
	id := strings.TrimSpace(names[0])
	raw, err := e.store.Get(ctx, keyspace.ScriptKey(c.rid, byte(Trigger), id))
	if errors.Is(err, storage.ErrNotFound) {
		return nil, dberr.NotFound("Resource Not Found. The trigger '%s' does not exist.", id)
	}
	if err != nil {
		return nil, err
	}
	ms, err := document.ObjectBody(raw)
	if err != nil {
		return nil, err
	}
	if got := document.Unquote(document.Lookup(ms, "triggerType")); !strings.EqualFold(got, typ) {
		return nil, dberr.BadRequest("Trigger '%s' is a %s-trigger; name it in x-ms-documentdb-%s-trigger-include.", id, strings.ToLower(got), strings.ToLower(got))
	}
	if defined := document.Unquote(document.Lookup(ms, "triggerOperation")); !strings.EqualFold(defined, "All") && !strings.EqualFold(defined, op) {
		// The service's text (quoted in azure-cosmos-dotnet-v3 issue 4104).
		return nil, dberr.BadRequest("Trigger '%s' was defined with operation type '%s', and therefore is invalid for '%s'.", id, defined, op)
	}
	return []trigger{{id: id, source: document.Unquote(document.Lookup(ms, "body")), version: document.Unquote(document.Lookup(ms, "_etag"))}}, nil
}

// runTriggers runs ts in coll's transaction with the request and response
// bodies given, and returns the request body as the last one to set it
// left it (as given when none did), and the response body a post-trigger
// set (nil for none).
func (e *Engine) runTriggers(ctx context.Context, coll *scriptCollection, ts []trigger, op string, request, response []byte) (req, resp []byte, err error) {
	for _, tg := range ts {
		out, err := e.scripts.Run(ctx.Done(), script.Call{
			Kind: Trigger.what(), ID: tg.id, Version: tg.version, Source: tg.source, Args: []byte("[]"),
			RequestBody: request, ResponseBody: response, OperationType: op, Collection: coll, Scope: coll.t.c.ridStr,
		})
		if err != nil {
			return nil, nil, scriptError(err)
		}
		if out.RequestBody != nil {
			request = out.RequestBody
		}
		if out.Body != nil {
			resp = out.Body
		}
	}
	return request, resp, nil
}

// writeWithTriggers is WriteItem of a write that names triggers: p is the
// request's document, validated.
func (e *Engine) writeWithTriggers(ctx context.Context, c *container, ref ItemRef, kind WriteKind, p prepared, ifMatch string) (Resource, error) {
	op := operationName(kind, false)
	pre, post, err := e.loadTriggers(ctx, c, ref.Triggers, op)
	if err != nil {
		return Resource{}, err
	}
	var w written
	var body []byte
	t, coll, err := e.scriptTx(ctx, c, p.pk, func(t *itemTx, coll *scriptCollection) error {
		doc, _, err := e.runTriggers(ctx, coll, pre, op, p.body, nil)
		if err != nil {
			return err
		}
		// What a pre-trigger left is validated as the request was, in
		// the request's partition.
		q, err := c.prepareWrite(kind, doc, ref.ID, p.pk)
		if err != nil {
			return err
		}
		if w, err = t.write(kind, keyspace.DocKey(c.rid, q.pkEnc, q.id), q, ifMatch); err != nil {
			return err
		}
		_, body, err = e.runTriggers(ctx, coll, post, op, doc, w.doc)
		return err
	})
	if err != nil {
		return Resource{}, err
	}
	if body == nil {
		body = w.doc
	}
	res := c.resource(body, w.hdr, throughput.Write(len(w.doc))+coll.charge)
	res.Session = sessionToken(t.st.lsn)
	res.Created = w.created
	return res, nil
}

// deleteWithTriggers is DeleteItem of a delete that names triggers.
func (e *Engine) deleteWithTriggers(ctx context.Context, c *container, ref ItemRef, ifMatch string) (Resource, error) {
	const op = "Delete"
	pre, post, err := e.loadTriggers(ctx, c, ref.Triggers, op)
	if err != nil {
		return Resource{}, err
	}
	pk, err := c.pkFromRequest(ref)
	if err != nil {
		return Resource{}, err
	}
	var n int
	t, coll, err := e.scriptTx(ctx, c, pk, func(t *itemTx, coll *scriptCollection) error {
		if _, _, err := e.runTriggers(ctx, coll, pre, op, nil, nil); err != nil {
			return err
		}
		var err error
		if n, err = t.delete(keyspace.DocKey(c.rid, coll.pkEnc, ref.ID), coll.pkEnc, ref.ID, ifMatch); err != nil {
			return err
		}
		_, _, err = e.runTriggers(ctx, coll, post, op, nil, nil)
		return err
	})
	if err != nil {
		return Resource{}, err
	}
	return c.resource(nil, document.ItemHeader{LSN: t.st.lsn}, throughput.Write(n)+coll.charge), nil
}
