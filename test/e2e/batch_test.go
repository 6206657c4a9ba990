package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/ebbdb/ebb/internal/server"
)

// TestTransactionalBatch runs every kind of operation in one batch.
func TestTransactionalBatch(t *testing.T) {
	e := start(t)
	c := e.container(t, pkProps("batch", "/pk"))
	p := azcosmos.NewPartitionKeyString("p")
	for _, id := range []string{"r", "d", "x"} {
		if _, err := c.CreateItem(e.ctx, p, item(id, "p", "v", 1), nil); err != nil {
			t.Fatal(err)
		}
	}
	read, err := c.ReadItem(e.ctx, p, "x", nil)
	if err != nil {
		t.Fatal(err)
	}
	b := c.NewTransactionalBatch(p)
	b.CreateItem(item("new", "p"), nil)
	b.UpsertItem(item("up", "p"), nil)
	b.ReplaceItem("r", item("r", "p", "v", 2), nil)
	b.ReadItem("new", nil) // reads see the batch's own writes
	b.DeleteItem("d", nil)
	ops := azcosmos.PatchOperations{}
	ops.AppendIncrement("/v", 10)
	b.PatchItem("x", ops, &azcosmos.TransactionalBatchItemOptions{IfMatchETag: &read.ETag})
	resp, err := c.ExecuteTransactionalBatch(e.ctx, b, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !resp.Success {
		t.Fatalf("batch failed: %+v", resp.OperationResults)
	}
	wantStatus := []int32{201, 201, 200, 200, 204, 200}
	for i, r := range resp.OperationResults {
		if r.StatusCode != wantStatus[i] {
			t.Errorf("operation %d: status %d, want %d", i, r.StatusCode, wantStatus[i])
		}
		if r.RequestCharge <= 0 {
			t.Errorf("operation %d: request charge %v", i, r.RequestCharge)
		}
		if i != 4 && r.ETag == "" {
			t.Errorf("operation %d: no eTag", i)
		}
	}
	// The SDK asks for bodies when the batch reads.
	if got := decode(t, resp.OperationResults[3].ResourceBody); got["id"] != "new" {
		t.Errorf("read in the batch returned %v", got)
	}
	if got := decode(t, resp.OperationResults[5].ResourceBody); got["v"] != 11.0 {
		t.Errorf("patched item %v, want v 11", got)
	}
	if resp.SessionToken == "" {
		t.Error("no session token")
	}
	// Everything is stored, and the delete took effect.
	for id, want := range map[string]int{"new": 200, "up": 200, "r": 200, "x": 200, "d": 404} {
		_, err := c.ReadItem(e.ctx, p, id, nil)
		if got := map[bool]int{true: 200, false: status(err)}[err == nil]; got != want {
			t.Errorf("read %s after the batch: %d, want %d", id, got, want)
		}
	}

	// Without a read, and without asking, writes come back without bodies.
	b = c.NewTransactionalBatch(p)
	b.UpsertItem(item("up", "p", "v", 2), nil)
	resp, err = c.ExecuteTransactionalBatch(e.ctx, b, nil)
	if err != nil || !resp.Success {
		t.Fatalf("upsert batch: %v %+v", err, resp)
	}
	if r := resp.OperationResults[0]; r.StatusCode != 200 || r.ResourceBody != nil || r.ETag == "" {
		t.Errorf("minimal upsert result: status %d body %s etag %q", r.StatusCode, r.ResourceBody, r.ETag)
	}
	resp, err = c.ExecuteTransactionalBatch(e.ctx, b, &azcosmos.TransactionalBatchOptions{EnableContentResponseOnWrite: true})
	if err != nil || !resp.Success || decode(t, resp.OperationResults[0].ResourceBody)["v"] != 2.0 {
		t.Fatalf("upsert batch with content: %v %+v", err, resp)
	}
}

// TestTransactionalBatchAtomic: a batch with one failing operation
// commits nothing: no item, no index entry, no change feed record.
func TestTransactionalBatchAtomic(t *testing.T) {
	e := start(t)
	rc := newRest(t, e)
	c := avadContainer(t, e, rc, "atomic", 60, int32p(-1), "/pk")
	p := azcosmos.NewPartitionKeyString("p")
	if _, err := c.CreateItem(e.ctx, p, item("taken", "p"), nil); err != nil {
		t.Fatal(err)
	}
	latest, token := drainSDK(t, e, c, azcosmos.ChangeFeedOptions{}, 100)
	avadHead := rc.readFeed(t, c, "Full-Fidelity Feed", map[string]string{"If-None-Match": "*"})
	before := e.srv.Engine.StoredItems()

	cases := []struct {
		name   string
		build  func(b *azcosmos.TransactionalBatch)
		failAt int
		status int32
	}{
		{"conflict", func(b *azcosmos.TransactionalBatch) {
			b.CreateItem(item("a", "p"), nil)
			b.UpsertItem(item("b", "p", "ttl", 100), nil)
			b.CreateItem(item("taken", "p"), nil)
			b.CreateItem(item("c", "p"), nil)
		}, 2, 409},
		{"missing", func(b *azcosmos.TransactionalBatch) {
			b.CreateItem(item("a", "p"), nil)
			b.DeleteItem("nope", nil)
		}, 1, 404},
		{"precondition", func(b *azcosmos.TransactionalBatch) {
			stale := azcore.ETag(`"stale"`)
			b.CreateItem(item("a", "p"), nil)
			b.ReplaceItem("taken", item("taken", "p"), &azcosmos.TransactionalBatchItemOptions{IfMatchETag: &stale})
		}, 1, 412},
		{"own writes", func(b *azcosmos.TransactionalBatch) {
			b.DeleteItem("taken", nil)
			b.ReadItem("taken", nil)
		}, 1, 404},
		{"bad ttl", func(b *azcosmos.TransactionalBatch) {
			b.CreateItem(item("a", "p"), nil)
			b.CreateItem([]byte(`{"id":"b","pk":"p","ttl":0}`), nil)
		}, 1, 400},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := c.NewTransactionalBatch(p)
			tc.build(&b)
			resp, err := c.ExecuteTransactionalBatch(e.ctx, b, nil)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Success || resp.RawResponse.StatusCode != http.StatusMultiStatus {
				t.Fatalf("status %d success %v, want 207 and failure", resp.RawResponse.StatusCode, resp.Success)
			}
			for i, r := range resp.OperationResults {
				want := int32(http.StatusFailedDependency)
				if i == tc.failAt {
					want = tc.status
				}
				if r.StatusCode != want {
					t.Errorf("operation %d: status %d, want %d", i, r.StatusCode, want)
				}
			}
		})
	}
	if n := e.srv.Engine.StoredItems(); n != before {
		t.Fatalf("%d items stored after failed batches, want %d", n, before)
	}
	for _, id := range []string{"a", "b", "c"} {
		if _, err := c.ReadItem(e.ctx, p, id, nil); status(err) != http.StatusNotFound {
			t.Errorf("item %s of a failed batch: %v", id, err)
		}
	}
	if _, err := c.ReadItem(e.ctx, p, "taken", nil); err != nil {
		t.Errorf("the item a failed batch deleted is gone: %v", err)
	}
	if n := len(queryAll(t, e, c, "SELECT * FROM c", p, nil)); n != len(latest) {
		t.Errorf("query sees %d items, want %d", n, len(latest))
	}
	if more, _ := drainSDK(t, e, c, azcosmos.ChangeFeedOptions{Continuation: &token}, 100); len(more) != 0 {
		t.Errorf("latest-version feed shows %d changes of failed batches", len(more))
	}
	if recs, _ := rc.drainAVAD(t, c, avadHead.etag, nil); len(recs) != 0 {
		t.Errorf("all-versions feed shows %d records of failed batches", len(recs))
	}
	// A batch that succeeds afterwards gets the next LSN: nothing of the
	// failed ones used LSNs.
	b := c.NewTransactionalBatch(p)
	b.CreateItem(item("a", "p"), nil)
	if resp, err := c.ExecuteTransactionalBatch(e.ctx, b, nil); err != nil || !resp.Success {
		t.Fatalf("batch after failures: %v", err)
	}
	recs, _ := rc.drainAVAD(t, c, avadHead.etag, nil)
	if len(recs) != 1 || metadata(t, recs[0])["lsn"] != 2.0 {
		t.Fatalf("after failed batches: %v, want one create at LSN 2", recs)
	}
}

