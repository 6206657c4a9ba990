package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ebbdb/ebb/internal/script"
)

// The figures of server-side JavaScript, each beside what it stands in
// for, through the engine (no HTTP):
//   - a call of an empty stored procedure beside a point read;
//   - 100 upserts by one stored procedure beside a transactional batch
//     of 100 upserts;
//   - a filter in a user-defined function beside the same filter in SQL,
//     over 10,000 items of one partition.
func BenchmarkScripts(b *testing.B) {
	ctx := context.Background()
	ref := ItemRef{DB: "db", Coll: "c", PK: `["p"]`, HasPK: true}
	setup := func(b *testing.B, items int) *Engine {
		e, _ := newTestEngine(b)
		mustCreate(b, e, "db", "c", containerBodyWith(""))
		for start := 0; start < items; start += MaxBatchOperations {
			var ops []string
			for i := start; i < min(items, start+MaxBatchOperations); i++ {
				ops = append(ops, fmt.Sprintf(`{"operationType":"Create","resourceBody":{"id":"d%06d","pk":"p","n":%d}}`, i, i))
			}
			if _, err := e.ExecuteBatch(ctx, ref, []byte("["+strings.Join(ops, ",")+"]"), BatchOptions{Atomic: true}); err != nil {
				b.Fatal(err)
			}
		}
		return e
	}

	b.Run("point-read", func(b *testing.B) {
		e := setup(b, 1)
		r := ref
		r.ID = "d000000"
		for b.Loop() {
			if _, err := e.ReadItem(ctx, r, ""); err != nil {
				b.Fatal(err)
			}
		}
	})
	// A procedure that never returns holds one core for its budget; the
	// point reads beside it must not wait for it (no lock is held).
	b.Run("point-read-beside-a-spinning-procedure", func(b *testing.B) {
		e, _ := openEngine(b, memStore(b), Options{ScriptBudgets: script.Budgets{Time: time.Hour}})
		mustCreate(b, e, "db", "c", containerBodyWith(""))
		createSproc(b, e, "spin", `function () { for (;;) {} }`)
		r := ref
		r.ID = "d"
		if _, err := e.WriteItem(ctx, r, Upsert, []byte(`{"id":"d","pk":"p"}`), ""); err != nil {
			b.Fatal(err)
		}
		spinCtx, stop := context.WithCancel(ctx)
		spun := make(chan struct{})
		go func() {
			defer close(spun)
			_, _ = e.ExecuteStoredProcedure(spinCtx, ProcedureCall{Ref: ItemRef{DB: "db", Coll: "c", ID: "spin", PK: `["p"]`, HasPK: true}})
		}()
		for b.Loop() {
			if _, err := e.ReadItem(ctx, r, ""); err != nil {
				b.Fatal(err)
			}
		}
		stop()
		<-spun
	})
	b.Run("empty-procedure", func(b *testing.B) {
		e := setup(b, 1)
		createSproc(b, e, "empty", `function () {}`)
		for b.Loop() {
			if _, err := execSproc(e, "empty", `["p"]`, `[]`); err != nil {
				b.Fatal(err)
			}
		}
	})

	const bulk = 100
	b.Run("batch-100-upserts", func(b *testing.B) {
		e := setup(b, 0)
		var ops []string
		for i := range bulk {
			ops = append(ops, fmt.Sprintf(`{"operationType":"Upsert","resourceBody":{"id":"u%03d","pk":"p","n":%d}}`, i, i))
		}
		body := []byte("[" + strings.Join(ops, ",") + "]")
		for b.Loop() {
			if res, err := e.ExecuteBatch(ctx, ref, body, BatchOptions{Atomic: true}); err != nil || res.Failed {
				b.Fatal(err, res.Failed)
			}
		}
	})
	b.Run("procedure-100-upserts", func(b *testing.B) {
		e := setup(b, 0)
		createSproc(b, e, "bulk", `function (n) {
			var c = getContext().getCollection();
			for (var i = 0; i < n; i++) {
				c.upsertDocument(c.getSelfLink(), {id: "u" + ("00" + i).slice(-3), pk: "p", n: i});
			}
		}`)
		args := fmt.Sprintf("[%d]", bulk)
		for b.Loop() {
			if _, err := execSproc(e, "bulk", `["p"]`, args); err != nil {
				b.Fatal(err)
			}
		}
	})

	const scanned = 10000
	filter := func(b *testing.B, e *Engine, text string) {
		for b.Loop() {
			if rows := allRows(b, e, ref, text); rows != scanned/10 {
				b.Fatalf("%d rows, want %d", rows, scanned/10)
			}
		}
	}
	b.Run("sql-filter-10000", func(b *testing.B) {
		e := setup(b, scanned)
		filter(b, e, "SELECT c.id FROM c WHERE c.n % 10 = 0")
	})
	b.Run("udf-filter-10000", func(b *testing.B) {
		e := setup(b, scanned)
		createUDF(b, e, "tenth", `function (n) { return n % 10 === 0; }`)
		filter(b, e, "SELECT c.id FROM c WHERE udf.tenth(c.n)")
	})
}

// allRows runs a query over ref's partition to its last page and counts
// the rows.
func allRows(b *testing.B, e *Engine, ref ItemRef, text string) int {
	return len(queryPages(b, e, QueryRequest{Ref: ref, Body: queryBody(text), MaxItemCount: -1}))
}
