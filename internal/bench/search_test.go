package bench

import (
	"context"
	"strings"
	"testing"
)

// TestRunSearch runs the search benchmark on a few small items and
// checks the report's shape; it asserts nothing about speed.
func TestRunSearch(t *testing.T) {
	rep, err := RunSearch(context.Background(), SearchOptions{Items: 300, Dims: 16, Queries: 5, Memory: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Exact.Ops != 5 || rep.ANN.Ops != 5 || rep.FullText.Ops != 5 || rep.Recall < 0.5 || rep.IngestPerSecond <= 0 {
		t.Fatalf("%+v", rep)
	}
	var b strings.Builder
	if err := rep.WriteMarkdown(&b); err != nil || !strings.Contains(b.String(), "diskANN graph") {
		t.Fatalf("%s: %v", b.String(), err)
	}
}
