package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
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
		req := QueryRequest{Ref: ref, Body: []byte(`{"query":"SELECT VALUE c.id FROM c ORDER BY RANK FullTextScore(c.t, 'search', 'run')"}`),
			MaxItemCount: pageSize, CrossPartition: true, RangeID: "0"}
		var ids []string
		for {
			res, err := e.QueryItems(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, unquote(stringRows(res.Rows()))...)
			res.Body.Release()
			if res.Continuation == "" {
				return ids
			}
			req.Continuation = res.Continuation
		}
	}
	check := func(what string) {
		t.Helper()
		for _, pk := range []string{"", "p0"} {
			got, want := ranked("ix", pk, 7), ranked("scan", pk, 1000)
			if strings.Join(got, ",") != strings.Join(want, ",") {
				t.Fatalf("%s, partition %q:\n index %v\n scan  %v", what, pk, got, want)
			}
			for _, id := range got {
				if id == "gone" {
					t.Fatalf("%s: an expired item ranked", what)
				}
			}
		}
	}
	check("at first")
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
	for i := range 8 {
		put(fmt.Sprintf(`{"id":"d%02d","pk":"p%d","t":"quick search %d"}`, 20+i, i%2, i))
	}
	check("after a burst of writes")
}

func stringRows(rows [][]byte) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = string(r)
	}
	return out
}
