package engine

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/ebbdb/ebb/internal/clock"
	"github.com/ebbdb/ebb/internal/engine/document"
)

// TestComputedProperties runs testdata/computed: containers with computed
// properties, the queries that read them over a scan and over an index,
// replaces that add, redefine and drop them with the index rebuilding in
// between, TTL, and the definitions the engine refuses. Every query is
// also run over a plain scan, and must give the same rows; every step
// ends with a consistency check (index entries agree with the items).
//
//	container [hold]      a fresh engine, database db and container c from the
//	                      input body; hold lets the index builder run one batch
//	                      of one item per wake (but in build), so that rebuilds
//	                      stay under way
//	replace-container     replaces c with the input body
//	write [pk=<p>]        upserts each input line (partition "p" by default)
//	query [members]       runs the input across partitions in pages of 3; prints
//	                      the rows (or each row's members but the system
//	                      properties), then "index", "composite index" or
//	                      "scan": what served them
//	build                 lets the builder finish; waits for a ready index
//	state                 prints the index state: ready or building
//	read id=<id>          point-reads item id of partition "p"; prints its
//	                      members but the system properties
//	feed                  prints the ids and members of the read feed's items
//	advance seconds=<n>   moves the clock
func TestComputedProperties(t *testing.T) {
	ctx := context.Background()
	var e *Engine
	var clk *clock.Manual
	// held: the container was made with hold; hold: the builder stops
	// after each batch now.
	var held bool
	var hold atomic.Bool
	status := func(err error, ok string) string {
		if err == nil {
			return ok + "\n"
		}
		var ee *Error
		if !asError(err, &ee) {
			t.Fatal(err)
		}
		return fmt.Sprintf("%d %s\n", map[Kind]int{KindBadRequest: 400, KindNotFound: 404, KindNotImplemented: 501}[ee.Kind], ee.Message)
	}
	members := func(doc []byte) string {
		ms, _ := document.ObjectMembers(doc)
		var out []string
		for _, m := range ms {
			if !document.IsSystemProperty(m.Key) {
				out = append(out, m.Key)
			}
		}
		return strings.Join(out, ",")
	}
	datadriven.RunTest(t, "testdata/computed", func(t *testing.T, d *datadriven.TestData) string {
		body := []byte(strings.TrimSpace(d.Input))
		switch d.Cmd {
		case "container":
			held = d.HasArg("hold")
			hold.Store(held)
			e, clk = openEngine(t, memStore(t), Options{DisablePurger: true, indexBatch: 1, indexHook: func(*container) bool { return !hold.Load() }})
			if _, err := e.CreateDatabase(ctx, []byte(`{"id":"db"}`), ThroughputHeaders{}); err != nil {
				t.Fatal(err)
			}
			_, err := e.CreateContainer(ctx, "db", body, ThroughputHeaders{})
			return status(err, "201")
		case "replace-container":
			_, err := e.ReplaceContainer(ctx, "db", "c", body, "")
			if err == nil {
				checkConsistent(t, e)
			}
			return status(err, "200")
		case "write":
			pk := "p"
			if d.HasArg("pk") {
				d.ScanArgs(t, "pk", &pk)
			}
			ref := ItemRef{DB: "db", Coll: "c", PK: `["` + pk + `"]`, HasPK: true}
			var out strings.Builder
			for _, line := range strings.Split(string(body), "\n") {
				_, err := e.WriteItem(ctx, ref, Upsert, []byte(line), "")
				if err != nil {
					out.WriteString(status(err, ""))
				}
			}
			checkConsistent(t, e)
			return out.String()
		case "query":
			req := QueryRequest{Ref: ItemRef{DB: "db", Coll: "c"}, Body: queryBody(string(body)), MaxItemCount: 3, CrossPartition: true, RangeID: "0"}
			first, err := e.QueryItems(ctx, req)
			if err != nil {
				return status(err, "")
			}
			m, _ := url.QueryUnescape(first.IndexMetrics)
			composite := strings.Contains(m, `"UtilizedCompositeIndexes":[{`)
			rows, indexed := drainQuery(t, e, req, false)
			scan, _ := drainQuery(t, e, req, true)
			if a, b := slices.Sorted(slices.Values(rows)), slices.Sorted(slices.Values(scan)); !slices.Equal(a, b) {
				t.Errorf("%s:\n served %v\n scan   %v", body, rows, scan)
			}
			how := "scan"
			switch {
			case indexed:
				how = "index"
			case composite:
				how = "composite index"
			}
			if d.HasArg("members") {
				for i := range rows {
					rows[i] = members([]byte(rows[i]))
				}
			}
			return strings.Join(append(rows, how), "\n") + "\n"
		case "build":
			hold.Store(false)
			e.indexer.kick()
			waitUntil(t, "a ready index", func() bool { return indexReady(t, e, "c") })
			hold.Store(held)
			checkConsistent(t, e)
			return ""
		case "state":
			if indexReady(t, e, "c") {
				return "ready\n"
			}
			return "building\n"
		case "read":
			var id string
			d.ScanArgs(t, "id", &id)
			res, err := e.ReadItem(ctx, ItemRef{DB: "db", Coll: "c", ID: id, PK: `["p"]`, HasPK: true}, "")
			if err != nil {
				return status(err, "")
			}
			return members(res.Body) + "\n"
		case "feed":
			res, err := e.ReadFeed(ctx, QueryRequest{Ref: ItemRef{DB: "db", Coll: "c"}, MaxItemCount: -1})
			if err != nil {
				t.Fatal(err)
			}
			var out strings.Builder
			for _, r := range res.Rows() {
				out.WriteString(members(r) + "\n")
			}
			return out.String()
		case "advance":
			var s int
			d.ScanArgs(t, "seconds", &s)
			clk.Advance(time.Duration(s) * time.Second)
			return ""
		}
		d.Fatalf(t, "unknown command %q", d.Cmd)
		return ""
	})
}

