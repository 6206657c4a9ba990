// Package cluster runs three real ebb processes on one PostgreSQL
// database and checks that they serve one consistent database: writes on
// one node read on the others, conditional writes lose nothing across
// nodes, catalog changes reach every node, and a mass expiry is purged
// exactly once while the node purging it is killed.
//
// It runs when EBB_TEST_POSTGRES_URL is set (see .ci/postgres.sh).
package cluster

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/ebbdb/ebb/internal/auth"
	"github.com/ebbdb/ebb/internal/storage/postgres/pgtest"
)

var ebbBinary string

func TestMain(m *testing.M) {
	if os.Getenv(pgtest.EnvURL) == "" {
		fmt.Println("cluster tests skipped:", pgtest.EnvURL, "is not set")
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "ebb-cluster-bin-*")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ebbBinary = filepath.Join(dir, "ebb")
	build := exec.Command("go", "build", "-o", ebbBinary, "../../cmd/ebb")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build ebb:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type node struct {
	name     string
	cmd      *exec.Cmd
	endpoint string
	client   *azcosmos.Client
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startNodes starts n ebb processes on one fresh schema.
func startNodes(t *testing.T, n int) []*node {
	t.Helper()
	store := pgtest.FreshSchema(t)
	var nodes []*node
	for i := 0; i < n; i++ {
		name := string(rune('a' + i))
		port := freePort(t)
		cmd := exec.Command(ebbBinary, "--store", store, "--no-tls", "--clock-control", "--node-id", name,
			"--ttl-lease", "1s", "--listen", fmt.Sprintf("127.0.0.1:%d", port), "--log-level", "error")
		stdout, _ := cmd.StdoutPipe()
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if err != nil || !strings.Contains(line, "serving") {
			cmd.Process.Kill()
			t.Fatalf("node %s did not start: %q, %v", name, line, err)
		}
		go io.Copy(io.Discard, stdout)
		nd := &node{name: name, cmd: cmd, endpoint: fmt.Sprintf("http://127.0.0.1:%d/", port)}
		cred, _ := azcosmos.NewKeyCredential(auth.EmulatorKey)
		nd.client, _ = azcosmos.NewClientWithKey(nd.endpoint, cred, &azcosmos.ClientOptions{
			ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}},
		})
		nodes = append(nodes, nd)
		t.Cleanup(nd.kill)
	}
	return nodes
}

func (n *node) kill() {
	if n.cmd.ProcessState == nil {
		n.cmd.Process.Kill()
		n.cmd.Wait()
	}
}

// rest sends a signed request to a node and decodes a JSON answer.
func (n *node) rest(t *testing.T, method, path string, hdr map[string]string, body string, out any) int {
	t.Helper()
	v, _ := auth.NewVerifier(auth.EmulatorKey)
	date := time.Now().UTC().Format(http.TimeFormat)
	typ, link, _ := auth.ResourceOf(path)
	req, _ := http.NewRequest(method, strings.TrimSuffix(n.endpoint, "/")+path, strings.NewReader(body))
	req.Header.Set("x-ms-date", date)
	req.Header.Set("authorization", v.Sign(method, typ, link, date))
	req.Header.Set("content-type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s on node %s: %v", method, path, n.name, err)
	}
	defer resp.Body.Close()
	if out != nil && resp.StatusCode < 300 {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
	}
	return resp.StatusCode
}

func (n *node) advance(t *testing.T, seconds int) {
	t.Helper()
	if st := n.rest(t, "POST", "/_ebb/clock", nil, fmt.Sprintf(`{"advanceSeconds":%d}`, seconds), nil); st != 200 {
		t.Fatalf("advance clock on %s: %d", n.name, st)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		<-tick.C
	}
}

