package engine

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/ebbdb/ebb/internal/script"
)

// FuzzScripts creates a stored procedure, a trigger and a function from
// any body and runs each one that compiles: nothing may panic, and every
// failure must be a client error the gateway can answer (never a 500),
// with the container left consistent.
func FuzzScripts(f *testing.F) {
	for _, s := range []string{
		"function () { getContext().getResponse().setBody(1); }",
		"function (a) { var c = getContext().getCollection(); c.createDocument(c.getSelfLink(), {id: 'x', pk: 'p', a: a}); }",
		"() => { throw new Error(409, 'no'); }",
		"function () { __.chain().filter(function (d) { return d.n > 1; }).value(); }",
		"function () { var r = getContext().getRequest(); var d = r.getBody(); if (d) { d.x = 1; r.setBody(d); } }",
		"function (x) { return x * 2; }",
		"function () { while (true) {} }",
		"function ( {",
		"42",
		"function () { getContext().getCollection().queryDocuments('dbs/db/colls/c', 'SELECT * FROM c', function (e, docs) { getContext().getResponse().setBody(docs); }); }",
		"function () { getContext().getCollection().replaceDocument('dbs/x/colls/y/docs/z', {id: 'z'}); }",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		if len(src) > 4096 {
			return
		}
		e, _ := openEngine(t, memStore(t), Options{ScriptBudgets: script.Budgets{Time: 50 * time.Millisecond}})
		mustCreate(t, e, "db", "c", containerBodyWith(""))
		ctx := context.Background()
		write(t, e, "c", `{"id":"d","pk":"p","n":2}`)
		clientErr := func(what string, err error) {
			t.Helper()
			var ee *Error
			if err != nil && !errors.As(err, &ee) {
				t.Fatalf("%s of %q: not a client error: %v", what, src, err)
			}
		}
		for _, kind := range []ScriptKind{StoredProcedure, Trigger, UserDefinedFunction} {
			def := map[string]string{"id": "s", "body": src}
			if kind == Trigger {
				def["triggerType"], def["triggerOperation"] = "Pre", "All"
			}
			body, _ := json.Marshal(def)
			_, err := e.CreateScript(ctx, "db", "c", kind, body)
			clientErr("create", err)
			if err != nil {
				continue
			}
			switch kind {
			case StoredProcedure:
				_, err = execSproc(e, "s", `["p"]`, `[1]`)
			case Trigger:
				_, err = writeWith(e, Upsert, "", `{"id":"t","pk":"p"}`, Triggers{Pre: "s"})
			default:
				_, err = queryRows(e, "SELECT VALUE udf.s(c.n) FROM c")
			}
			clientErr("run", err)
		}
		if err := e.CheckConsistency(ctx); err != nil {
			t.Fatalf("after %q: %v", src, err)
		}
	})
}
