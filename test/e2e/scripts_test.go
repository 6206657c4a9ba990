package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/ebbdb/ebb/internal/server"
)

// TestScriptResources: stored procedures, triggers and user-defined
// functions are created, read, listed, queried, replaced (If-Match) and
// deleted as the service does; a body that does not compile is 400 at
// create, naming where; a container holds no more than its quota, and
// reports its count; deleting the container deletes its scripts; and
// a stored procedure runs the body it was last replaced with.
func TestScriptResources(t *testing.T) {
	e := start(t)
	e.container(t, pkProps("scr", "/pk"))
	rc := newRest(t, e)
	base := "/dbs/db-scr/colls/scr/"
	type res struct {
		ID   string `json:"id"`
		RID  string `json:"_rid"`
		Self string `json:"_self"`
		Etag string `json:"_etag"`
		Ts   int64  `json:"_ts"`
		Body string `json:"body"`
	}
	decode := func(r restResponse) res {
		t.Helper()
		var v res
		if err := json.Unmarshal(r.body, &v); err != nil {
			t.Fatalf("%d %s: %v", r.status, r.body, err)
		}
		return v
	}

	sp := `{"id":"sp1","body":"function (prefix) { var ctx = getContext(); ctx.getResponse().setBody(prefix + 'x'); }"}`
	r := rc.do(t, http.MethodPost, base+"sprocs", nil, []byte(sp))
	if r.status != http.StatusCreated {
		t.Fatalf("create sproc: %d %s", r.status, r.body)
	}
	created := decode(r)
	if created.RID == "" || !strings.HasSuffix(created.Self, "/sprocs/"+created.RID+"/") || created.Etag == "" || created.Ts == 0 {
		t.Errorf("created sproc lacks system properties: %s", r.body)
	}
	if r = rc.do(t, http.MethodPost, base+"sprocs", nil, []byte(sp)); r.status != http.StatusConflict {
		t.Errorf("creating it twice: %d, want 409", r.status)
	}
	bad := `{"id":"sp2","body":"function () {\n  var x = ;\n}"}`
	if r = rc.do(t, http.MethodPost, base+"sprocs", nil, []byte(bad)); r.status != http.StatusBadRequest || !strings.Contains(string(r.body), "does not compile") || !strings.Contains(string(r.body), "line 2") {
		t.Errorf("a body that does not compile: %d %s, want 400 naming line 2", r.status, r.body)
	}
	if r = rc.do(t, http.MethodGet, base+"sprocs/sp1", nil, nil); r.status != http.StatusOK || decode(r).RID != created.RID {
		t.Errorf("read: %d %s", r.status, r.body)
	}
	var feed struct {
		Procs []res `json:"StoredProcedures"`
		Count int   `json:"_count"`
	}
	r = rc.do(t, http.MethodGet, base+"sprocs", nil, nil)
	if json.Unmarshal(r.body, &feed); r.status != http.StatusOK || feed.Count != 1 || feed.Procs[0].ID != "sp1" {
		t.Errorf("list: %d %s", r.status, r.body)
	}
	query := map[string]string{"x-ms-documentdb-isquery": "true", "Content-Type": "application/query+json"}
	r = rc.do(t, http.MethodPost, base+"sprocs", query, []byte(`{"query":"SELECT * FROM root r WHERE r.id = @id","parameters":[{"name":"@id","value":"sp1"}]}`))
	if json.Unmarshal(r.body, &feed); r.status != http.StatusOK || len(feed.Procs) != 1 {
		t.Errorf("query: %d %s", r.status, r.body)
	}

	replacement := []byte(`{"id":"sp1","body":"function () { getContext().getResponse().setBody(1); }"}`)
	if r = rc.do(t, http.MethodPut, base+"sprocs/sp1", map[string]string{"If-Match": `"stale"`}, replacement); r.status != http.StatusPreconditionFailed {
		t.Errorf("replace with a stale etag: %d, want 412", r.status)
	}
	r = rc.do(t, http.MethodPut, base+"sprocs/sp1", map[string]string{"If-Match": created.Etag}, replacement)
	if replaced := decode(r); r.status != http.StatusOK || replaced.RID != created.RID || replaced.Etag == created.Etag || !strings.Contains(replaced.Body, "setBody(1)") {
		t.Errorf("replace: %d %s", r.status, r.body)
	}
	// The replaced body is the one that runs.
	if r = rc.do(t, http.MethodPost, base+"sprocs/sp1", map[string]string{"x-ms-documentdb-partitionkey": `["p"]`}, []byte(`["a"]`)); r.status != http.StatusOK || string(r.body) != "1" {
		t.Errorf("running the replaced stored procedure: %d %s, want 200 1", r.status, r.body)
	}

	for _, tt := range []struct {
		body string
		want int
	}{
		{`{"id":"t1","body":"function () {}","triggerType":"pre","triggerOperation":"create"}`, http.StatusCreated},
		{`{"id":"t2","body":"function () {}","triggerType":"Post","triggerOperation":"All"}`, http.StatusCreated},
		{`{"id":"t3","body":"function () {}","triggerType":"Sometimes","triggerOperation":"All"}`, http.StatusBadRequest},
		{`{"id":"t4","body":"function () {}","triggerType":"Pre"}`, http.StatusBadRequest},
	} {
		if r = rc.do(t, http.MethodPost, base+"triggers", nil, []byte(tt.body)); r.status != tt.want {
			t.Errorf("trigger %s: %d %s, want %d", tt.body, r.status, r.body, tt.want)
		}
	}
	// A container holds at most 25 triggers, as its quota header says;
	// a container read reports how many it has.
	for i := 3; i <= 25; i++ {
		body := fmt.Sprintf(`{"id":"q%d","body":"function () {}","triggerType":"Pre","triggerOperation":"All"}`, i)
		if r = rc.do(t, http.MethodPost, base+"triggers", nil, []byte(body)); r.status != http.StatusCreated {
			t.Fatalf("trigger %d: %d %s", i, r.status, r.body)
		}
	}
	if r = rc.do(t, http.MethodPost, base+"triggers", nil, []byte(`{"id":"one-too-many","body":"function () {}","triggerType":"Pre","triggerOperation":"All"}`)); r.status != http.StatusForbidden {
		t.Errorf("a 26th trigger: %d %s, want 403", r.status, r.body)
	}
	r = rc.do(t, http.MethodGet, "/dbs/db-scr/colls/scr", map[string]string{"x-ms-documentdb-populatequotainfo": "true"}, nil)
	if usage := r.header.Get("x-ms-resource-usage"); !strings.Contains(usage, "storedProcedures=1;triggers=25;") || !strings.Contains(r.header.Get("x-ms-resource-quota"), "triggers=25;") {
		t.Errorf("container usage %q, quota %q", usage, r.header.Get("x-ms-resource-quota"))
	}
	if r = rc.do(t, http.MethodPost, base+"udfs", nil, []byte(`{"id":"tax","body":"function tax(x) { return x * 0.2; }"}`)); r.status != http.StatusCreated {
		t.Errorf("create udf: %d %s", r.status, r.body)
	}
	if r = rc.do(t, http.MethodDelete, base+"udfs/tax", nil, nil); r.status != http.StatusNoContent {
		t.Errorf("delete udf: %d %s", r.status, r.body)
	}
	if r = rc.do(t, http.MethodGet, base+"udfs/tax", nil, nil); r.status != http.StatusNotFound {
		t.Errorf("read a deleted udf: %d, want 404", r.status)
	}

	// Deleting the container deletes its scripts.
	if r = rc.do(t, http.MethodDelete, "/dbs/db-scr/colls/scr", nil, nil); r.status != http.StatusNoContent {
		t.Fatalf("delete container: %d %s", r.status, r.body)
	}
	if r = rc.do(t, http.MethodPost, "/dbs/db-scr/colls", nil, []byte(`{"id":"scr","partitionKey":{"paths":["/pk"],"kind":"Hash"}}`)); r.status != http.StatusCreated {
		t.Fatalf("recreate container: %d %s", r.status, r.body)
	}
	for _, family := range []string{"sprocs", "triggers"} {
		if r = rc.do(t, http.MethodGet, base+family, nil, nil); !strings.Contains(string(r.body), `"_count":0`) {
			t.Errorf("%s of a recreated container: %s", family, r.body)
		}
	}
}

