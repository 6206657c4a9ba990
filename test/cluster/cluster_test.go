// Package cluster runs three real ebb processes on one PostgreSQL
// database and checks that they serve one consistent database: writes on
// one node read on the others, conditional writes lose nothing across
// nodes and partitions, catalog changes reach every node, a mass expiry
// is purged exactly once while the node purging it is killed, and the
// database failing over to its standby loses no acknowledged write.
//
// It runs when EBB_TEST_POSTGRES_URL is set (see .ci/postgres.sh); the
// failover test also needs EBB_TEST_POSTGRES_BINDIR.
package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/ebbdb/ebb/internal/clock"
	"github.com/ebbdb/ebb/internal/storage/postgres/pgtest"
	"github.com/ebbdb/ebb/test/ebbproc"
)

var ebbBinary string

func TestMain(m *testing.M) {
	if os.Getenv(pgtest.EnvURL) == "" {
		fmt.Println("cluster tests skipped:", pgtest.EnvURL, "is not set")
		os.Exit(m.Run())
	}
	ebbproc.Main(m, &ebbBinary)
}

// startNodes starts n ebb processes on one fresh schema, named a, b, c…,
// each with the flags flags as well.
func startNodes(t *testing.T, n int, flags ...string) []*ebbproc.Process {
	t.Helper()
	store := pgtest.FreshSchema(t)
	var nodes []*ebbproc.Process
	for i := 0; i < n; i++ {
		name := string(rune('a' + i))
		args := append([]string{"--store", store, "--clock-control", "--node-id", name, "--ttl-lease", "1s"}, flags...)
		nodes = append(nodes, ebbproc.Start(t, ebbBinary, name, args...))
	}
	return nodes
}

