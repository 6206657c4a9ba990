package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/ebbdb/ebb/test/ebbproc"
)

func contains(s, sub string) bool { return strings.Contains(s, sub) }

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func decode(t testing.TB, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return m
}

func TestItemCRUD(t *testing.T) {
	e := start(t)
	c := e.container(t, pkProps("items", "/pk"))
	pk := azcosmos.NewPartitionKeyString("p1")
	item := map[string]any{"id": "1", "pk": "p1", "count": 3, "tags": []string{"a"}}

	created, err := c.CreateItem(e.ctx, pk, mustJSON(t, item), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(created.Value) != 0 {
		t.Fatalf("create without content response returned a body: %s", created.Value)
	}
	if created.SessionToken == nil || *created.SessionToken == "" {
		t.Fatal("create returned no session token")
	}
	if created.RequestCharge <= 0 || created.ETag == "" {
		t.Fatalf("charge %v etag %q", created.RequestCharge, created.ETag)
	}
	_, err = c.CreateItem(e.ctx, pk, mustJSON(t, item), nil)
	wantStatus(t, err, http.StatusConflict, "duplicate create")

	read, err := c.ReadItem(e.ctx, pk, "1", nil)
	if err != nil {
		t.Fatal(err)
	}
	got := decode(t, read.Value)
	for _, k := range []string{"_rid", "_self", "_etag", "_ts", "_attachments"} {
		if _, ok := got[k]; !ok {
			t.Errorf("read item lacks %s: %s", k, read.Value)
		}
	}
	if got["_etag"] != string(read.ETag) {
		t.Errorf("_etag %v != etag header %v", got["_etag"], read.ETag)
	}
	if got["count"] != float64(3) {
		t.Errorf("count = %v", got["count"])
	}

	item["count"] = 4
	rep, err := c.ReplaceItem(e.ctx, pk, "1", mustJSON(t, item), &azcosmos.ItemOptions{EnableContentResponseOnWrite: true})
	if err != nil {
		t.Fatal(err)
	}
	rgot := decode(t, rep.Value)
	if rgot["count"] != float64(4) || rgot["_rid"] != got["_rid"] {
		t.Fatalf("replace: %s (rid before %v)", rep.Value, got["_rid"])
	}
	// A stale etag loses.
	stale := read.ETag
	_, err = c.ReplaceItem(e.ctx, pk, "1", mustJSON(t, item), &azcosmos.ItemOptions{IfMatchEtag: &stale})
	wantStatus(t, err, http.StatusPreconditionFailed, "replace with stale etag")
	_, err = c.DeleteItem(e.ctx, pk, "1", &azcosmos.ItemOptions{IfMatchEtag: &stale})
	wantStatus(t, err, http.StatusPreconditionFailed, "delete with stale etag")

	// Upsert: 201 when it creates, 200 when it replaces, _rid stable.
	up, err := c.UpsertItem(e.ctx, pk, mustJSON(t, map[string]any{"id": "2", "pk": "p1"}), &azcosmos.ItemOptions{EnableContentResponseOnWrite: true})
	if err != nil {
		t.Fatal(err)
	}
	rid := decode(t, up.Value)["_rid"]
	up, err = c.UpsertItem(e.ctx, pk, mustJSON(t, map[string]any{"id": "2", "pk": "p1", "v": 2}), &azcosmos.ItemOptions{EnableContentResponseOnWrite: true})
	if err != nil {
		t.Fatal(err)
	}
	if decode(t, up.Value)["_rid"] != rid {
		t.Fatalf("upsert changed _rid")
	}

	// Patch.
	ops := azcosmos.PatchOperations{}
	ops.AppendSet("/name", "widget")
	ops.AppendAdd("/tags/-", "b")
	ops.AppendReplace("/count", 10)
	ops.AppendIncrement("/count", 1)
	ops.AppendRemove("/tags/0")
	patched, err := c.PatchItem(e.ctx, pk, "1", ops, &azcosmos.ItemOptions{EnableContentResponseOnWrite: true})
	if err != nil {
		t.Fatal(err)
	}
	pg := decode(t, patched.Value)
	if pg["name"] != "widget" || pg["count"] != float64(11) || fmt.Sprint(pg["tags"]) != "[b]" {
		t.Fatalf("patched: %s", patched.Value)
	}
	bad := azcosmos.PatchOperations{}
	bad.AppendRemove("/missing")
	_, err = c.PatchItem(e.ctx, pk, "1", bad, nil)
	wantStatus(t, err, http.StatusBadRequest, "remove of a missing path")
	cond := azcosmos.PatchOperations{}
	cond.SetCondition("from c where c.count = 0")
	cond.AppendSet("/x", 1)
	_, err = c.PatchItem(e.ctx, pk, "1", cond, nil)
	wantStatus(t, err, http.StatusPreconditionFailed, "patch with a false condition")

	if _, err := c.DeleteItem(e.ctx, pk, "1", nil); err != nil {
		t.Fatal(err)
	}
	_, err = c.ReadItem(e.ctx, pk, "1", nil)
	wantStatus(t, err, http.StatusNotFound, "read deleted")
	_, err = c.DeleteItem(e.ctx, pk, "1", nil)
	wantStatus(t, err, http.StatusNotFound, "delete deleted")
}

func TestItemValidation(t *testing.T) {
	e := start(t)
	c := e.container(t, pkProps("valid", "/pk"))
	pk := azcosmos.NewPartitionKeyString("p")
	for _, tc := range []struct {
		name string
		body string
		want int
	}{
		{"missing id", `{"pk":"p"}`, 400},
		{"numeric id", `{"id":1,"pk":"p"}`, 400},
		{"empty id", `{"id":"","pk":"p"}`, 400},
		{"not json", `{"id":"x",`, 400},
		{"array body", `[1,2]`, 400},
		{"pk mismatch", `{"id":"x","pk":"other"}`, 400},
		{"pk is an object", `{"id":"x","pk":{"a":1}}`, 400},
		{"too large", `{"id":"big","pk":"p","blob":"` + strings.Repeat("x", 2<<20) + `"}`, 413},
	} {
		_, err := c.CreateItem(e.ctx, pk, []byte(tc.body), nil)
		wantStatus(t, err, tc.want, tc.name)
	}
}

func TestPartitionKeyShapes(t *testing.T) {
	e := start(t)
	c := e.container(t, pkProps("shapes", "/k"))
	cases := []struct {
		pk   azcosmos.PartitionKey
		body string
	}{
		{azcosmos.NewPartitionKeyString("s"), `{"id":"a","k":"s"}`},
		{azcosmos.NewPartitionKeyNumber(5), `{"id":"a","k":5.0}`},
		{azcosmos.NewPartitionKeyBool(true), `{"id":"a","k":true}`},
		{azcosmos.NullPartitionKey, `{"id":"a","k":null}`},
	}
	for _, tc := range cases {
		if _, err := c.CreateItem(e.ctx, tc.pk, []byte(tc.body), nil); err != nil {
			t.Fatalf("create %s: %v", tc.body, err)
		}
	}
	// The same id in four logical partitions is four items.
	for _, tc := range cases {
		if _, err := c.ReadItem(e.ctx, tc.pk, "a", nil); err != nil {
			t.Fatalf("read %s: %v", tc.body, err)
		}
	}
	if _, err := c.ReadItem(e.ctx, azcosmos.NewPartitionKeyString("t"), "a", nil); status(err) != 404 {
		t.Fatalf("read in another partition: %v", err)
	}
}

func TestHierarchicalPartitionKey(t *testing.T) {
	e := start(t)
	c := e.container(t, pkProps("hpk", "/tenant", "/user", "/session"))
	for i, body := range []string{
		`{"id":"1","tenant":"t1","user":"u1","session":"s1"}`,
		`{"id":"2","tenant":"t1","user":"u1","session":"s2"}`,
		`{"id":"3","tenant":"t1","user":"u2","session":"s1"}`,
		`{"id":"4","tenant":"t2","user":"u1","session":"s1"}`,
	} {
		m := decode(t, []byte(body))
		pk := azcosmos.NewPartitionKeyString(m["tenant"].(string)).AppendString(m["user"].(string)).AppendString(m["session"].(string))
		if _, err := c.CreateItem(e.ctx, pk, []byte(body), nil); err != nil {
			t.Fatalf("create %d: %v", i, err)
		}
	}
	full := azcosmos.NewPartitionKeyString("t1").AppendString("u1").AppendString("s2")
	if _, err := c.ReadItem(e.ctx, full, "2", nil); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		pk   azcosmos.PartitionKey
		want int
	}{
		{azcosmos.NewPartitionKeyString("t1"), 3},
		{azcosmos.NewPartitionKeyString("t1").AppendString("u1"), 2},
		{full, 1},
	} {
		if got := len(queryAll(t, e, c, "SELECT * FROM c", tc.pk, nil)); got != tc.want {
			t.Errorf("query under %v: %d items, want %d", tc.pk, got, tc.want)
		}
	}
}