func TestNodesShareOneDatabase(t *testing.T) {
	nodes := startNodes(t, 3)
	a, b, c := nodes[0], nodes[1], nodes[2]
	ctx := context.Background()
	// Create on a, use at once on b and c.
	if _, err := a.client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "shop"}, nil); err != nil {
		t.Fatal(err)
	}
	db, _ := b.client.NewDatabase("shop")
	def := int32(100)
	props := azcosmos.ContainerProperties{ID: "orders", DefaultTimeToLive: &def,
		PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}}}
	if _, err := db.CreateContainer(ctx, props, nil); err != nil {
		t.Fatalf("create container on b: %v", err)
	}
	pk := azcosmos.NewPartitionKeyString("p")
	ca, _ := a.client.NewContainer("shop", "orders")
	cc, _ := c.client.NewContainer("shop", "orders")
	if _, err := cc.CreateItem(ctx, pk, []byte(`{"id":"1","pk":"p","n":0}`), nil); err != nil {
		t.Fatalf("create item on c: %v", err)
	}
	for _, nd := range nodes {
		cl, _ := nd.client.NewContainer("shop", "orders")
		if _, err := cl.ReadItem(ctx, pk, "1", nil); err != nil {
			t.Fatalf("read on %s: %v", nd.name, err)
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
				cl, _ := nd.client.NewContainer("shop", "orders")
				for done := 0; done < perWorker; {
					r, err := cl.ReadItem(ctx, pk, "1", nil)
					if err != nil {
						errs <- err
						return
					}
					var doc struct{ N int }
					json.Unmarshal(r.Value, &doc)
					etag := r.ETag
					body := fmt.Sprintf(`{"id":"1","pk":"p","n":%d}`, doc.N+1)
					_, err = cl.ReplaceItem(ctx, pk, "1", []byte(body), &azcosmos.ItemOptions{IfMatchEtag: &etag})
					var re *azcore.ResponseError
					switch {
					case err == nil:
						done++
					case asResponseError(err, &re) && re.StatusCode == http.StatusPreconditionFailed:
					default:
						errs <- err
						return
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
		nd.advance(t, 50)
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
	waitFor(t, "the defaultTtl change made on a to hide the item on c", func() bool {
		_, err := cc.ReadItem(ctx, pk, "1", nil)
		var re *azcore.ResponseError
		return asResponseError(err, &re) && re.StatusCode == http.StatusNotFound
	})
}

// TestPurgeExactlyOnceAcrossFailover: a mass expiry on a slow offer; the
// node holding the purge lease is killed halfway; the others finish, and
// the all-versions-and-deletes feed has exactly one TTL delete per item.
func TestPurgeExactlyOnceAcrossFailover(t *testing.T) {
	nodes := startNodes(t, 3)
	a := nodes[0]
	if st := a.rest(t, "POST", "/dbs", nil, `{"id":"db"}`, nil); st != 201 {
		t.Fatalf("create database: %d", st)
	}
	// 400 RU/s purges about 70 small items a second: slow enough to kill
	// a node in the middle.
	body := `{"id":"c","partitionKey":{"paths":["/pk"]},"defaultTtl":5,"changeFeedPolicy":{"retentionDuration":60}}`
	if st := a.rest(t, "POST", "/dbs/db/colls", map[string]string{"x-ms-offer-throughput": "400"}, body, nil); st != 201 {
		t.Fatalf("create container: %d", st)
	}
	// The all-versions feed starts from now: remember where now is.
	avad := map[string]string{"A-IM": "Full-Fidelity Feed", "x-ms-cosmos-changefeed-wire-format-version": "2021-09-15", "x-ms-max-item-count": "1000"}
	start := map[string]string{"If-None-Match": "*"}
	for k, v := range avad {
		start[k] = v
	}
	code, cont := restFeed(t, a, start, nil)
	if code != http.StatusNotModified || cont == "" {
		t.Fatalf("feed from now: %d, etag %q", code, cont)
	}
	const items = 300
	for i := 0; i < items; i++ {
		doc := fmt.Sprintf(`{"id":"%d","pk":"p%d"}`, i, i%5)
		hdr := map[string]string{"x-ms-documentdb-partitionkey": fmt.Sprintf(`["p%d"]`, i%5)}
		if st := nodes[i%3].rest(t, "POST", "/dbs/db/colls/c/docs", hdr, doc, nil); st != 201 {
			t.Fatalf("create item %d: %d", i, st)
		}
	}
	for _, nd := range nodes {
		nd.advance(t, 10)
	}
	type status struct {
		Backlog     int
		LeaseHolder string
	}
	var st status
	waitFor(t, "the purge to start", func() bool {
		a.rest(t, "GET", "/_ebb/containers/db/c/ttl", nil, "", &st)
		return st.LeaseHolder != "" && st.Backlog < items && st.Backlog > 0
	})
	var survivor *node
	for _, nd := range nodes {
		if nd.name == st.LeaseHolder {
			nd.kill()
		} else {
			survivor = nd
		}
	}
	waitFor(t, "the surviving nodes to finish the purge", func() bool {
		survivor.rest(t, "GET", "/_ebb/containers/db/c/ttl", nil, "", &st)
		return st.Backlog == 0
	})
	// Read the whole all-versions-and-deletes feed.
	deletes := map[string]int{}
	for {
		hdr := map[string]string{"If-None-Match": cont}
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
		code, etag := restFeed(t, survivor, hdr, &page)
		if code == http.StatusNotModified {
			break
		}
		if code != 200 {
			t.Fatalf("feed: %d", code)
		}
		for _, d := range page.Documents {
			if d.Metadata.OperationType == "delete" && d.Metadata.TimeToLiveExpired {
				deletes[d.Metadata.ID]++
			}
		}
		cont = etag
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

func restFeed(t *testing.T, n *node, hdr map[string]string, out any) (int, string) {
	t.Helper()
	v, _ := auth.NewVerifier(auth.EmulatorKey)
	date := time.Now().UTC().Format(http.TimeFormat)
	path := "/dbs/db/colls/c/docs"
	typ, link, _ := auth.ResourceOf(path)
	req, _ := http.NewRequest("GET", strings.TrimSuffix(n.endpoint, "/")+path, nil)
	req.Header.Set("x-ms-date", date)
	req.Header.Set("authorization", v.Sign("GET", typ, link, date))
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == 200 {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatal(err)
		}
	}
	return resp.StatusCode, resp.Header.Get("etag")
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