func TestNodesShareOneDatabase(t *testing.T) {
	nodes := startNodes(t, 3)
	a, b, c := nodes[0], nodes[1], nodes[2]
	ctx := context.Background()
	// Create on a, use at once on b and c.
	if _, err := a.Client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "shop"}, nil); err != nil {
		t.Fatal(err)
	}
	db, _ := b.Client.NewDatabase("shop")
	def := int32(100)
	props := azcosmos.ContainerProperties{ID: "orders", DefaultTimeToLive: &def,
		PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}}}
	if _, err := db.CreateContainer(ctx, props, nil); err != nil {
		t.Fatalf("create container on b: %v", err)
	}
	pk := azcosmos.NewPartitionKeyString("p")
	ca, _ := a.Client.NewContainer("shop", "orders")
	cc, _ := c.Client.NewContainer("shop", "orders")
	if _, err := cc.CreateItem(ctx, pk, []byte(`{"id":"1","pk":"p","n":0}`), nil); err != nil {
		t.Fatalf("create item on c: %v", err)
	}
	for _, nd := range nodes {
		cl, _ := nd.Client.NewContainer("shop", "orders")
		if _, err := cl.ReadItem(ctx, pk, "1", nil); err != nil {
			t.Fatalf("read on %s: %v", nd.Name, err)
		}
	}

	// An If-Match storm across the nodes loses no update.
	const perWorker = 15
	var wg sync.WaitGroup
	errs := make(chan error, 9)
	for _, nd := range nodes {
		for w := 0; w < 3; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cl, _ := nd.Client.NewContainer("shop", "orders")
				for done := 0; done < perWorker; {
					won, err := ebbproc.IncrementIfMatch(ctx, cl, "p", "1")
					if err != nil {
						errs <- err
						return
					}
					if won {
						done++
					}
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	r, _ := ca.ReadItem(ctx, pk, "1", nil)
	var doc struct{ N int }
	json.Unmarshal(r.Value, &doc)
	if doc.N != 9*perWorker {
		t.Fatalf("counter = %d after %d acknowledged increments on three nodes", doc.N, 9*perWorker)
	}

	// A defaultTtl change on a applies on c.
	for _, nd := range nodes {
		nd.Advance(t, 50)
	}
	rp, err := ca.Read(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := *rp.ContainerProperties
	short := int32(10)
	p.DefaultTimeToLive = &short
	if _, err := ca.Replace(ctx, p, nil); err != nil {
		t.Fatal(err)
	}
	ebbproc.WaitFor(t, "the defaultTtl change made on a to hide the item on c", func() bool {
		_, err := cc.ReadItem(ctx, pk, "1", nil)
		var re *azcore.ResponseError
		return asResponseError(err, &re) && re.StatusCode == http.StatusNotFound
	})
}

// TestPurgeExactlyOnceAcrossFailover: a mass expiry on a slow offer; the
// node holding the purge lease is killed halfway; the others finish, and
// the all-versions-and-deletes feed has exactly one TTL delete per item.
func TestPurgeExactlyOnceAcrossFailover(t *testing.T) {
	for _, parts := range []int{1, 4} {
		t.Run(fmt.Sprintf("partitions=%d", parts), func(t *testing.T) { purgeExactlyOnce(t, parts) })
	}
}

// purgeExactlyOnce runs a mass expiry on three nodes, in a container of
// parts physical partitions, and kills a node that holds a purge lease in
// the middle: every item gets exactly one TTL delete record. With several
// partitions, several nodes purge at once, each its share.
func purgeExactlyOnce(t *testing.T, parts int) {
	nodes := startNodes(t, 3)
	a := nodes[0]
	if st, _ := a.REST(t, "POST", "/dbs", nil, `{"id":"db"}`, nil); st != 201 {
		t.Fatalf("create database: %d", st)
	}
	// 400 RU/s purges about 70 small items a second: slow enough to kill
	// a node in the middle.
	body := `{"id":"c","partitionKey":{"paths":["/pk"],"version":2},"defaultTtl":5,"changeFeedPolicy":{"retentionDuration":60}}`
	hdr := map[string]string{"x-ms-offer-throughput": "400", "x-ebb-partition-count": fmt.Sprint(parts)}
	if st, _ := a.REST(t, "POST", "/dbs/db/colls", hdr, body, nil); st != 201 {
		t.Fatalf("create container: %d", st)
	}
	// The all-versions feed starts from now: remember where now is.
	avad := map[string]string{"A-IM": "Full-Fidelity Feed", "x-ms-cosmos-changefeed-wire-format-version": "2021-09-15", "x-ms-max-item-count": "1000"}
	// Each range's, as a container of several partitions keeps one log
	// per partition.
	conts := make([]string, parts)
	for r := range parts {
		start := map[string]string{"If-None-Match": "*", "x-ms-documentdb-partitionkeyrangeid": fmt.Sprint(r)}
		for k, v := range avad {
			start[k] = v
		}
		code, h := a.REST(t, "GET", "/dbs/db/colls/c/docs", start, "", nil)
		conts[r] = h.Get("etag")
		if code != http.StatusNotModified || conts[r] == "" {
			t.Fatalf("feed of range %d from now: %d, etag %q", r, code, conts[r])
		}
	}
	// More items with more partitions: the purge must last until the
	// nodes share the partitions' leases.
	items := 300 * (1 + parts/4)
	for i := 0; i < items; i++ {
		doc := fmt.Sprintf(`{"id":"%d","pk":"p%d"}`, i, i%20)
		hdr := map[string]string{"x-ms-documentdb-partitionkey": fmt.Sprintf(`["p%d"]`, i%20)}
		if st, _ := nodes[i%3].REST(t, "POST", "/dbs/db/colls/c/docs", hdr, doc, nil); st != 201 {
			t.Fatalf("create item %d: %d", i, st)
		}
	}
	for _, nd := range nodes {
		nd.Advance(t, 10)
	}
	var holders string
	ebbproc.WaitFor(t, "the purge to start", func() bool {
		var backlog int
		backlog, holders = a.Backlog(t, "db", "c")
		// With several partitions, wait until nodes share them.
		shared := parts == 1 || strings.Contains(holders, ",")
		return holders != "" && shared && backlog < items && backlog > 0
	})
	victim, _, _ := strings.Cut(holders, ",")
	var survivor *ebbproc.Process
	for _, nd := range nodes {
		if nd.Name == victim {
			nd.Kill()
		} else {
			survivor = nd
		}
	}
	ebbproc.WaitFor(t, "the surviving nodes to finish the purge", func() bool {
		backlog, _ := survivor.Backlog(t, "db", "c")
		return backlog == 0
	})
	// Read the whole all-versions-and-deletes feed, range by range.
	deletes := map[string]int{}
	for r, cont := range conts {
		for {
			hdr := map[string]string{"If-None-Match": cont, "x-ms-documentdb-partitionkeyrangeid": fmt.Sprint(r)}
			for k, v := range avad {
				hdr[k] = v
			}
			var page struct {
				Documents []struct {
					Metadata struct {
						OperationType     string `json:"operationType"`
						TimeToLiveExpired bool   `json:"timeToLiveExpired"`
						ID                string `json:"id"`
					} `json:"metadata"`
				}
			}
			code, h := survivor.REST(t, "GET", "/dbs/db/colls/c/docs", hdr, "", &page)
			if code == http.StatusNotModified {
				break
			}
			if code != 200 {
				t.Fatalf("feed of range %d: %d", r, code)
			}
			for _, d := range page.Documents {
				if d.Metadata.OperationType == "delete" && d.Metadata.TimeToLiveExpired {
					deletes[d.Metadata.ID]++
				}
			}
			cont = h.Get("etag")
		}
	}
	if len(deletes) != items {
		t.Fatalf("%d items have a TTL delete record, want %d", len(deletes), items)
	}
	for id, n := range deletes {
		if n != 1 {
			t.Fatalf("item %s has %d TTL delete records", id, n)
		}
	}
}

func asResponseError(err error, re **azcore.ResponseError) bool {
	if err == nil {
		return false
	}
	e, ok := err.(*azcore.ResponseError)
	if ok {
		*re = e
	}
	return ok
}

// TestUniqueKeyAcrossNodes: clients on three nodes create items with the
// same unique value at once; exactly one create succeeds and the others
// get 409.
func TestUniqueKeyAcrossNodes(t *testing.T) {
	nodes := startNodes(t, 3)
	ctx := context.Background()
	if _, err := nodes[0].Client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "people"}, nil); err != nil {
		t.Fatal(err)
	}
	db, _ := nodes[0].Client.NewDatabase("people")
	props := azcosmos.ContainerProperties{ID: "users",
		PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}},
		UniqueKeyPolicy:        &azcosmos.UniqueKeyPolicy{UniqueKeys: []azcosmos.UniqueKey{{Paths: []string{"/email"}}}}}
	if _, err := db.CreateContainer(ctx, props, nil); err != nil {
		t.Fatal(err)
	}
	pk := azcosmos.NewPartitionKeyString("p")
	const perNode = 8
	var wg sync.WaitGroup
	var mu sync.Mutex
	created, conflicts := 0, 0
	for _, nd := range nodes {
		for w := 0; w < perNode; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cl, _ := nd.Client.NewContainer("people", "users")
				body := fmt.Sprintf(`{"id":"%s-%d","pk":"p","email":"same@example.com"}`, nd.Name, w)
				_, err := cl.CreateItem(ctx, pk, []byte(body), nil)
				var re *azcore.ResponseError
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					created++
				case asResponseError(err, &re) && re.StatusCode == http.StatusConflict:
					conflicts++
				default:
					t.Errorf("create on %s: %v", nd.Name, err)
				}
			}()
		}
	}
	wg.Wait()
	if created != 1 || conflicts != 3*perNode-1 {
		t.Fatalf("%d creates succeeded and %d got 409; want exactly one success", created, conflicts)
	}
}

