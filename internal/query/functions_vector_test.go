package query

import (
	"math"
	"strings"
	"testing"
)

func TestVectorDistance(t *testing.T) {
	src := docs(`{"id":"a","v":[1,0]}`, `{"id":"b","v":[0.6,0.8]}`, `{"id":"c","v":[-1,0]}`, `{"id":"d","v":"no"}`, `{"id":"e","v":[1,2,3]}`)
	run := func(text string, vectors func(string) (string, bool)) []string {
		t.Helper()
		rows, err := queryRows(t, src, text, Env{Vectors: vectors})
		if err != nil {
			t.Fatal(err)
		}
		return rows
	}
	euclidean := func(path string) (string, bool) { return "euclidean", path == "/v" }
	for _, tc := range []struct {
		query   string
		vectors func(string) (string, bool)
		want    string
	}{
		// Cosine by default: most similar first, undefined rows (wrong
		// type or length) last.
		{"SELECT VALUE c.id FROM c ORDER BY VectorDistance(c.v, [1, 0])", nil, `"a";"b";"c";"d";"e"`},
		{"SELECT TOP 2 c.id, VectorDistance(c.v, [1, 0]) AS s FROM c ORDER BY VectorDistance(c.v, [1, 0])", nil, `{"id":"a","s":1};{"id":"b","s":0.6}`},
		// The container's policy names the function for the path.
		{"SELECT VALUE c.id FROM c ORDER BY VectorDistance(c.v, [-1, 0])", euclidean, `"c";"b";"a";"d";"e"`},
		// Options override it; dot product, greatest first.
		{"SELECT VALUE c.id FROM c ORDER BY VectorDistance(c.v, [0, 2], false, {distanceFunction: 'dotproduct'})", euclidean, `"b";"a";"c";"d";"e"`},
		// An explicit direction is taken as written.
		{"SELECT VALUE c.id FROM c WHERE IS_ARRAY(c.v) AND ARRAY_LENGTH(c.v) = 2 ORDER BY VectorDistance(c.v, [1, 0]) ASC", nil, `"c";"b";"a"`},
		{"SELECT VALUE VectorDistance(c.v, [1, 0]) FROM c WHERE c.id = 'b'", euclidean, `0.894427190999916`},
		{"SELECT VALUE c.id FROM c WHERE VectorDistance(c.v, [1, 0]) > 0.5", nil, `"a";"b"`},
	} {
		if got := strings.Join(run(tc.query, tc.vectors), ";"); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.query, got, tc.want)
		}
	}
	if d, _ := vectorDistance("euclidean", mustJSON(t, "[0.6,0.8]"), mustJSON(t, "[1,0]")); math.Abs(d-math.Sqrt(0.16+0.64)) > 1e-12 {
		t.Fatalf("euclidean: %v", d)
	}
}