// TestStoredProcedureTransactions: a procedure's writes commit together
// or not at all, and procedures that read and write the same item
// concurrently lose no update (each runs on a snapshot and runs again
// when another write got in first) — on either store.
func TestStoredProcedureTransactions(t *testing.T) {
	e := start(t)
	e.container(t, pkProps("tx", "/pk"))
	rc := newRest(t, e)
	base := "/dbs/db-tx/colls/tx/"
	pk := map[string]string{"x-ms-documentdb-partitionkey": `["p"]`}
	create := func(id, src string) {
		t.Helper()
		body, _ := json.Marshal(map[string]string{"id": id, "body": src})
		if r := rc.do(t, http.MethodPost, base+"sprocs", nil, body); r.status != http.StatusCreated {
			t.Fatalf("create %s: %d %s", id, r.status, r.body)
		}
	}
	create("fill", `function (n, failAt) {
		var c = getContext().getCollection();
		for (var i = 0; i < n; i++) {
			if (i === failAt) throw new Error("stop");
			c.createDocument(c.getSelfLink(), {id: "d" + i, pk: "p"});
		}
	}`)
	if r := rc.do(t, http.MethodPost, base+"sprocs/fill", pk, []byte(`[100, 50]`)); r.status != http.StatusBadRequest {
		t.Fatalf("a procedure that throws: %d %s", r.status, r.body)
	}
	if r := rc.do(t, http.MethodGet, base+"docs/d0", pk, nil); r.status != http.StatusNotFound {
		t.Fatalf("after a procedure threw, its first write is there: %d", r.status)
	}
	if r := rc.do(t, http.MethodPost, base+"sprocs/fill", pk, []byte(`[100, -1]`)); r.status != http.StatusOK {
		t.Fatalf("fill: %d %s", r.status, r.body)
	}
	if r := rc.do(t, http.MethodGet, base+"docs/d99", pk, nil); r.status != http.StatusOK {
		t.Fatalf("after the procedure, its last write: %d", r.status)
	}

	create("inc", `function () {
		var c = getContext().getCollection();
		c.readDocument(c.getAltLink() + "/docs/counter", function (err, d) {
			if (err) throw err;
			d.n++;
			c.replaceDocument(d._self, d, function (err, d2) { if (err) throw err; getContext().getResponse().setBody(d2.n); });
		});
	}`)
	if r := rc.do(t, http.MethodPost, base+"docs", pk, []byte(`{"id":"counter","pk":"p","n":0}`)); r.status != http.StatusCreated {
		t.Fatalf("counter: %d %s", r.status, r.body)
	}
	const workers, calls = 4, 10
	failures := make(chan string, workers*calls)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range calls {
				if r := rc.do(t, http.MethodPost, base+"sprocs/inc", pk, nil); r.status != http.StatusOK {
					failures <- fmt.Sprintf("%d %s", r.status, r.body)
				}
			}
		}()
	}
	wg.Wait()
	close(failures)
	for f := range failures {
		t.Errorf("inc: %s", f)
	}
	r := rc.do(t, http.MethodGet, base+"docs/counter", pk, nil)
	var counter struct{ N int }
	if err := json.Unmarshal(r.body, &counter); err != nil || counter.N != workers*calls {
		t.Fatalf("counter after %d increments: %s", workers*calls, r.body)
	}
}