// TestResourceTokenAcrossNodes: a resource token issued by one node
// works on another, and deleting its permission on the first revokes it
// on the second at the second's next catalog poll. The time it took is
// logged (the figure of docs/benchmarks.md), not asserted.
func TestResourceTokenAcrossNodes(t *testing.T) {
	nodes := startNodes(t, 2)
	a, b := nodes[0], nodes[1]
	for _, req := range []struct{ path, body string }{
		{"/dbs", `{"id":"shop"}`},
		{"/dbs/shop/colls", `{"id":"carts","partitionKey":{"paths":["/pk"]}}`},
		{"/dbs/shop/users", `{"id":"alice"}`},
	} {
		if st, _ := a.REST(t, "POST", req.path, nil, req.body, nil); st != http.StatusCreated {
			t.Fatalf("POST %s on a: %d", req.path, st)
		}
	}
	pk := map[string]string{"x-ms-documentdb-partitionkey": `["p"]`}
	if st, _ := a.REST(t, "POST", "/dbs/shop/colls/carts/docs", pk, `{"id":"1","pk":"p"}`, nil); st != http.StatusCreated {
		t.Fatalf("create item: %d", st)
	}
	var perm struct {
		Token string `json:"_token"`
	}
	if st, _ := a.REST(t, "POST", "/dbs/shop/users/alice/permissions", nil, `{"id":"cart","permissionMode":"All","resource":"dbs/shop/colls/carts"}`, &perm); st != http.StatusCreated {
		t.Fatalf("create permission: %d", st)
	}
	withToken := map[string]string{"authorization": url.QueryEscape(perm.Token), "x-ms-documentdb-partitionkey": `["p"]`}
	if st, _ := b.REST(t, "GET", "/dbs/shop/colls/carts/docs/1", withToken, "", nil); st != http.StatusOK {
		t.Fatalf("read with a token from a on b: %d", st)
	}
	if st, _ := a.REST(t, "DELETE", "/dbs/shop/users/alice/permissions/cart", nil, "", nil); st != http.StatusNoContent {
		t.Fatalf("delete permission: %d", st)
	}
	if st, _ := a.REST(t, "GET", "/dbs/shop/colls/carts/docs/1", withToken, "", nil); st != http.StatusUnauthorized {
		t.Fatalf("the revoked token on the node that revoked it: %d, want 401 at once", st)
	}
	wall := clock.NewSystem()
	ebbproc.WaitFor(t, "the token revoked on b", func() bool {
		st, _ := b.REST(t, "GET", "/dbs/shop/colls/carts/docs/1", withToken, "", nil)
		return st == http.StatusUnauthorized
	})
	t.Logf("a revoked token stopped working on the other node after %v", wall.Elapsed().Round(time.Millisecond))
}
