package e2e

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/ebbdb/ebb/internal/server"
)

// TestSearchThroughTheGoSDK: a container with a vector embedding policy,
// a vector index, a full-text policy and a full-text index, created
// with the Go SDK's types; a vector search and a full-text ranking in a
// partition, each against an oracle; and the same after a restart, on
// either store.
func TestSearchThroughTheGoSDK(t *testing.T) {
	dir := t.TempDir()
	e := startWith(t, server.Config{DataDir: dir})
	db := e.database(t, "db-search")
	props := azcosmos.ContainerProperties{
		ID:                     "docs",
		PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}},
		VectorEmbeddingPolicy: &azcosmos.VectorEmbeddingPolicy{VectorEmbeddings: []azcosmos.VectorEmbedding{
			{Path: "/embedding", DataType: azcosmos.VectorDataTypeFloat32, DistanceFunction: azcosmos.VectorDistanceFunctionEuclidean, Dimensions: 3},
		}},
		FullTextPolicy: &azcosmos.FullTextPolicy{DefaultLanguage: "en-US", FullTextPaths: []azcosmos.FullTextPath{{Path: "/text", Language: "en-US"}}},
		IndexingPolicy: &azcosmos.IndexingPolicy{
			Automatic: true, IndexingMode: azcosmos.IndexingModeConsistent,
			IncludedPaths:   []azcosmos.IncludedPath{{Path: "/*"}},
			ExcludedPaths:   []azcosmos.ExcludedPath{{Path: "/embedding/*"}},
			VectorIndexes:   []azcosmos.VectorIndex{{Path: "/embedding", Type: azcosmos.VectorIndexTypeDiskANN}},
			FullTextIndexes: []azcosmos.FullTextIndex{{Path: "/text"}},
		},
	}
	if _, err := db.CreateContainer(e.ctx, props, nil); err != nil {
		t.Fatal(err)
	}
	c, _ := db.NewContainer("docs")
	pk := azcosmos.NewPartitionKeyString("p")
	docs := map[string][]float64{"a": {0, 0, 1}, "b": {1, 1, 0}, "c": {0.9, 1, 0.1}, "d": {5, 5, 5}}
	texts := map[string]string{"a": "searching the archive", "b": "a quiet search", "c": "nothing here", "d": "searches searched search"}
	for id, v := range docs {
		body, _ := json.Marshal(map[string]any{"id": id, "pk": "p", "embedding": v, "text": texts[id]})
		if _, err := c.CreateItem(e.ctx, pk, body, nil); err != nil {
			t.Fatal(err)
		}
	}
	q := []float64{1, 1, 0}
	euclid := func(v []float64) float64 {
		s := 0.0
		for i := range v {
			s += (v[i] - q[i]) * (v[i] - q[i])
		}
		return math.Sqrt(s)
	}
	wantVector := []string{"a", "b", "c", "d"}
	slices.SortFunc(wantVector, func(x, y string) int { return cmp.Compare(euclid(docs[x]), euclid(docs[y])) })

	check := func(e *env) {
		t.Helper()
		c, _ := e.client.NewContainer("db-search", "docs")
		read, err := c.Read(e.ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		p := read.ContainerProperties
		if p.VectorEmbeddingPolicy == nil || p.VectorEmbeddingPolicy.VectorEmbeddings[0].Dimensions != 3 || p.FullTextPolicy == nil || len(p.IndexingPolicy.VectorIndexes) != 1 {
			t.Fatalf("policies read back: %+v %+v %+v", p.VectorEmbeddingPolicy, p.FullTextPolicy, p.IndexingPolicy)
		}
		got := queryIDs(t, e, c, pk, "SELECT TOP 4 VALUE c.id FROM c ORDER BY VectorDistance(c.embedding, [1, 1, 0])")
		if !slices.Equal(got, wantVector) {
			t.Errorf("vector search: %v, want %v (nearest first)", got, wantVector)
		}
		// "search", "searches", "searched" and "searching" share the stem
		// "search"; d has it three times in three words.
		got = queryIDs(t, e, c, pk, "SELECT TOP 2 VALUE c.id FROM c ORDER BY RANK FullTextScore(c.text, 'search')")
		if !slices.Equal(got, []string{"d", "b"}) {
			t.Errorf("full-text ranking: %v, want [d b]", got)
		}
	}
	check(e)
	if err := e.stop(t); err != nil && err != context.DeadlineExceeded {
		t.Fatal(err)
	}
	check(startWith(t, server.Config{DataDir: dir}))
}

// queryIDs runs a query returning ids in a partition.
func queryIDs(t *testing.T, e *env, c *azcosmos.ContainerClient, pk azcosmos.PartitionKey, query string) []string {
	t.Helper()
	pager := c.NewQueryItemsPager(query, pk, nil)
	var ids []string
	for pager.More() {
		page, err := pager.NextPage(e.ctx)
		if err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		for _, it := range page.Items {
			var id string
			if err := json.Unmarshal(it, &id); err != nil {
				t.Fatal(fmt.Errorf("%s: %w", it, err))
			}
			ids = append(ids, id)
		}
	}
	return ids
}