// TestScriptsAfterRestart: triggers and user-defined functions run, and
// every kind of script is still there and still runs after a restart
// on the same data — on either store.
func TestScriptsAfterRestart(t *testing.T) {
	dir := t.TempDir()
	e := startWith(t, server.Config{DataDir: dir})
	e.container(t, pkProps("rs", "/pk"))
	rc := newRest(t, e)
	base := "/dbs/db-rs/colls/rs/"
	pk := map[string]string{"x-ms-documentdb-partitionkey": `["p"]`}
	for kind, def := range map[string]map[string]string{
		"sprocs":   {"id": "hello", "body": "function (n) { getContext().getResponse().setBody('hello ' + n); }"},
		"triggers": {"id": "stamp", "triggerType": "Pre", "triggerOperation": "Create", "body": "function () { var r = getContext().getRequest(), d = r.getBody(); d.stamped = true; r.setBody(d); }"},
		"udfs":     {"id": "double", "body": "function (x) { return x * 2; }"},
	} {
		body, _ := json.Marshal(def)
		if r := rc.do(t, http.MethodPost, base+kind, nil, body); r.status != http.StatusCreated {
			t.Fatalf("create %s: %d %s", kind, r.status, r.body)
		}
	}
	check := func(rc *restClient, id string) {
		t.Helper()
		if r := rc.do(t, http.MethodPost, base+"sprocs/hello", pk, []byte(`["x"]`)); r.status != http.StatusOK || string(r.body) != `"hello x"` {
			t.Errorf("procedure: %d %s", r.status, r.body)
		}
		stamped := map[string]string{"x-ms-documentdb-partitionkey": `["p"]`, "x-ms-documentdb-pre-trigger-include": "stamp"}
		if r := rc.do(t, http.MethodPost, base+"docs", stamped, []byte(`{"id":"`+id+`","pk":"p","n":21}`)); r.status != http.StatusCreated || !strings.Contains(string(r.body), `"stamped":true`) {
			t.Errorf("create with a pre-trigger: %d %s", r.status, r.body)
		}
		query := map[string]string{"x-ms-documentdb-partitionkey": `["p"]`, "x-ms-documentdb-isquery": "true", "Content-Type": "application/query+json"}
		r := rc.do(t, http.MethodPost, base+"docs", query, []byte(`{"query":"SELECT VALUE udf.double(c.n) FROM c WHERE c.id = '`+id+`'"}`))
		if r.status != http.StatusOK || !strings.Contains(string(r.body), `"Documents":[42]`) {
			t.Errorf("query with a function: %d %s", r.status, r.body)
		}
	}
	check(rc, "before")
	if err := e.stop(t); err != nil && err != context.DeadlineExceeded {
		t.Fatal(err)
	}
	e2 := startWith(t, server.Config{DataDir: dir})
	check(newRest(t, e2), "after")
}

