package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseVector(t *testing.T) {
	for _, tc := range []struct {
		in   string
		dims int
		want string
	}{
		{`[1, 2.5, -3e2]`, 3, `[1 2.5 -300]`},
		{` [ 0.25 ,0.5] `, 2, `[0.25 0.5]`},
		{`[1, 2]`, 3, `[]`},
		{`[1, 2, 3, 4]`, 3, `[]`},
		{`[1, "2", 3]`, 3, `[]`},
		{`[1, [2], 3]`, 3, `[]`},
		{`[1, {"a": 2, "b": 3}]`, 3, `[]`},
		{`"x"`, 1, `[]`},
		{`[]`, 1, `[]`},
	} {
		if got := fmt.Sprint(parseVector([]byte(tc.in), tc.dims)); got != tc.want {
			t.Errorf("parseVector(%s, %d) = %s, want %s", tc.in, tc.dims, got, tc.want)
		}
	}
}

// TestVectorSearchPages: a vector search served from the stored vectors
// pages with continuations in the order a full sort gives, puts items
// without a vector (or of another length) last, skips expired items,
// and its vectors follow every write, delete and purge.
func TestVectorSearchPages(t *testing.T) {
	e, clk := newTestEngine(t)
	mustCreate(t, e, "db", "c", `{"id":"c","partitionKey":{"paths":["/pk"]},"defaultTtl":-1,`+
		`"vectorEmbeddingPolicy":{"vectorEmbeddings":[{"path":"/v","dataType":"float32","distanceFunction":"euclidean","dimensions":2}]}}`)
	for i := range 30 {
		write(t, e, "c", fmt.Sprintf(`{"id":"d%02d","pk":"p","v":[%d,%d]}`, i, i%7, i%5))
	}
	write(t, e, "c", `{"id":"none","pk":"p"}`)
	write(t, e, "c", `{"id":"short","pk":"p","v":[1]}`)
	write(t, e, "c", `{"id":"gone","pk":"p","v":[0,0],"ttl":5}`)
	write(t, e, "c", `{"id":"d03","pk":"p","v":[100,100]}`) // replaced: now last of the ranked
	clk.Advance(6 * time.Second)

	body := []byte(`{"query":"SELECT VALUE c.id FROM c ORDER BY VectorDistance(c.v, [0, 0])"}`)
	var paged []string
	req := QueryRequest{Ref: ItemRef{DB: "db", Coll: "c", PK: `["p"]`, HasPK: true}, Body: body, MaxItemCount: 4}
	for {
		res, err := e.QueryItems(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res.Rows() {
			var id string
			json.Unmarshal(r, &id)
			paged = append(paged, id)
		}
		res.Body.Release()
		if res.Continuation == "" {
			break
		}
		req.Continuation = res.Continuation
	}
	// The same ranking from a scan of the documents: a query vector
	// that is not a constant keeps the engine from the stored vectors.
	all, err := queryRows(e, "SELECT VALUE c.id FROM c ORDER BY VectorDistance(c.v, [0, 0 + 0])")
	if err != nil {
		t.Fatal(err)
	}
	if len(paged) != 32 || paged[29] != "d03" || !slices.Contains(paged[30:], "none") || !slices.Contains(paged[30:], "short") || slices.Contains(paged, "gone") {
		t.Fatalf("paged: %v", paged)
	}
	if strings.Join(paged, ",") != strings.Join(unquote(all), ",") {
		t.Fatalf("paged %v\n  one page %v", paged, all)
	}
	if err := e.CheckConsistency(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the purge of the expired item", func() bool {
		_, err := e.ReadItem(context.Background(), ItemRef{DB: "db", Coll: "c", ID: "gone", PK: `["p"]`, HasPK: true}, "")
		return IsKind(err, KindNotFound) && e.CheckConsistency(context.Background()) == nil
	})
}

func unquote(rows []string) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		json.Unmarshal([]byte(r), &out[i])
	}
	return out
}

// TestVectorSearchAfterWrites: searches between writes rank what the
// container holds at each: the vectors in memory take in the items
// written since (replaced, new, deleted, their vector removed), and the
// order is the scan's.
func TestVectorSearchAfterWrites(t *testing.T) {
	e, _ := newTestEngine(t)
	mustCreate(t, e, "db", "c", `{"id":"c","partitionKey":{"paths":["/pk"]},`+
		`"vectorEmbeddingPolicy":{"vectorEmbeddings":[{"path":"/v","dataType":"float32","distanceFunction":"cosine","dimensions":2}]}}`)
	for i := range 100 {
		write(t, e, "c", fmt.Sprintf(`{"id":"d%03d","pk":"p","v":[%d,%d]}`, i, i%11+1, i%13))
	}
	ranked := func() []string {
		rows, err := queryRows(e, "SELECT VALUE c.id FROM c ORDER BY VectorDistance(c.v, [1, 0])")
		if err != nil {
			t.Fatal(err)
		}
		return unquote(rows)
	}
	scanned := func() []string {
		rows, err := queryRows(e, "SELECT VALUE c.id FROM c ORDER BY VectorDistance(c.v, [1, 0 + 0])")
		if err != nil {
			t.Fatal(err)
		}
		return unquote(rows)
	}
	for round, writes := range [][]string{
		nil,
		{`{"id":"d005","pk":"p","v":[1,0]}`, `{"id":"new","pk":"p","v":[2,0]}`, `{"id":"d007","pk":"p"}`},
		{`{"id":"d005","pk":"p","v":[0,1]}`},
	} {
		for _, w := range writes {
			write(t, e, "c", w)
		}
		if round == 2 {
			if _, err := e.DeleteItem(context.Background(), ItemRef{DB: "db", Coll: "c", ID: "new", PK: `["p"]`, HasPK: true}, ""); err != nil {
				t.Fatal(err)
			}
		}
		got, want := ranked(), scanned()
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("round %d:\n got %v\nwant %v", round, got, want)
		}
	}
}
