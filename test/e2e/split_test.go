package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/ebbdb/ebb/internal/auth"
	"github.com/ebbdb/ebb/internal/bench"
	"github.com/ebbdb/ebb/internal/clock"
	"github.com/ebbdb/ebb/internal/server"
)

// TestSplitUnderLoad splits a partition key range while Go SDK clients
// write to every range and read the change feed by feed range: no write
// fails, the feed, which the SDK carries over to the split's children
// on its own, ends with every acknowledged version of every item and
// delivers no version twice, and
// ReadMany, which the SDK sends range by range, finds every item in the
// new ranges.
func TestSplitUnderLoad(t *testing.T) {
	e := start(t)
	splitUnderLoad(t, e, splitLoad{partitions: 2, split: func(t *testing.T) {
		res := newRest(t, e).do(t, "POST", "/_ebb/containers/db-split/split/split", nil, []byte(`{"partitionKeyRangeId":"0"}`))
		if res.status != http.StatusOK {
			t.Fatalf("split: %d %s", res.status, res.body)
		}
	}, ranges: 3})
}

// TestSizeSplitUnderLoad is TestSplitUnderLoad with the split the
// server makes on its own: the container starts with one range, and its
// documents grow past --partition-split-size (48 KB here, 50 GB by
// default) as the writers write, so it is split, and its children in
// turn, while they go on.
func TestSizeSplitUnderLoad(t *testing.T) {
	e := startWith(t, server.Config{Memory: true, PartitionSplitSize: 48 << 10})
	splitUnderLoad(t, e, splitLoad{partitions: 1, pad: 1500, split: func(t *testing.T) {
		c, _ := e.client.NewContainer("db-split", "split")
		wall := clock.NewSystem()
		for began := wall.Elapsed(); wall.Elapsed()-began < 10*time.Second; {
			if r, err := c.ReadFeedRanges(e.ctx, nil); err == nil && len(r) >= 3 {
				return
			}
			runtime.Gosched()
		}
		t.Fatal("the container's ranges were not split by size within 10 s")
	}, ranges: 3})

	// In the end every partition is counted and holds less than the
	// split size, as Ebb's partitions call reports them.
	rc := newRest(t, e)
	wall := clock.NewSystem()
	for began := wall.Elapsed(); ; runtime.Gosched() {
		res := rc.do(t, "GET", "/_ebb/containers/db-split/split/partitions", nil, nil)
		var out struct {
			SplitSize  int64
			Partitions []struct {
				PartitionKeyRangeID string
				DocumentBytes       int64
				Items               int
				Counted             bool
			}
		}
		if res.status != http.StatusOK || json.Unmarshal(res.body, &out) != nil || out.SplitSize != 48<<10 {
			t.Fatalf("partitions: %d %s", res.status, res.body)
		}
		items, done := 0, true
		for _, p := range out.Partitions {
			items += p.Items
			done = done && p.Counted && p.DocumentBytes <= out.SplitSize
		}
		if done && items == 100 {
			break
		}
		if wall.Elapsed()-began > 10*time.Second {
			t.Fatalf("the partitions were not all counted and within the split size after 10 s: %s", res.body)
		}
	}
}

// splitLoad is a run of splitUnderLoad.
type splitLoad struct {
	partitions int                // the container's, to begin with
	pad        int                // bytes of padding in each item
	split      func(t *testing.T) // splits a range, or waits until one is
	ranges     int                // the least number of ranges after
}

