package engine

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

func createTrigger(t *testing.T, e *Engine, id, typ, op, src string) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"id": id, "body": src, "triggerType": typ, "triggerOperation": op})
	if _, err := e.CreateScript(context.Background(), "db", "c", Trigger, body); err != nil {
		t.Fatal(err)
	}
}

func writeWith(e *Engine, kind WriteKind, id, body string, tr Triggers) (Resource, error) {
	ref := ItemRef{DB: "db", Coll: "c", ID: id, PK: `["p"]`, HasPK: true, Triggers: tr}
	return e.WriteItem(context.Background(), ref, kind, []byte(body), "")
}

func exists(t *testing.T, e *Engine, id string) bool {
	t.Helper()
	_, err := e.ReadItem(context.Background(), ItemRef{DB: "db", Coll: "c", ID: id, PK: `["p"]`, HasPK: true}, "")
	if err != nil && !IsKind(err, KindNotFound) {
		t.Fatal(err)
	}
	return err == nil
}

func TestTriggers(t *testing.T) {
	e, _ := newTestEngine(t)
	mustCreate(t, e, "db", "c", containerBodyWith(""))
	createTrigger(t, e, "stamp", "Pre", "All", `function () {
		var req = getContext().getRequest(), doc = req.getBody();
		doc.stamped = req.getOperationType();
		req.setBody(doc);
	}`)
	createTrigger(t, e, "reject", "Pre", "Create", `function () {
		if (!getContext().getRequest().getBody().name) throw new Error("a name is required");
	}`)
	createTrigger(t, e, "audit", "Post", "All", `function () {
		var c = getContext().getCollection(), doc = getContext().getResponse().getBody();
		var op = getContext().getRequest().getOperationType();
		c.upsertDocument(c.getSelfLink(), {id: "audit-" + op + "-" + (doc ? doc.id : "gone"), pk: "p", ts: doc ? doc._ts : 0});
	}`)
	createTrigger(t, e, "fail", "Post", "All", `function () { throw new Error("post failed"); }`)
	createTrigger(t, e, "moveout", "Pre", "All", `function () { var d = getContext().getRequest().getBody(); d.pk = "q"; getContext().getRequest().setBody(d); }`)

	res, err := writeWith(e, Create, "", `{"id":"a","pk":"p"}`, Triggers{Pre: "stamp", Post: "audit"})
	if err != nil {
		t.Fatal(err)
	}
	var a struct{ Stamped string }
	if json.Unmarshal(res.Body, &a); a.Stamped != "Create" || !exists(t, e, "audit-Create-a") {
		t.Fatalf("create with triggers: %s; audit written: %v", res.Body, exists(t, e, "audit-Create-a"))
	}
	if _, err := writeWith(e, Upsert, "", `{"id":"a","pk":"p"}`, Triggers{Pre: "stamp"}); err != nil {
		t.Fatal(err)
	}
	if _, err := writeWith(e, Replace, "a", `{"id":"a","pk":"p"}`, Triggers{Post: "audit"}); err != nil || !exists(t, e, "audit-Replace-a") {
		t.Fatalf("replace with a post-trigger: %v", err)
	}

	for _, tc := range []struct {
		name string
		kind WriteKind
		id   string
		tr   Triggers
		want string
	}{
		{"a pre-trigger rejects", Create, "b", Triggers{Pre: "reject"}, "Encountered exception while executing function. Exception = Error: a name is required"},
		{"a post-trigger throws", Create, "b", Triggers{Post: "fail", Pre: "stamp"}, "Exception = Error: post failed"},
		{"wrong operation", Upsert, "b", Triggers{Pre: "reject"}, "Trigger 'reject' was defined with operation type 'Create', and therefore is invalid for 'Upsert'."},
		{"wrong type", Create, "b", Triggers{Post: "stamp"}, "Trigger 'stamp' is a pre-trigger; name it in x-ms-documentdb-pre-trigger-include."},
		{"two at once", Create, "b", Triggers{Pre: "stamp,reject"}, "Only one pre-trigger is permitted per operation"},
		{"missing", Create, "b", Triggers{Pre: "nope"}, "The trigger 'nope' does not exist."},
		{"moved to another partition", Create, "b", Triggers{Pre: "moveout"}, "doesn't match the one specified in the header"},
	} {
		_, err := writeWith(e, tc.kind, tc.id, `{"id":"b","pk":"p"}`, tc.tr)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
		if exists(t, e, "b") {
			t.Errorf("%s: the item was written", tc.name)
		}
	}

	// A delete runs its triggers; one that throws keeps the item.
	del := func(tr Triggers) error {
		_, err := e.DeleteItem(context.Background(), ItemRef{DB: "db", Coll: "c", ID: "a", PK: `["p"]`, HasPK: true, Triggers: tr}, "")
		return err
	}
	if err := del(Triggers{Post: "fail"}); err == nil || !exists(t, e, "a") {
		t.Fatalf("a delete whose post-trigger throws: %v; item kept: %v", err, exists(t, e, "a"))
	}
	if err := del(Triggers{Post: "audit"}); err != nil || exists(t, e, "a") || !exists(t, e, "audit-Delete-gone") {
		t.Fatalf("a delete with a post-trigger: %v", err)
	}
}

// TestTriggerKeepsBody: a pre-trigger that reads the document but does
// not set it leaves it exactly as sent: JavaScript numbers would round a
// large integer.
func TestTriggerKeepsBody(t *testing.T) {
	e, _ := newTestEngine(t)
	mustCreate(t, e, "db", "c", containerBodyWith(""))
	createTrigger(t, e, "look", "Pre", "All", `function () { var d = getContext().getRequest().getBody(); if (!d.id) throw new Error("no id"); }`)
	res, err := writeWith(e, Create, "", `{"id":"big","pk":"p","n":12345678901234567890}`, Triggers{Pre: "look"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(res.Body), `"n":12345678901234567890`) {
		t.Fatalf("the document changed: %s", res.Body)
	}
}