// queryAll drains a query and returns the raw rows.
func queryAll(t testing.TB, e *env, c *azcosmos.ContainerClient, q string, pk azcosmos.PartitionKey, opts *azcosmos.QueryOptions) [][]byte {
	t.Helper()
	pager := c.NewQueryItemsPager(q, pk, opts)
	var out [][]byte
	for pager.More() {
		page, err := pager.NextPage(e.planCtx)
		if err != nil {
			t.Fatalf("query %q: %v", q, err)
		}
		out = append(out, page.Items...)
	}
	return out
}

func TestReadFeedPaging(t *testing.T) {
	e := start(t)
	c := e.container(t, pkProps("paging", "/pk"))
	for i := 0; i < 20; i++ {
		body := fmt.Sprintf(`{"id":"%d","pk":"p%d"}`, i, i%2)
		if _, err := c.CreateItem(e.ctx, azcosmos.NewPartitionKeyString(fmt.Sprintf("p%d", i%2)), []byte(body), nil); err != nil {
			t.Fatal(err)
		}
	}
	pager := c.NewQueryItemsPager("select * from c", azcosmos.NewPartitionKey(), &azcosmos.QueryOptions{PageSizeHint: 5})
	pages, n := 0, 0
	for pager.More() {
		page, err := pager.NextPage(e.ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Items) > 5 {
			t.Fatalf("page of %d items, max 5", len(page.Items))
		}
		if page.QueryMetrics == nil || page.ActivityID == "" || page.RequestCharge <= 0 {
			t.Fatalf("page lacks metrics/activity/charge: %+v", page.Response)
		}
		pages++
		n += len(page.Items)
	}
	if n != 20 || pages != 5 {
		t.Fatalf("cross-partition drain: %d items in %d pages, want 20 in 5", n, pages)
	}
}