// TestComputedStaleCatalog runs a query bound with the computed properties
// of a catalog snapshot older than the index (as a request in flight
// during ReplaceContainer, or another node with an older catalog, does):
// the index follows other definitions, so the page scans and its rows are
// the old definitions'.
func TestComputedStaleCatalog(t *testing.T) {
	ctx := context.Background()
	e, _ := openEngine(t, memStore(t), Options{})
	def := func(q string) string {
		return `{"id":"c","partitionKey":{"paths":["/pk"]},"computedProperties":[{"name":"cp","query":"` + q + `"}],
			"indexingPolicy":{"includedPaths":[{"path":"/*"},{"path":"/cp/?"}]}}`
	}
	mustCreate(t, e, "db", "c", def("SELECT VALUE LOWER(c.name) FROM c"))
	write(t, e, "c", `{"id":"1","pk":"p","name":"Ada"}`)
	write(t, e, "c", `{"id":"2","pk":"p","name":"ada"}`)
	stale, _ := e.container("db", "c")
	replaceContainer(t, e, def("SELECT VALUE c.name FROM c"))
	waitUntil(t, "the rebuild", func() bool { return indexReady(t, e, "c") })

	req := QueryRequest{Ref: ItemRef{DB: "db", Coll: "c"}, Body: queryBody(`SELECT VALUE c.id FROM c WHERE c.cp = "ada"`), CrossPartition: true, RangeID: "0"}
	plan, err := e.compile(`SELECT VALUE c.id FROM c WHERE c.cp = "ada"`, nil, stale.computed)
	if err != nil {
		t.Fatal(err)
	}
	src, err := e.scope(ctx, req, stale, true)
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.pageItems(ctx, plan, src, req)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(bytesToStrings(res.Rows()), ","); got != `"1","2"` || usedIndex(res) {
		t.Fatalf("stale plan: rows %s, index %v; want both items from a scan", got, usedIndex(res))
	}
	// The current catalog's plan uses the index, with the new definition.
	if rows, indexed := drainQuery(t, e, req, false); strings.Join(rows, ",") != `"2"` || !indexed {
		t.Fatalf("current plan: rows %v, index %v", rows, indexed)
	}
}

func bytesToStrings(bs [][]byte) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = string(b)
	}
	return out
}