// TestBatchTTL: TTL validation and visibility apply per operation.
func TestBatchTTL(t *testing.T) {
	e := startWith(t, server.Config{Memory: true, DisablePurger: true})
	c := ttlContainer(t, e, "bttl", int32p(-1))
	if _, err := c.CreateItem(e.ctx, pk, []byte(`{"id":"e","pk":"p","ttl":5}`), nil); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(5 * time.Second)
	b := c.NewTransactionalBatch(pk)
	b.ReadItem("e", nil)
	resp, err := c.ExecuteTransactionalBatch(e.ctx, b, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Success || resp.OperationResults[0].StatusCode != 404 {
		t.Fatalf("read of an expired item in a batch: %+v, want 404 failing the batch", resp.OperationResults)
	}
	b = c.NewTransactionalBatch(pk)
	b.CreateItem([]byte(`{"id":"e","pk":"p","ttl":10}`), nil)
	b.ReadItem("e", nil)
	resp, err = c.ExecuteTransactionalBatch(e.ctx, b, nil)
	if err != nil || !resp.Success {
		t.Fatalf("create over an expired item: %v %+v", err, resp.OperationResults)
	}
	if got := decode(t, resp.OperationResults[1].ResourceBody); got["ttl"] != 10.0 {
		t.Fatalf("read back %v", got)
	}
}

// TestBatchLimits: more than 100 operations, or operations on another
// partition key, are refused as a whole.
func TestBatchLimits(t *testing.T) {
	e := start(t)
	c := e.container(t, pkProps("limits", "/pk"))
	p := azcosmos.NewPartitionKeyString("p")
	b := c.NewTransactionalBatch(p)
	for i := range 101 {
		b.CreateItem(item(fmt.Sprint(i), "p"), nil)
	}
	_, err := c.ExecuteTransactionalBatch(e.ctx, b, nil)
	wantStatus(t, err, http.StatusBadRequest, "101 operations")
	b = c.NewTransactionalBatch(p)
	b.CreateItem(item("a", "p"), nil)
	b.CreateItem(item("b", "other"), nil)
	_, err = c.ExecuteTransactionalBatch(e.ctx, b, nil)
	wantStatus(t, err, http.StatusBadRequest, "mixed partition keys")
	if _, err := c.ReadItem(e.ctx, p, "a", nil); status(err) != http.StatusNotFound {
		t.Fatalf("an operation of a refused batch took effect: %v", err)
	}
	b = c.NewTransactionalBatch(p)
	for i := range 100 {
		b.CreateItem(item(fmt.Sprint(i), "p"), nil)
	}
	if resp, err := c.ExecuteTransactionalBatch(e.ctx, b, nil); err != nil || !resp.Success {
		t.Fatalf("100 operations: %v", err)
	}
}

// TestBulk sends a bulk request as JS's items.bulk does: operations on
// several partition keys, independent results, continue-on-error.
func TestBulk(t *testing.T) {
	e := start(t)
	rc := newRest(t, e)
	c := e.container(t, pkProps("bulk", "/pk"))
	if _, err := c.CreateItem(e.ctx, azcosmos.NewPartitionKeyString("p2"), item("taken", "p2"), nil); err != nil {
		t.Fatal(err)
	}
	ops := []map[string]any{
		{"operationType": "Create", "partitionKey": `["p1"]`, "resourceBody": map[string]any{"id": "a", "pk": "p1"}},
		{"operationType": "Create", "partitionKey": `["p2"]`, "resourceBody": map[string]any{"id": "taken", "pk": "p2"}},
		{"operationType": "Upsert", "partitionKey": `["p3"]`, "resourceBody": map[string]any{"id": "b", "pk": "p3"}},
		{"operationType": "Read", "partitionKey": `["p2"]`, "id": "taken"},
	}
	send := func(continueOnError string) []map[string]any {
		res := rc.do(t, "POST", docsPath(c), map[string]string{
			"x-ms-cosmos-is-batch-request":        "true",
			"x-ms-cosmos-batch-atomic":            "false",
			"x-ms-cosmos-batch-continue-on-error": continueOnError,
			"x-ms-documentdb-partitionkeyrangeid": "0",
		}, mustJSON(t, ops))
		if res.status != http.StatusOK && res.status != http.StatusMultiStatus {
			t.Fatalf("bulk: %d %s", res.status, res.body)
		}
		var out []map[string]any
		if err := json.Unmarshal(res.body, &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	codes := func(rs []map[string]any) []float64 {
		var s []float64
		for _, r := range rs {
			s = append(s, r["statusCode"].(float64))
		}
		return s
	}
	got := codes(send("true"))
	if fmt.Sprint(got) != fmt.Sprint([]float64{201, 409, 201, 200}) {
		t.Fatalf("bulk results %v, want [201 409 201 200]", got)
	}
	for _, k := range [][2]string{{"p1", "a"}, {"p3", "b"}} {
		if _, err := c.ReadItem(e.ctx, azcosmos.NewPartitionKeyString(k[0]), k[1], nil); err != nil {
			t.Errorf("bulk item %s: %v", k[1], err)
		}
	}
	// Without continue-on-error the operations after a failure are not run.
	ops[0]["resourceBody"] = map[string]any{"id": "a2", "pk": "p1"}
	ops[2]["resourceBody"] = map[string]any{"id": "b2", "pk": "p3"}
	got = codes(send("false"))
	if fmt.Sprint(got) != fmt.Sprint([]float64{201, 409, 424, 424}) {
		t.Fatalf("bulk results %v, want [201 409 424 424]", got)
	}
	if _, err := c.ReadItem(e.ctx, azcosmos.NewPartitionKeyString("p1"), "a2", nil); err != nil {
		t.Errorf("the operation before the failure: %v", err)
	}
	if _, err := c.ReadItem(e.ctx, azcosmos.NewPartitionKeyString("p3"), "b2", nil); status(err) != http.StatusNotFound {
		t.Errorf("an operation after the failure ran: %v", err)
	}
}
