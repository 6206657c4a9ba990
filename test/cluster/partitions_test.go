package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/ebbdb/ebb/test/ebbproc"
)

// TestPartitionsAcrossNodes: a container of four physical partitions
// created on one node is four ranges on every node, and conditional
// writes from three nodes to items in every partition at once lose no
// update, each partition's writes taking turns on its own lock, even
// while one of the partitions is split.
func TestPartitionsAcrossNodes(t *testing.T) {
	nodes := startNodes(t, 3)
	a := nodes[0]
	ctx := context.Background()
	if st, _ := a.REST(t, "POST", "/dbs", nil, `{"id":"db"}`, nil); st != 201 {
		t.Fatalf("create database: %d", st)
	}
	body := `{"id":"c","partitionKey":{"paths":["/pk"],"kind":"Hash","version":2}}`
	if st, _ := a.REST(t, "POST", "/dbs/db/colls", map[string]string{"x-ebb-partition-count": "4"}, body, nil); st != 201 {
		t.Fatalf("create container: %d", st)
	}
	const items = 8
	for i := range items {
		hdr := map[string]string{"x-ms-documentdb-partitionkey": fmt.Sprintf(`["k%d"]`, i)}
		if st, _ := a.REST(t, "POST", "/dbs/db/colls/c/docs", hdr, fmt.Sprintf(`{"id":"i%d","pk":"k%d","n":0}`, i, i), nil); st != 201 {
			t.Fatalf("create item %d: %d", i, st)
		}
	}
	for _, nd := range nodes {
		c, _ := nd.Client.NewContainer("db", "c")
		ranges, err := c.ReadFeedRanges(ctx, nil)
		if err != nil || len(ranges) != 4 {
			t.Fatalf("node %s: %d ranges, %v", nd.Name, len(ranges), err)
		}
	}

	// Two workers per node, each incrementing every item in turn, while
	// node a splits range 0 half-way through: the other nodes learn of
	// the split from the writes that find their partition split.
	const rounds = 10
	var done atomic.Int64
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := make([]int, items)
	errs := make(chan error, 6)
	for _, nd := range nodes {
		for range 2 {
			wg.Go(func() {
				c, _ := nd.Client.NewContainer("db", "c")
				for r := range rounds {
					for i := range items {
						won, err := ebbproc.IncrementIfMatch(ctx, c, fmt.Sprintf("k%d", i), fmt.Sprintf("i%d", i))
						if err != nil {
							errs <- fmt.Errorf("round %d item %d: %w", r, i, err)
							return
						}
						if won {
							mu.Lock()
							wins[i]++
							mu.Unlock()
						}
						done.Add(1)
					}
				}
			})
		}
	}
	ebbproc.WaitFor(t, "half the increments, or a worker's failure", func() bool {
		return done.Load() >= 3*2*rounds*items/2 || len(errs) > 0
	})
	st, _ := a.REST(t, "POST", "/_ebb/containers/db/c/split", nil, `{"partitionKeyRangeId":"0"}`, nil)
	wg.Wait()
	close(errs)
	if st != 200 {
		t.Fatalf("split: %d", st)
	}
	for err := range errs {
		t.Fatal(err)
	}
	c, _ := nodes[2].Client.NewContainer("db", "c")
	for _, nd := range nodes {
		ebbproc.WaitFor(t, "node "+nd.Name+" to list the split's ranges", func() bool {
			var list struct{ PartitionKeyRanges []json.RawMessage }
			st, _ := nd.REST(t, "GET", "/dbs/db/colls/c/pkranges", nil, "", &list)
			return st == 200 && len(list.PartitionKeyRanges) == 5
		})
	}
	for i := range items {
		r, err := c.ReadItem(ctx, azcosmos.NewPartitionKeyString(fmt.Sprintf("k%d", i)), fmt.Sprintf("i%d", i), nil)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct{ N int }
		json.Unmarshal(r.Value, &doc)
		if doc.N != wins[i] || doc.N == 0 {
			t.Errorf("item %d: n = %d after %d acknowledged increments", i, doc.N, wins[i])
		}
	}
}
