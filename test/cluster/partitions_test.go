package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
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

// TestSizeSplitAcrossNodes: three nodes write into a container of one
// range until it holds far more than --partition-split-size; its
// partitions are split while they write, whichever node splits them,
// every write succeeds, every node lists the same ranges, and every item
// is read back through each node.
func TestSizeSplitAcrossNodes(t *testing.T) {
	const splitSize = 32 << 10
	nodes := startNodes(t, 3, "--partition-split-size", fmt.Sprint(splitSize))
	a := nodes[0]
	ctx := context.Background()
	if st, _ := a.REST(t, "POST", "/dbs", nil, `{"id":"db"}`, nil); st != 201 {
		t.Fatalf("create database: %d", st)
	}
	body := `{"id":"c","partitionKey":{"paths":["/pk"],"kind":"Hash","version":2}}`
	if st, _ := a.REST(t, "POST", "/dbs/db/colls", nil, body, nil); st != 201 {
		t.Fatalf("create container: %d", st)
	}
	pad := strings.Repeat("x", 1000)
	const perWorker = 30 // 180 items of about 1 KB
	var wg sync.WaitGroup
	errs := make(chan error, 6)
	var ids []azcosmos.ItemIdentity
	for n, nd := range nodes {
		for w := range 2 {
			for i := range perWorker {
				k := fmt.Sprintf("%s%d-%d", nd.Name, w, i)
				ids = append(ids, azcosmos.ItemIdentity{ID: k, PartitionKey: azcosmos.NewPartitionKeyString(k)})
			}
			wg.Go(func() {
				c, _ := nd.Client.NewContainer("db", "c")
				for i := range perWorker {
					k := fmt.Sprintf("%s%d-%d", nd.Name, w, i)
					doc := fmt.Sprintf(`{"id":%q,"pk":%q,"node":%d,"pad":%q}`, k, k, n, pad)
					if _, err := c.CreateItem(ctx, azcosmos.NewPartitionKeyString(k), []byte(doc), nil); err != nil {
						errs <- fmt.Errorf("create %s on node %s: %w", k, nd.Name, err)
						return
					}
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// The bytes of 180 items of 1 KB under a split size of 32 KB: at
	// least six partitions, each counted and within the size.
	var want int
	ebbproc.WaitFor(t, "every partition counted and within the split size", func() bool {
		var out struct {
			SplitSize  int64
			Partitions []struct {
				DocumentBytes int64
				Items         int
				Counted       bool
			}
		}
		if st, _ := a.REST(t, "GET", "/_ebb/containers/db/c/partitions", nil, "", &out); st != 200 || out.SplitSize != splitSize {
			t.Fatalf("partitions: %d, split size %d", st, out.SplitSize)
		}
		items := 0
		for _, p := range out.Partitions {
			if !p.Counted || p.DocumentBytes > splitSize {
				return false
			}
			items += p.Items
		}
		want = len(out.Partitions)
		return want >= 6 && items == len(ids)
	})
	for _, nd := range nodes {
		ebbproc.WaitFor(t, "node "+nd.Name+" to list the ranges", func() bool {
			var list struct{ PartitionKeyRanges []json.RawMessage }
			st, _ := nd.REST(t, "GET", "/dbs/db/colls/c/pkranges", nil, "", &list)
			return st == 200 && len(list.PartitionKeyRanges) == want
		})
		c, _ := nd.Client.NewContainer("db", "c")
		many, err := c.ReadManyItems(ctx, ids, nil)
		if err != nil || len(many.Items) != len(ids) {
			t.Fatalf("ReadMany through node %s: %d of %d items, %v", nd.Name, len(many.Items), len(ids), err)
		}
	}
	t.Logf("%d items written through three nodes, split into %d ranges", len(ids), want)
}
