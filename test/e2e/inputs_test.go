package e2e

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
)

// wantBadRequest fails t unless err is the SDK's 400 with the Cosmos
// error body: code BadRequest and a message that contains want.
func wantBadRequest(t *testing.T, err error, what, want string) {
	t.Helper()
	var re *azcore.ResponseError
	if !errors.As(err, &re) || re.StatusCode != http.StatusBadRequest {
		t.Fatalf("%s: got %v, want 400", what, err)
	}
	for _, s := range []string{`"code": "BadRequest"`, want} {
		if !strings.Contains(err.Error(), s) {
			t.Fatalf("%s: the error does not say %q:\n%v", what, s, err)
		}
	}
}

// TestDuplicateNamesAreRefused sends documents that name a property twice
// through the Go SDK: each write is a 400 that names the property, and
// nothing is stored under either value.
func TestDuplicateNamesAreRefused(t *testing.T) {
	e := start(t)
	c := e.container(t, pkProps("dups", "/pk"))
	pk := azcosmos.NewPartitionKeyString("p")

	_, err := c.CreateItem(e.ctx, pk, []byte(`{"id":"dup1","id":"dup2","pk":"p"}`), nil)
	wantBadRequest(t, err, "create with two ids", `Duplicate property name 'id' in the top-level object`)
	_, err = c.UpsertItem(e.ctx, pk, []byte(`{"id":"dup1","pk":"p","\u0070k":"q"}`), nil)
	wantBadRequest(t, err, "upsert with an escaped second pk", `Duplicate property name 'pk'`)
	_, err = c.CreateItem(e.ctx, pk, []byte(`{"id":"dup1","pk":"p","a":{"b":[{"c":1,"c":2}]}}`), nil)
	wantBadRequest(t, err, "create with a nested repeat", `Duplicate property name 'c' in the object at /a/b/0`)

	if _, err := c.CreateItem(e.ctx, pk, []byte(`{"id":"x","pk":"p"}`), nil); err != nil {
		t.Fatal(err)
	}
	_, err = c.ReplaceItem(e.ctx, pk, "x", []byte(`{"id":"x","pk":"p","ttl":5,"ttl":-1}`), nil)
	wantBadRequest(t, err, "replace with two ttls", `Duplicate property name 'ttl'`)
	ops := azcosmos.PatchOperations{}
	ops.AppendSet("/a", json.RawMessage(`{"k":1,"k":2}`))
	_, err = c.PatchItem(e.ctx, pk, "x", ops, nil)
	wantBadRequest(t, err, "patch set of an object with a repeated name", `Duplicate property name 'k' in the object at /operations/0/value`)

	b := c.NewTransactionalBatch(pk)
	b.CreateItem([]byte(`{"id":"b1","pk":"p"}`), nil)
	b.UpsertItem([]byte(`{"id":"dup1","id":"dup2","pk":"p"}`), nil)
	resp, err := c.ExecuteTransactionalBatch(e.ctx, b, nil)
	if err != nil || resp.Success {
		t.Fatalf("batch with a repeated id: %v, success %v; want a failed batch", err, resp.Success)
	}
	if got := resp.OperationResults[1].StatusCode; got != http.StatusBadRequest {
		t.Fatalf("batch operation with a repeated id: status %d, want 400", got)
	}

	for _, id := range []string{"dup1", "dup2", "b1"} {
		_, err := c.ReadItem(e.ctx, pk, id, nil)
		wantStatus(t, err, http.StatusNotFound, "read "+id)
	}
	pager := c.NewQueryItemsPager("SELECT VALUE c.id FROM c", pk, nil)
	var ids []string
	for pager.More() {
		page, err := pager.NextPage(e.ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Items {
			ids = append(ids, string(it))
		}
	}
	if strings.Join(ids, ",") != `"x"` {
		t.Fatalf("the container holds %v, want only x", ids)
	}
}

// TestPatchIncrIsExact increments 64-bit integers through the Go SDK,
// whose AppendIncrement sends an int64: sums beyond 2^53 are exact, and an
// overflow is a 400 that leaves the item as it was.
func TestPatchIncrIsExact(t *testing.T) {
	e := start(t)
	c := e.container(t, pkProps("incr", "/pk"))
	pk := azcosmos.NewPartitionKeyString("p")
	if _, err := c.CreateItem(e.ctx, pk, []byte(`{"id":"n","pk":"p","max":9223372036854775807,"min":-9223372036854775808,"big":9007199254740993}`), nil); err != nil {
		t.Fatal(err)
	}

	up := azcosmos.PatchOperations{}
	up.AppendIncrement("/max", 1)
	_, err := c.PatchItem(e.ctx, pk, "n", up, nil)
	wantBadRequest(t, err, "incr of the largest int64", "9223372036854775807 + 1 is outside the range of a 64-bit integer")
	down := azcosmos.PatchOperations{}
	down.AppendIncrement("/min", -1)
	_, err = c.PatchItem(e.ctx, pk, "n", down, nil)
	wantBadRequest(t, err, "incr of the smallest int64", "-9223372036854775808 + -1 is outside the range of a 64-bit integer")

	ok := azcosmos.PatchOperations{}
	ok.AppendIncrement("/big", 2)
	ok.AppendIncrement("/max", -1)
	if _, err := c.PatchItem(e.ctx, pk, "n", ok, nil); err != nil {
		t.Fatal(err)
	}
	read, err := c.ReadItem(e.ctx, pk, "n", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"big":9007199254740995`, `"max":9223372036854775806`, `"min":-9223372036854775808`} {
		if !strings.Contains(string(read.Value), want) {
			t.Errorf("item %s lacks %s", read.Value, want)
		}
	}
}
