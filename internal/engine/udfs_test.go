package engine

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ebbdb/ebb/internal/clock"
	"github.com/ebbdb/ebb/internal/clock/clocktest"
)

func createUDF(t testing.TB, e *Engine, id, src string) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"id": id, "body": src})
	if _, err := e.CreateScript(context.Background(), "db", "c", UserDefinedFunction, body); err != nil {
		t.Fatal(err)
	}
}

func queryRows(e *Engine, text string) ([]string, error) {
	body, _ := json.Marshal(map[string]string{"query": text})
	res, err := e.QueryItems(context.Background(), QueryRequest{Ref: ItemRef{DB: "db", Coll: "c", PK: `["p"]`, HasPK: true}, Body: body})
	if err != nil {
		return nil, err
	}
	defer res.Body.Release()
	var rows []string
	for _, r := range res.Rows() {
		rows = append(rows, string(r))
	}
	return rows, nil
}

func TestUserDefinedFunctions(t *testing.T) {
	e, _ := newTestEngine(t)
	mustCreate(t, e, "db", "c", containerBodyWith(""))
	for _, d := range []string{`{"id":"a","pk":"p","price":10,"tags":["x"]}`, `{"id":"b","pk":"p","price":200,"tags":[]}`, `{"id":"c","pk":"p","price":null}`} {
		write(t, e, "c", d)
	}
	createUDF(t, e, "tax", `function tax(price) { return price * 0.2; }`)
	createUDF(t, e, "describe", `function (doc) {
		return {id: doc.id, hasTags: doc.tags !== undefined, n: doc.tags ? doc.tags.length : null, skip: undefined, f: function () {}};
	}`)
	createUDF(t, e, "fail", `function (x) { if (x === "a") throw new Error("bad " + x); return x; }`)
	createUDF(t, e, "spin", `function () { for (;;) {} }`)

	for _, tc := range []struct{ query, want string }{
		{"SELECT c.id, udf.tax(c.price) AS tax FROM c WHERE udf.tax(c.price) > 5", `{"id":"b","tax":40}`},
		{"SELECT VALUE udf.describe(c) FROM c ORDER BY c.id", `{"id":"a","hasTags":true,"n":1};{"id":"b","hasTags":true,"n":0};{"id":"c","hasTags":false,"n":null}`},
		// undefined * 0.2 is NaN, which is not JSON: undefined, no row.
		{"SELECT VALUE udf.tax(c.missing) FROM c", ``},
	} {
		rows, err := queryRows(e, tc.query)
		if err != nil {
			t.Errorf("%s: %v", tc.query, err)
			continue
		}
		if got := strings.Join(rows, ";"); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.query, got, tc.want)
		}
	}
	for _, tc := range []struct{ query, want string }{
		{"SELECT VALUE udf.fail(c.id) FROM c", "Encountered exception while executing function. Exception = Error: bad a"},
		{"SELECT VALUE udf.nope(c.id) FROM c", "The query calls udf.nope, but the container has no user-defined function 'nope'."},
		// ORDER BY takes a document path, not a function's value.
		{"SELECT VALUE c.id FROM c ORDER BY udf.tax(c.price) DESC", "Unsupported ORDER BY clause. ORDER BY item expression could not be mapped to a document path."},
	} {
		if _, err := queryRows(e, tc.query); err == nil || !IsKind(err, KindBadRequest) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want 400 %q", tc.query, err, tc.want)
		}
	}
}

// TestUserDefinedFunctionBudget: a function that never returns fails the
// query with 408 once the script time budget has passed.
func TestUserDefinedFunctionBudget(t *testing.T) {
	real := clock.NewManual(time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC))
	e, _ := openEngine(t, memStore(t), Options{RealClock: real, ScriptBudgets: scriptBudgets(time.Second)})
	mustCreate(t, e, "db", "c", containerBodyWith(""))
	write(t, e, "c", `{"id":"a","pk":"p"}`)
	createUDF(t, e, "spin", `function () { for (;;) {} }`)
	err := clocktest.AdvanceUntilDone(t, real, 100*time.Millisecond, "the query stops", func() error {
		_, err := queryRows(e, "SELECT VALUE udf.spin() FROM c")
		return err
	})
	if !IsKind(err, KindRequestTimeout) || !strings.Contains(err.Error(), "user-defined function 'spin' ran past its time budget") {
		t.Fatalf("got %v, want 408", err)
	}
}
