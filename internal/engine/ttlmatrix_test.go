package engine

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/ebbdb/ebb/internal/clock"
	"github.com/ebbdb/ebb/test/ttlmatrix"
)

// TestTTLMatrix runs the TTL contract's data file, testdata/ttl/matrix at
// the module root, through the engine's API, with the purger held so
// that expired items stay stored, and then checks the engine's
// keyspaces agree.
func TestTTLMatrix(t *testing.T) {
	e, clk := openEngine(t, memStore(t), Options{DisablePurger: true})
	ttlmatrix.Run(t, &matrixEngine{e: e, clk: clk})
	checkConsistent(t, e)
}

type matrixEngine struct {
	e   *Engine
	clk *clock.Manual
}

type matrixContainer struct {
	e      *Engine
	db, id string
}

var matrixCtx = context.Background()

// matrixResult turns an engine answer into the status the gateway would send.
func matrixResult(t testing.TB, r Resource, err error, ok int) ttlmatrix.Result {
	t.Helper()
	if err == nil {
		return ttlmatrix.Result{Status: ok, Body: r.Body}
	}
	var ee *Error
	if !asError(err, &ee) {
		t.Fatal(err)
	}
	status := map[Kind]int{KindBadRequest: 400, KindNotFound: 404, KindConflict: 409, KindPreconditionFailed: 412}[ee.Kind]
	if status == 0 {
		t.Fatalf("unexpected error: %v", err)
	}
	return ttlmatrix.Result{Status: status, Message: ee.Message}
}

func (m *matrixEngine) CreateContainer(t testing.TB, id string, p ttlmatrix.Props) (ttlmatrix.Container, ttlmatrix.Result) {
	db := "db-" + id
	if _, err := m.e.CreateDatabase(matrixCtx, []byte(`{"id":"`+db+`"}`), ThroughputHeaders{}); err != nil {
		t.Fatal(err)
	}
	r, err := m.e.CreateContainer(matrixCtx, db, p.Body(id), ThroughputHeaders{})
	return &matrixContainer{e: m.e, db: db, id: id}, matrixResult(t, r, err, 201)
}

func (m *matrixEngine) Advance(t testing.TB, seconds int64) {
	m.clk.Advance(time.Duration(seconds) * time.Second)
}

func (m *matrixEngine) Now(t testing.TB) int64 { return m.clk.Now().Unix() }

func (c *matrixContainer) ref(id string) ItemRef {
	return ItemRef{DB: c.db, Coll: c.id, ID: id, PK: `["p"]`, HasPK: true}
}

func (c *matrixContainer) Replace(t testing.TB, p ttlmatrix.Props) ttlmatrix.Result {
	r, err := c.e.ReplaceContainer(matrixCtx, c.db, c.id, p.Body(c.id), "")
	return matrixResult(t, r, err, 200)
}

func (c *matrixContainer) DefaultTTL(t testing.TB) json.RawMessage {
	r, err := c.e.ReadContainer(matrixCtx, c.db, c.id, false)
	if err != nil {
		t.Fatal(err)
	}
	var props struct {
		DefaultTTL json.RawMessage `json:"defaultTtl"`
	}
	if err := json.Unmarshal(r.Body, &props); err != nil {
		t.Fatal(err)
	}
	return props.DefaultTTL
}

func (c *matrixContainer) Write(t testing.TB, kind ttlmatrix.WriteKind, id string, body []byte, ifMatch string) ttlmatrix.Result {
	wk, ok := map[ttlmatrix.WriteKind]WriteKind{ttlmatrix.Create: Create, ttlmatrix.Upsert: Upsert, ttlmatrix.Replace: Replace}[kind]
	if !ok {
		t.Fatalf("write kind %q", kind)
	}
	r, err := c.e.WriteItem(matrixCtx, c.ref(id), wk, body, ifMatch)
	status := 200
	if kind == ttlmatrix.Create || r.Created {
		status = 201
	}
	return matrixResult(t, r, err, status)
}

func (c *matrixContainer) Patch(t testing.TB, id, path string, value json.RawMessage, ifMatch string) ttlmatrix.Result {
	body := `{"operations":[{"op":"set","path":"` + path + `","value":` + string(value) + `}]}`
	r, err := c.e.PatchItem(matrixCtx, c.ref(id), []byte(body), ifMatch)
	return matrixResult(t, r, err, 200)
}

func (c *matrixContainer) Delete(t testing.TB, id, ifMatch string) ttlmatrix.Result {
	r, err := c.e.DeleteItem(matrixCtx, c.ref(id), ifMatch)
	return matrixResult(t, r, err, 204)
}

func (c *matrixContainer) Read(t testing.TB, id string) ttlmatrix.Result {
	r, err := c.e.ReadItem(matrixCtx, c.ref(id), "")
	return matrixResult(t, r, err, 200)
}

func (c *matrixContainer) Query(t testing.TB, sql string) []json.RawMessage {
	return c.pages(t, queryBody(sql), c.e.QueryItems)
}

func (c *matrixContainer) ReadFeed(t testing.TB) []json.RawMessage {
	return c.pages(t, nil, c.e.ReadFeed)
}

func (c *matrixContainer) pages(t testing.TB, body []byte, page func(context.Context, QueryRequest) (QueryResult, error)) []json.RawMessage {
	req := QueryRequest{Ref: ItemRef{DB: c.db, Coll: c.id}, Body: body, MaxItemCount: 2, CrossPartition: true, RangeID: "0"}
	var rows []json.RawMessage
	for {
		res, err := page(matrixCtx, req)
		if err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		for _, r := range res.Rows() {
			rows = append(rows, r)
		}
		if res.Continuation == "" {
			return rows
		}
		req.Continuation = res.Continuation
	}
}
