package e2e

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/ebbdb/ebb/internal/server"
	"github.com/ebbdb/ebb/test/ttlmatrix"
)

// TestTTLMatrix runs the TTL contract's data file, testdata/ttl/matrix at
// the module root, through the Go SDK against a server whose purger is
// held, so that expired items stay stored. Values the SDK's types cannot
// carry (a defaultTtl of null, 1.5 or "10") go as signed REST requests.
func TestTTLMatrix(t *testing.T) {
	e := startWith(t, server.Config{Memory: true, DisablePurger: true})
	ttlmatrix.Run(t, &sdkMatrix{e: e, rest: newRest(t, e)})
}

type sdkMatrix struct {
	e    *env
	rest *restClient
}

type sdkContainer struct {
	m      *sdkMatrix
	db, id string
	c      *azcosmos.ContainerClient
}

// sdkProps returns the SDK's properties for p, false when the SDK cannot
// express its defaultTtl.
func sdkProps(id string, p ttlmatrix.Props) (azcosmos.ContainerProperties, bool) {
	props := pkProps(id, "/pk")
	if p.IndexingNone {
		props.IndexingPolicy = &azcosmos.IndexingPolicy{IndexingMode: azcosmos.IndexingModeNone}
	}
	if p.DefaultTTL == nil {
		return props, true
	}
	var def int32
	if err := json.Unmarshal(p.DefaultTTL, &def); err != nil || string(p.DefaultTTL) == "null" {
		return props, false
	}
	props.DefaultTimeToLive = &def
	return props, true
}

// sdkResult turns an SDK answer into a Result: the status and body, or
// the error's status and text.
func sdkResult(t testing.TB, resp *http.Response, body []byte, err error) ttlmatrix.Result {
	t.Helper()
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		payload, perr := runtime.Payload(re.RawResponse)
		if perr != nil {
			t.Fatal(perr)
		}
		return restResult(t, restResponse{status: re.StatusCode, body: payload})
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(body) == 0 {
		body = nil
	}
	return ttlmatrix.Result{Status: resp.StatusCode, Body: body}
}

func restResult(t testing.TB, r restResponse) ttlmatrix.Result {
	t.Helper()
	if r.status < 300 {
		return ttlmatrix.Result{Status: r.status, Body: r.body}
	}
	var envelope struct {
		Message string `json:"message"`
	}
	if err := json.Unmarshal(r.body, &envelope); err != nil {
		t.Fatalf("error body %s: %v", r.body, err)
	}
	return ttlmatrix.Result{Status: r.status, Message: ttlmatrix.ErrorText(envelope.Message)}
}

func (m *sdkMatrix) CreateContainer(t testing.TB, id string, p ttlmatrix.Props) (ttlmatrix.Container, ttlmatrix.Result) {
	db := m.e.database(t, "db-"+id)
	c, err := db.NewContainer(id)
	if err != nil {
		t.Fatal(err)
	}
	sc := &sdkContainer{m: m, db: "db-" + id, id: id, c: c}
	props, ok := sdkProps(id, p)
	if !ok {
		return sc, restResult(t, m.rest.do(t, "POST", "/dbs/"+url.PathEscape(sc.db)+"/colls", nil, p.Body(id)))
	}
	resp, err := db.CreateContainer(m.e.ctx, props, nil)
	return sc, sdkResult(t, resp.RawResponse, nil, err)
}

func (m *sdkMatrix) Advance(t testing.TB, seconds int64) {
	m.e.clock.Advance(time.Duration(seconds) * time.Second)
}

func (m *sdkMatrix) Now(t testing.TB) int64 { return m.e.clock.Now().Unix() }

func (c *sdkContainer) path() string {
	return "/dbs/" + url.PathEscape(c.db) + "/colls/" + url.PathEscape(c.id)
}

func (c *sdkContainer) Replace(t testing.TB, p ttlmatrix.Props) ttlmatrix.Result {
	props, ok := sdkProps(c.id, p)
	if !ok {
		return restResult(t, c.m.rest.do(t, "PUT", c.path(), nil, p.Body(c.id)))
	}
	resp, err := c.c.Replace(c.m.e.ctx, props, nil)
	return sdkResult(t, resp.RawResponse, nil, err)
}

func (c *sdkContainer) DefaultTTL(t testing.TB) json.RawMessage {
	resp, err := c.c.Read(c.m.e.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := resp.ContainerProperties.DefaultTimeToLive; d != nil {
		return mustJSON(t, *d)
	}
	return nil
}

func (c *sdkContainer) options(ifMatch string) *azcosmos.ItemOptions {
	o := &azcosmos.ItemOptions{EnableContentResponseOnWrite: true}
	if ifMatch != "" {
		etag := azcore.ETag(ifMatch)
		o.IfMatchEtag = &etag
	}
	return o
}

func (c *sdkContainer) Write(t testing.TB, kind ttlmatrix.WriteKind, id string, body []byte, ifMatch string) ttlmatrix.Result {
	var resp azcosmos.ItemResponse
	var err error
	switch kind {
	case ttlmatrix.Create:
		resp, err = c.c.CreateItem(c.m.e.ctx, pk, body, c.options(ifMatch))
	case ttlmatrix.Upsert:
		resp, err = c.c.UpsertItem(c.m.e.ctx, pk, body, c.options(ifMatch))
	case ttlmatrix.Replace:
		resp, err = c.c.ReplaceItem(c.m.e.ctx, pk, id, body, c.options(ifMatch))
	}
	return sdkResult(t, resp.RawResponse, resp.Value, err)
}

func (c *sdkContainer) Patch(t testing.TB, id, path string, value json.RawMessage, ifMatch string) ttlmatrix.Result {
	ops := azcosmos.PatchOperations{}
	ops.AppendSet(path, value)
	resp, err := c.c.PatchItem(c.m.e.ctx, pk, id, ops, c.options(ifMatch))
	return sdkResult(t, resp.RawResponse, resp.Value, err)
}

func (c *sdkContainer) Delete(t testing.TB, id, ifMatch string) ttlmatrix.Result {
	resp, err := c.c.DeleteItem(c.m.e.ctx, pk, id, c.options(ifMatch))
	return sdkResult(t, resp.RawResponse, nil, err)
}

func (c *sdkContainer) Read(t testing.TB, id string) ttlmatrix.Result {
	resp, err := c.c.ReadItem(c.m.e.ctx, pk, id, nil)
	return sdkResult(t, resp.RawResponse, resp.Value, err)
}

func (c *sdkContainer) Query(t testing.TB, sql string) []json.RawMessage {
	var rows []json.RawMessage
	for _, row := range queryAll(t, c.m.e, c.c, sql, azcosmos.NewPartitionKey(), &azcosmos.QueryOptions{PageSizeHint: 2}) {
		rows = append(rows, row)
	}
	return rows
}

// ReadFeed reads GET …/docs page by page: the SDK has no read feed.
func (c *sdkContainer) ReadFeed(t testing.TB) []json.RawMessage {
	hdr := map[string]string{"x-ms-documentdb-query-enablecrosspartition": "true", "x-ms-max-item-count": "2"}
	var rows []json.RawMessage
	for {
		r := c.m.rest.do(t, "GET", c.path()+"/docs", hdr, nil)
		if r.status != http.StatusOK {
			t.Fatalf("read feed: %d %s", r.status, r.body)
		}
		var page struct {
			Documents []json.RawMessage
		}
		if err := json.Unmarshal(r.body, &page); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, page.Documents...)
		next := r.header.Get("x-ms-continuation")
		if next == "" {
			return rows
		}
		hdr["x-ms-continuation"] = next
	}
}