func splitUnderLoad(t *testing.T, e *env, run splitLoad) {
	db := e.database(t, "db-split")
	if _, err := db.CreateContainer(bench.WithPartitionCount(e.ctx, run.partitions), pkProps("split", "/pk"), nil); err != nil {
		t.Fatal(err)
	}
	pad := strings.Repeat("x", run.pad)
	// The clients count the 410s the SDK meets (and handles) below it.
	var gone atomic.Int64
	cred, _ := azcosmos.NewKeyCredential(auth.EmulatorKey)
	client, err := azcosmos.NewClientWithKey(e.srv.URL, cred, &azcosmos.ClientOptions{ClientOptions: azcore.ClientOptions{
		Transport: insecureTransport(), PerRetryPolicies: []policy.Policy{statusCounter{http.StatusGone, &gone}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	c, _ := client.NewContainer("db-split", "split")
	ranges, err := c.ReadFeedRanges(e.ctx, nil)
	if err != nil || len(ranges) != run.partitions {
		t.Fatalf("feed ranges: %d, %v", len(ranges), err)
	}

	// Four writers, each upserting its own items in turn.
	const writers, perWriter = 4, 25
	var (
		stop   atomic.Bool
		wg     sync.WaitGroup
		mu     sync.Mutex
		acked  = map[string]int{}
		writes atomic.Int64
	)
	// Writers stop with the test, however it ends.
	t.Cleanup(func() { stop.Store(true); wg.Wait() })
	// A reader of the change feed by feed range, from the beginning and
	// then from its continuation token, keeping each item's latest n.
	seen := map[string]int{}
	versions := map[string]bool{} // id@n, each delivered once
	tokens := make([]string, len(ranges))
	readFeed := func() {
		t.Helper()
		for r := range ranges {
			opts := azcosmos.ChangeFeedOptions{MaxItemCount: 50}
			if tokens[r] == "" {
				opts.FeedRange = &ranges[r]
			} else {
				opts.Continuation = &tokens[r]
			}
			for range 1000 {
				resp, err := c.ReadChangeFeed(e.ctx, &opts)
				if err != nil {
					t.Fatalf("change feed of range %d: %v", r, err)
				}
				tokens[r] = resp.ContinuationToken
				opts.FeedRange, opts.Continuation = nil, &tokens[r]
				if resp.RawResponse.StatusCode == http.StatusNotModified {
					break
				}
				for _, raw := range resp.Items {
					var doc struct {
						ID string
						N  int
					}
					json.Unmarshal(raw, &doc)
					seen[doc.ID] = max(seen[doc.ID], doc.N)
					v := fmt.Sprintf("%s@%d", doc.ID, doc.N)
					if versions[v] {
						t.Errorf("the change feed delivered %s twice", v)
					}
					versions[v] = true
				}
			}
		}
	}
	// The reader has read every range once before the first write, so
	// it holds a continuation of the range that is split.
	readFeed()
	for w := range writers {
		wg.Go(func() {
			for n := 1; !stop.Load(); n++ {
				for i := range perWriter {
					id := fmt.Sprintf("w%d-%d", w, i)
					body := fmt.Appendf(nil, `{"id":%q,"pk":%q,"n":%d,"pad":%q}`, id, id, n, pad)
					if _, err := c.UpsertItem(e.ctx, azcosmos.NewPartitionKeyString(id), body, nil); err != nil {
						t.Errorf("upsert %s: %v", id, err)
						stop.Store(true)
						return
					}
					mu.Lock()
					acked[id] = n
					mu.Unlock()
					writes.Add(1)
				}
			}
		})
	}

	for writes.Load() < 300 && !stop.Load() {
		readFeed()
	}

	// Split while the writers go on.
	wall := clock.NewSystem()
	began := wall.Elapsed()
	run.split(t)
	took := wall.Elapsed() - began
	at := writes.Load()
	for writes.Load() < at+300 && !stop.Load() {
		readFeed()
	}
	stop.Store(true)
	wg.Wait()
	readFeed()

	after, _ := c.ReadFeedRanges(e.ctx, nil)
	if len(after) < run.ranges {
		t.Errorf("%d feed ranges after the split, want at least %d", len(after), run.ranges)
	}
	for id, n := range acked {
		if seen[id] != n {
			t.Errorf("%s: the change feed's latest version is n=%d, the last acknowledged n=%d", id, seen[id], n)
		}
	}
	var ids []azcosmos.ItemIdentity
	for id := range acked {
		ids = append(ids, azcosmos.ItemIdentity{ID: id, PartitionKey: azcosmos.NewPartitionKeyString(id)})
	}
	many, err := c.ReadManyItems(e.ctx, ids, nil)
	if err != nil || len(many.Items) != len(ids) {
		t.Fatalf("ReadMany after the split: %d of %d items, %v", len(many.Items), len(ids), err)
	}
	if gone.Load() == 0 {
		t.Error("the SDK never met the split (no 410): the test did not test it")
	}
	t.Logf("split under load (the split, or the wait for it, took %v; ranges %d to %d): %d writes by 4 writers, none failed; the SDK met %d 410s and carried on; 0 of %d items' last versions missing from the change feed, none delivered twice", took, run.partitions, len(after), writes.Load(), gone.Load(), len(acked))
}

// statusCounter counts the responses of one status.
type statusCounter struct {
	status int
	n      *atomic.Int64
}

func (s statusCounter) Do(req *policy.Request) (*http.Response, error) {
	resp, err := req.Next()
	if err == nil && resp.StatusCode == s.status {
		s.n.Add(1)
	}
	return resp, err
}

// TestSplitRefusals: the split call and Ebb's create header refuse what
// they would otherwise ignore.
func TestSplitRefusals(t *testing.T) {
	e := start(t)
	e.container(t, pkProps("refuse", "/pk"))
	rc := newRest(t, e)
	for _, body := range []string{`{}`, `{"partitionKeyRangeId":"0","at":"middle"}`, `[`} {
		res := rc.do(t, "POST", "/_ebb/containers/db-refuse/refuse/split", nil, []byte(body))
		if res.status != http.StatusBadRequest || !strings.Contains(string(res.body), "partitionKeyRangeId") {
			t.Errorf("split with %s: %d %s", body, res.status, res.body)
		}
	}
	res := rc.do(t, "POST", "/_ebb/containers/db-refuse/refuse/split", nil, []byte(`{"partitionKeyRangeId":"7"}`))
	if res.status != http.StatusGone || res.header.Get("x-ms-substatus") != "1002" {
		t.Errorf("split of a range that is not: %d %s", res.status, res.body)
	}
	res = rc.do(t, "GET", "/dbs/db-refuse/colls/refuse", map[string]string{"x-ebb-partition-count": "4"}, nil)
	if res.status != http.StatusBadRequest || !strings.Contains(string(res.body), "x-ebb-partition-count") {
		t.Errorf("x-ebb-partition-count on a container read: %d %s", res.status, res.body)
	}
}

// TestPartitionKeyRangesIncremental: read as an incremental feed (A-IM,
// as the Go SDK reads it) from an earlier etag, the container's ranges
// are those made since, each naming what it replaces among its parents;
// from the current etag, 304; read whole, or from an etag that is not
// the container's, all of them; another A-IM is refused with 400. The
// Go SDK, whose refresh reads the feed from the start and then from each
// page's etag, sees each range once after splits in a row.
func TestPartitionKeyRangesIncremental(t *testing.T) {
	e := start(t)
	db := e.database(t, "db-inc")
	if _, err := db.CreateContainer(bench.WithPartitionCount(e.ctx, 2), pkProps("inc", "/pk"), nil); err != nil {
		t.Fatal(err)
	}
	rc := newRest(t, e)
	const path = "/dbs/db-inc/colls/inc/pkranges"
	type pkRange struct {
		ID      string
		Parents []string
	}
	read := func(h map[string]string) (int, string, []pkRange) {
		t.Helper()
		res := rc.do(t, "GET", path, h, nil)
		var list struct{ PartitionKeyRanges []pkRange }
		if res.status == http.StatusOK && json.Unmarshal(res.body, &list) != nil {
			t.Fatalf("pkranges: %s", res.body)
		}
		return res.status, res.header.Get("etag"), list.PartitionKeyRanges
	}
	since := func(etag string) map[string]string {
		return map[string]string{"A-IM": "Incremental feed", "If-None-Match": etag}
	}
	ids := func(rs []pkRange) string {
		var s []string
		for _, r := range rs {
			s = append(s, r.ID+"<"+strings.Join(r.Parents, ",")+">")
		}
		return strings.Join(s, " ")
	}
	split := func(id string) {
		t.Helper()
		res := rc.do(t, "POST", "/_ebb/containers/db-inc/inc/split", nil, []byte(`{"partitionKeyRangeId":"`+id+`"}`))
		if res.status != http.StatusOK {
			t.Fatalf("split %s: %d %s", id, res.status, res.body)
		}
	}
	status, first, all := read(nil)
	if status != http.StatusOK || ids(all) != "0<> 1<>" {
		t.Fatalf("the ranges: %d %s", status, ids(all))
	}
	if status, _, _ := read(since(first)); status != http.StatusNotModified {
		t.Fatalf("from the current etag: %d, want 304", status)
	}
	split("0")
	status, second, got := read(since(first))
	if status != http.StatusOK || ids(got) != "2<0> 3<0>" || second == first {
		t.Fatalf("from the first etag after a split: %d %s (etag %s)", status, ids(got), second)
	}
	split("2")
	for _, tt := range []struct {
		h    map[string]string
		want string
	}{
		{since(first), "4<0,2> 5<0,2> 3<0>"},
		{since(second), "4<0,2> 5<0,2>"},
		{since(`"pkranges-other-1"`), "4<0,2> 5<0,2> 3<0> 1<>"},
		{map[string]string{"If-None-Match": first}, "4<0,2> 5<0,2> 3<0> 1<>"},
		{map[string]string{"A-IM": "Incremental Feed"}, "4<0,2> 5<0,2> 3<0> 1<>"},
		{nil, "4<0,2> 5<0,2> 3<0> 1<>"},
	} {
		if status, _, got := read(tt.h); status != http.StatusOK || ids(got) != tt.want {
			t.Errorf("with %v: %d %s, want %s", tt.h, status, ids(got), tt.want)
		}
	}
	// What is not a feed of ranges is refused, not read as none.
	res := rc.do(t, "GET", path, map[string]string{"A-IM": "Full-Fidelity Feed", "If-None-Match": first}, nil)
	if res.status != http.StatusBadRequest || !strings.Contains(string(res.body), "A-IM") {
		t.Errorf("pkranges with A-IM Full-Fidelity Feed: %d %s", res.status, res.body)
	}
	c, _ := e.client.NewContainer("db-inc", "inc")
	if r, err := c.ReadFeedRanges(e.ctx, nil); err != nil || len(r) != 4 {
		t.Fatalf("the Go SDK's feed ranges: %d, %v", len(r), err)
	}
}