// TestConcurrentIfMatch has many writers increment one counter with
// optimistic concurrency: every successful replace must count.
func TestConcurrentIfMatch(t *testing.T) {
	e := start(t)
	c := e.container(t, pkProps("counter", "/pk"))
	pk := azcosmos.NewPartitionKeyString("p")
	if _, err := c.CreateItem(e.ctx, pk, []byte(`{"id":"n","pk":"p","n":0}`), nil); err != nil {
		t.Fatal(err)
	}
	const workers, each = 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for done := 0; done < each; {
				won, err := ebbproc.IncrementIfMatch(e.ctx, c, "p", "n")
				if err != nil {
					errs <- err
					return
				}
				if won {
					done++
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	r, err := c.ReadItem(e.ctx, pk, "n", nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := decode(t, r.Value)["n"]; n != float64(workers*each) {
		t.Fatalf("counter = %v, want %d: an update was lost", n, workers*each)
	}
}

func TestBadSignature(t *testing.T) {
	e := start(t)
	cred, _ := azcosmos.NewKeyCredential("bm90IHRoZSBrZXk=")
	client, err := azcosmos.NewClientWithKey(e.srv.URL, cred, &azcosmos.ClientOptions{ClientOptions: azcore.ClientOptions{Transport: insecureTransport()}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = client.CreateDatabase(e.ctx, azcosmos.DatabaseProperties{ID: "x"}, nil)
	wantStatus(t, err, http.StatusUnauthorized, "wrong key")
}

// TestItemIDEncoding is the SDK's compute-gateway id test: ids with
// characters that need escaping work for every point operation.
func TestItemIDEncoding(t *testing.T) {
	e := start(t)
	c := e.container(t, pkProps("ids", "/pk"))
	p := azcosmos.NewPartitionKeyString("p")
	for _, id := range []string{
		"plain", "with space", "trailing space ", "slash/inside", `back\slash`, "hash#tag",
		"question?mark", "percent%20literal", "percent%E9%B1%80", "ünïcödé", "鱀", "tab\there", "line\nfeed", "cr\rhere",
	} {
		body := mustJSON(t, map[string]any{"id": id, "pk": "p"})
		if _, err := c.CreateItem(e.ctx, p, body, nil); err != nil {
			t.Fatalf("create %q: %v", id, err)
		}
		r, err := c.ReadItem(e.ctx, p, id, nil)
		if err != nil || decode(t, r.Value)["id"] != id {
			t.Fatalf("read %q: %v", id, err)
		}
		if _, err := c.ReplaceItem(e.ctx, p, id, body, nil); err != nil {
			t.Fatalf("replace %q: %v", id, err)
		}
		if _, err := c.DeleteItem(e.ctx, p, id, nil); err != nil {
			t.Fatalf("delete %q: %v", id, err)
		}
	}
}
