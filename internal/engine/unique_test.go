package engine

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/ebbdb/ebb/internal/clock"
)

// TestUniqueKeys runs testdata/unique: unique keys through every write
// kind, with TTL and the purger. Each command prints the status a client
// would get (and the message of an error).
//
//	container [<body>]               (re)creates container "u" from the input body
//	replace-container                replaces it with the input body
//	create|upsert pk=<p>             writes the input document
//	replace|patch|delete pk=<p> id=<id>  (input: the document, or the patch body)
//	batch pk=<p> [bulk]              a transactional batch (or a bulk request) of the input operations
//	advance seconds=<n>              moves the clock
//	stored n=<n>                     waits for the purger to leave n items stored
//	count                            counts the visible items
func TestUniqueKeys(t *testing.T) {
	ctx := context.Background()
	var e *Engine
	var clk *clock.Manual
	status := func(err error, ok int) string {
		if err == nil {
			return fmt.Sprint(ok)
		}
		var ee *Error
		if !asError(err, &ee) {
			t.Fatal(err)
		}
		code := map[Kind]int{KindBadRequest: 400, KindNotFound: 404, KindConflict: 409, KindPreconditionFailed: 412}[ee.Kind]
		return fmt.Sprintf("%d %s", code, ee.Message)
	}
	datadriven.RunTest(t, "testdata/unique", func(t *testing.T, d *datadriven.TestData) string {
		ref := ItemRef{DB: "db", Coll: "u"}
		if d.HasArg("pk") {
			var pk string
			d.ScanArgs(t, "pk", &pk)
			ref.PK, ref.HasPK = `["`+pk+`"]`, true
		}
		if d.HasArg("id") {
			d.ScanArgs(t, "id", &ref.ID)
		}
		body := []byte(strings.TrimSpace(d.Input))
		switch d.Cmd {
		case "container":
			e, clk = newTestEngine(t)
			if _, err := e.CreateDatabase(ctx, []byte(`{"id":"db"}`), ThroughputHeaders{}); err != nil {
				t.Fatal(err)
			}
			_, err := e.CreateContainer(ctx, "db", body, ThroughputHeaders{})
			return status(err, 201) + "\n"
		case "replace-container":
			_, err := e.ReplaceContainer(ctx, "db", "u", body, "")
			return status(err, 200) + "\n"
		case "create":
			_, err := e.WriteItem(ctx, ref, Create, body, "")
			return status(err, 201) + "\n"
		case "upsert":
			_, err := e.WriteItem(ctx, ref, Upsert, body, "")
			return status(err, 200) + "\n"
		case "replace":
			_, err := e.WriteItem(ctx, ref, Replace, body, "")
			return status(err, 200) + "\n"
		case "patch":
			_, err := e.PatchItem(ctx, ref, body, "")
			return status(err, 200) + "\n"
		case "delete":
			_, err := e.DeleteItem(ctx, ref, "")
			return status(err, 204) + "\n"
		case "batch":
			bulk := d.HasArg("bulk")
			res, err := e.ExecuteBatch(ctx, ref, body, BatchOptions{Atomic: !bulk, ContinueOnError: bulk})
			if err != nil {
				t.Fatal(err)
			}
			var out strings.Builder
			for _, op := range res.Ops {
				switch {
				case op.Skipped:
					out.WriteString("424\n")
				default:
					out.WriteString(status(op.Err, 200) + "\n")
				}
			}
			return out.String()
		case "advance":
			var s int
			d.ScanArgs(t, "seconds", &s)
			clk.Advance(time.Duration(s) * time.Second)
		case "stored":
			var n int
			d.ScanArgs(t, "n", &n)
			waitUntil(t, fmt.Sprintf("%d items stored", n), func() bool { return e.StoredItems() == n })
		case "count":
			res, err := e.QueryItems(ctx, QueryRequest{Ref: ItemRef{DB: "db", Coll: "u"}, Body: queryBody("SELECT VALUE COUNT(1) FROM c"), CrossPartition: true, RangeID: "0"})
			if err != nil {
				t.Fatal(err)
			}
			return string(res.Rows()[0]) + "\n"
		default:
			d.Fatalf(t, "unknown command %q", d.Cmd)
		}
		checkConsistent(t, e)
		return ""
	})
}

// BenchmarkCreateUniqueKeys is the cost of unique keys on a create of a
// 1 KB item: none, and two (one path, and two paths).
//
//	go test -bench CreateUniqueKeys -benchmem -run '^$' ./internal/engine/
func BenchmarkCreateUniqueKeys(b *testing.B) {
	pad := strings.Repeat("x", 900)
	for _, tc := range []struct{ name, policy string }{
		{"none", ""},
		{"two", `,"uniqueKeyPolicy":{"uniqueKeys":[{"paths":["/email"]},{"paths":["/first","/last"]}]}`},
	} {
		b.Run(tc.name, func(b *testing.B) {
			e, _ := newTestEngine(b)
			mustCreate(b, e, "db", "c", `{"id":"c","partitionKey":{"paths":["/pk"]}`+tc.policy+`}`)
			ref := ItemRef{DB: "db", Coll: "c", PK: `["p"]`, HasPK: true}
			ctx := context.Background()
			i := 0
			for b.Loop() {
				n := strconv.Itoa(i)
				body := `{"id":"` + n + `","pk":"p","email":"u` + n + `@example.com","first":"F` + n + `","last":"L","pad":"` + pad + `"}`
				if _, err := e.WriteItem(ctx, ref, Create, []byte(body), ""); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}
