package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/ebbdb/ebb/internal/engine/document"
	"github.com/ebbdb/ebb/internal/engine/keyspace"
	"github.com/ebbdb/ebb/internal/storage"
)

// TestFullTextIndex: a full-text ranking served from the path's index
// ranks exactly as the scan does (the same items in a container without
// a fullTextPolicy, which has no index), page by page, in a partition
// and across the container, with expired items out of the statistics
// and the ranking, and after writes.
func TestFullTextIndex(t *testing.T) {
	e, clk := newTestEngine(t)
	for _, c := range []string{"ix", "scan"} {
		policy := ""
		if c == "ix" {
			policy = `,"fullTextPolicy":{"defaultLanguage":"en-US","fullTextPaths":[{"path":"/t"}]}`
		}
		if _, err := e.CreateContainer(context.Background(), "db", []byte(`{"id":"`+c+`","partitionKey":{"paths":["/pk"]},"defaultTtl":-1`+policy+`}`), ThroughputHeaders{}); err != nil {
			if _, err := e.CreateDatabase(context.Background(), []byte(`{"id":"db"}`), ThroughputHeaders{}); err != nil {
				t.Fatal(err)
			}
			if _, err := e.CreateContainer(context.Background(), "db", []byte(`{"id":"`+c+`","partitionKey":{"paths":["/pk"]},"defaultTtl":-1`+policy+`}`), ThroughputHeaders{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	words := strings.Fields("search engines rank documents by relevance running runs ran quick brown fox")
	put := func(doc string) {
		t.Helper()
		for _, c := range []string{"ix", "scan"} {
			var d struct{ PK string }
			json.Unmarshal([]byte(doc), &d)
			ref := ItemRef{DB: "db", Coll: c, PK: `["` + d.PK + `"]`, HasPK: true}
			if _, err := e.WriteItem(context.Background(), ref, Upsert, []byte(doc), ""); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i := range 60 {
		var t []string
		for j := range 1 + i%7 {
			t = append(t, words[(i*3+j*5)%len(words)])
		}
		put(fmt.Sprintf(`{"id":"d%02d","pk":"p%d","t":%q}`, i, i%2, strings.Join(t, " ")))
	}
	put(`{"id":"no-text","pk":"p0"}`)
	put(`{"id":"gone","pk":"p0","t":"search search search","ttl":5}`)
	clk.Advance(6 * time.Second)

	ranked := func(coll, pk string, pageSize int) []string {
		t.Helper()
		ref := ItemRef{DB: "db", Coll: coll}
		if pk != "" {
			ref.PK, ref.HasPK = `["`+pk+`"]`, true
		}
		return unquote(queryPages(t, e, QueryRequest{Ref: ref, Body: []byte(`{"query":"SELECT VALUE c.id FROM c ORDER BY RANK FullTextScore(c.t, 'search', 'run')"}`),
			MaxItemCount: pageSize, CrossPartition: true, RangeID: "0"}))
	}
	// filtered runs a WHERE of full-text filters, which the index narrows;
	// scanned, the same filters of terms that are not constants, which
	// it cannot.
	filtered := func(pk string, pageSize int, scanned bool) []string {
		t.Helper()
		var ids []string
		for _, where := range []string{
			"FullTextContains(c.t, 'runs')", "FullTextContains(c.t, 'quick brown')", "FullTextContains(c.t, 'the')",
			"FullTextContainsAll(c.t, 'search', 'running') AND c.id != 'd10'", "FullTextContainsAny(c.t, 'fox', 'relevance', 'the')",
			"FullTextContainsAny(c.t, 'nothing', 3)", "FullTextContainsAll(c.t, 'run', 3)",
		} {
			ref := ItemRef{DB: "db", Coll: "ix"}
			if pk != "" {
				ref.PK, ref.HasPK = `["`+pk+`"]`, true
			}
			if scanned {
				where = strings.ReplaceAll(where, "(c.t, '", "(c.t, '' || '")
			}
			body := queryBody("SELECT VALUE c.id FROM c WHERE " + where)
			ids = append(ids, "|")
			ids = append(ids, unquote(queryPages(t, e, QueryRequest{Ref: ref, Body: body, MaxItemCount: pageSize, CrossPartition: true, RangeID: "0"}))...)
		}
		return ids
	}
	check := func(what string) {
		t.Helper()
		for _, pk := range []string{"", "p0"} {
			got, want := ranked("ix", pk, 7), ranked("scan", pk, 1000)
			if strings.Join(got, ",") != strings.Join(want, ",") {
				t.Fatalf("%s, partition %q:\n index %v\n scan  %v", what, pk, got, want)
			}
			if got, want := filtered(pk, 3, false), filtered(pk, 1000, true); strings.Join(got, ",") != strings.Join(want, ",") {
				t.Fatalf("%s, filters in partition %q:\n index %v\n scan  %v", what, pk, got, want)
			}
			for _, id := range got {
				if id == "gone" {
					t.Fatalf("%s: an expired item ranked", what)
				}
			}
		}
	}
	check("at first")
	res, err := e.QueryItems(context.Background(), QueryRequest{Ref: ItemRef{DB: "db", Coll: "ix"}, Body: queryBody("SELECT VALUE c.id FROM c WHERE FullTextContains(c.t, 'fox')"), CrossPartition: true, RangeID: "0"})
	if err != nil {
		t.Fatal(err)
	}
	passed := len(res.Rows())
	res.Body.Release()
	if want := fmt.Sprintf("retrievedDocumentCount=%d;", passed); passed == 0 || !strings.Contains(res.Metrics, want) {
		t.Fatalf("the filter read other items than those that pass it: %d pass, %s", passed, res.Metrics)
	}
	if _, ok := e.textIndexes.get(textIndexKey{e.catalogSnapshot().dbs["db"].colls["ix"].rid, "/t"}); !ok {
		t.Fatal("the ranking was not served from the full-text index")
	}
	put(`{"id":"d03","pk":"p1","t":"search run search run"}`)
	put(`{"id":"new","pk":"p0","t":"ran"}`)
	check("after writes")
	put(`{"id":"d04","pk":"p0"}`) // its text removed
	put(`{"id":"new","pk":"p0","t":"search"}`)
	put(`{"id":"soon","pk":"p1","t":"run run run","ttl":3}`)
	check("after more writes")
	clk.Advance(4 * time.Second) // soon expires: no write, no new LSN
	check("after an expiry")
	for _, c := range []string{"ix", "scan"} {
		if _, err := e.DeleteItem(context.Background(), ItemRef{DB: "db", Coll: c, ID: "d05", PK: `["p1"]`, HasPK: true}, ""); err != nil {
			t.Fatal(err)
		}
	}
	check("after a delete")
	// A removal is taken in from the log of removals, as a write is
	// from the latest-version index: the index is not read whole again.
	e.textIndexes = newSizedCache[textIndexKey, *textIndex](maxCachedTextDocs)
	check("read whole")
	ixKey := textIndexKey{e.catalogSnapshot().dbs["db"].colls["ix"].rid, "/t"}
	before, _ := e.textIndexes.get(ixKey)
	for _, c := range []string{"ix", "scan"} {
		if _, err := e.DeleteItem(context.Background(), ItemRef{DB: "db", Coll: c, ID: "d07", PK: `["p1"]`, HasPK: true}, ""); err != nil {
			t.Fatal(err)
		}
	}
	check("after another delete")
	if after, _ := e.textIndexes.get(ixKey); !after.base.equal(before.base) || after.lsn.equal(before.lsn) {
		t.Fatalf("a delete made the index be read whole (base %d, then %d)", before.base, after.base)
	}
	for i := range 8 {
		put(fmt.Sprintf(`{"id":"d%02d","pk":"p%d","t":"quick search %d"}`, 20+i, i%2, i))
	}
	check("after a burst of writes")

	// The index is read from the items' full-text entries, which follow
	// every write, delete and purge; after a change of the policy it is
	// read from the documents until the items are written again.
	complete := func() bool {
		t.Helper()
		c := e.catalogSnapshot().dbs["db"].colls["ix"]
		var ok bool
		err := e.store.View(context.Background(), func(r storage.Reader) error {
			st, err := readContainerState(r, c)
			if err != nil {
				return err
			}
			m := e.workMeter(context.Background(), e.queryClock.Elapsed(), e.pageBudget, "reading the index")
			_, ok, err = readTextIndexFrom(r, c, "/t", st, m, keyspace.CollPrefix(keyspace.Txt, c.rid))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !complete() {
		t.Fatal("an item has no full-text entry")
	}
	if err := e.CheckConsistency(context.Background()); err != nil {
		t.Fatal(err)
	}
	e.textIndexes = newSizedCache[textIndexKey, *textIndex](maxCachedTextDocs) // as after a restart
	check("read from the entries")
	if _, err := e.ReplaceContainer(context.Background(), "db", "ix", []byte(`{"id":"ix","partitionKey":{"paths":["/pk"]},"defaultTtl":-1,`+
		`"fullTextPolicy":{"defaultLanguage":"en-US","fullTextPaths":[{"path":"/t"},{"path":"/u"}]}}`), ""); err != nil {
		t.Fatal(err)
	}
	if complete() {
		t.Fatal("entries of the old policy were kept")
	}
	check("after a policy change")
	put(`{"id":"d03","pk":"p1","t":"search","u":"run"}`)
	check("after a write under the new policy")
	if err := e.CheckConsistency(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// FuzzTextEntry: a full-text entry of any document reads back as the
// document's analysis, and no bytes make reading one panic.
func FuzzTextEntry(f *testing.F) {
	f.Add([]byte(`{"t":"Running runs quickly","u":{"v":"search"}}`), []byte{})
	f.Add([]byte(`{"t":""}`), []byte{0, 1, 2})
	f.Fuzz(func(t *testing.T, doc, junk []byte) {
		if !json.Valid(doc) {
			return
		}
		value := append(document.ItemHeader{Ts: 1}.Append(nil), doc...)
		entry := textEntry(value, []string{"/t", "/u/v"})
		for _, path := range []string{"/t", "/u/v"} {
			want, got := map[string]int32{}, map[string]int32{}
			d, ok, err := textDocOf([]byte("k"), value, path, want)
			if err != nil {
				return // not an object: never stored
			}
			e, eok, analyzed, err := readTextEntry([]byte("k"), entry, path, got)
			if err != nil || !analyzed || eok != ok || (ok && (e.words != d.words || !maps.Equal(want, got))) {
				t.Fatalf("%s at %s: entry %v %v %v %v (%v), document %v %v (%v)", doc, path, e.words, eok, analyzed, err, got, d.words, ok, want)
			}
		}
		readTextEntry([]byte("k"), append(entry[:len(entry):len(entry)], junk...), "/t", map[string]int32{})
		readTextEntry([]byte("k"), junk, "/t", map[string]int32{})
	})
}

// queryPages runs req page by page to the end and returns the rows.
func queryPages(t testing.TB, e *Engine, req QueryRequest) []string {
	t.Helper()
	var rows []string
	for {
		res, err := e.QueryItems(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, stringRows(res.Rows())...)
		res.Body.Release()
		if res.Continuation == "" {
			return rows
		}
		req.Continuation = res.Continuation
	}
}

func stringRows(rows [][]byte) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = string(r)
	}
	return out
}