// TestTriggersThroughTheGoSDK: ItemOptions.PreTriggers and PostTriggers
// of the Go SDK run the container's triggers on a create, an upsert, a
// replace and a delete; a trigger that throws fails the write, which
// leaves nothing.
func TestTriggersThroughTheGoSDK(t *testing.T) {
	e := start(t)
	c := e.container(t, pkProps("trg", "/pk"))
	rc := newRest(t, e)
	for _, def := range []string{
		`{"id":"stamp","triggerType":"Pre","triggerOperation":"All","body":"function () { var r = getContext().getRequest(), d = r.getBody(); d.op = r.getOperationType(); r.setBody(d); }"}`,
		`{"id":"audit","triggerType":"Post","triggerOperation":"All","body":"function () { var c = getContext().getCollection(), op = getContext().getRequest().getOperationType(); c.upsertDocument(c.getSelfLink(), {id: 'audit-' + op, pk: 'p'}); }"}`,
		`{"id":"veto","triggerType":"Pre","triggerOperation":"Create","body":"function () { throw new Error('no creates today'); }"}`,
	} {
		if r := rc.do(t, http.MethodPost, "/dbs/db-trg/colls/trg/triggers", nil, []byte(def)); r.status != http.StatusCreated {
			t.Fatalf("create trigger: %d %s", r.status, r.body)
		}
	}
	pk := azcosmos.NewPartitionKeyString("p")
	opts := &azcosmos.ItemOptions{PreTriggers: []string{"stamp"}, PostTriggers: []string{"audit"}, EnableContentResponseOnWrite: true}
	res, err := c.CreateItem(e.ctx, pk, []byte(`{"id":"a","pk":"p"}`), opts)
	if err != nil || !strings.Contains(string(res.Value), `"op":"Create"`) {
		t.Fatalf("create with triggers: %v %s", err, res.Value)
	}
	if _, err := c.UpsertItem(e.ctx, pk, []byte(`{"id":"a","pk":"p"}`), opts); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ReplaceItem(e.ctx, pk, "a", []byte(`{"id":"a","pk":"p"}`), opts); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DeleteItem(e.ctx, pk, "a", &azcosmos.ItemOptions{PostTriggers: []string{"audit"}}); err != nil {
		t.Fatal(err)
	}
	for _, op := range []string{"Create", "Upsert", "Replace", "Delete"} {
		if _, err := c.ReadItem(e.ctx, pk, "audit-"+op, nil); err != nil {
			t.Errorf("the post-trigger's audit item for %s: %v", op, err)
		}
	}
	_, err = c.CreateItem(e.ctx, pk, []byte(`{"id":"b","pk":"p"}`), &azcosmos.ItemOptions{PreTriggers: []string{"veto"}})
	var re *azcore.ResponseError
	if !errors.As(err, &re) || re.StatusCode != http.StatusBadRequest || !strings.Contains(err.Error(), "no creates today") {
		t.Fatalf("a vetoed create: %v", err)
	}
	if _, err := c.ReadItem(e.ctx, pk, "b", nil); err == nil {
		t.Fatal("the vetoed item was written")
	}
}
