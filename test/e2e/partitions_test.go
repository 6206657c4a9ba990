package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/ebbdb/ebb/internal/bench"
)

// TestPhysicalPartitions drives a container of four physical partitions
// through the Go SDK: its feed ranges, writes answered with their range's
// session token, a cross-partition query the gateway serves, ReadMany
// (which the SDK sends range by range), and the change feed read by feed
// range with the SDK's composite continuation.
func TestPhysicalPartitions(t *testing.T) {
	e := start(t)
	db := e.database(t, "db-parts")
	ctx := bench.WithPartitionCount(e.ctx, 4)
	if _, err := db.CreateContainer(ctx, pkProps("parts", "/pk"), nil); err != nil {
		t.Fatal(err)
	}
	c, _ := db.NewContainer("parts")

	ranges, err := c.ReadFeedRanges(e.ctx, nil)
	if err != nil || len(ranges) != 4 {
		t.Fatalf("feed ranges: %d, %v", len(ranges), err)
	}

	const items = 120
	sessions := map[string]bool{}
	for i := range items {
		pk := azcosmos.NewPartitionKeyString(fmt.Sprintf("k%d", i))
		resp, err := c.CreateItem(e.ctx, pk, fmt.Appendf(nil, `{"id":"i%d","pk":"k%d","n":%d}`, i, i, i), nil)
		if err != nil {
			t.Fatal(err)
		}
		sessions[strings.Split(*resp.SessionToken, ":")[0]] = true
	}
	if len(sessions) != 4 {
		t.Errorf("writes answered with the session tokens of %d ranges, want 4", len(sessions))
	}

	// A query across partitions, served by the gateway.
	pager := c.NewQueryItemsPager("SELECT VALUE c.n FROM c WHERE c.n >= 0", azcosmos.NewPartitionKey(), nil)
	var ns []int
	for pager.More() {
		page, err := pager.NextPage(e.ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, raw := range page.Items {
			var n int
			json.Unmarshal(raw, &n)
			ns = append(ns, n)
		}
	}
	slices.Sort(ns)
	if len(ns) != items || ns[0] != 0 || ns[items-1] != items-1 {
		t.Fatalf("cross-partition query: %d rows", len(ns))
	}

	// ReadMany of items in every partition.
	var want []azcosmos.ItemIdentity
	for i := 0; i < items; i += 7 {
		want = append(want, azcosmos.ItemIdentity{ID: fmt.Sprintf("i%d", i), PartitionKey: azcosmos.NewPartitionKeyString(fmt.Sprintf("k%d", i))})
	}
	many, err := c.ReadManyItems(e.ctx, want, nil)
	if err != nil || len(many.Items) != len(want) {
		t.Fatalf("ReadMany: %d of %d items, %v", len(many.Items), len(want), err)
	}

	// The change feed, range by range, and then from its continuations.
	seen := map[string]bool{}
	tokens := make([]string, len(ranges))
	for r := range ranges {
		got, token := drainSDK(t, e, c, azcosmos.ChangeFeedOptions{FeedRange: &ranges[r]}, 9)
		for _, doc := range got {
			id := doc["id"].(string)
			if seen[id] {
				t.Errorf("%s in two ranges' feeds", id)
			}
			seen[id] = true
		}
		tokens[r] = token
	}
	if len(seen) != items {
		t.Fatalf("the ranges' change feeds hold %d items, want %d", len(seen), items)
	}
	if _, err := c.UpsertItem(e.ctx, azcosmos.NewPartitionKeyString("k5"), []byte(`{"id":"i5","pk":"k5","n":500}`), nil); err != nil {
		t.Fatal(err)
	}
	changed := 0
	for r := range ranges {
		got, _ := drainSDK(t, e, c, azcosmos.ChangeFeedOptions{Continuation: &tokens[r]}, 9)
		for _, doc := range got {
			if doc["id"] != "i5" || doc["n"] != 500.0 {
				t.Errorf("range %d: unexpected change %v", r, doc)
			}
			changed++
		}
	}
	if changed != 1 {
		t.Fatalf("after one upsert the ranges' feeds hold %d changes", changed)
	}

	// The ranges, as the REST API lists them.
	res := newRest(t, e).do(t, "GET", "/dbs/db-parts/colls/parts/pkranges", nil, nil)
	var list struct {
		PartitionKeyRanges []struct {
			ID, MinInclusive, MaxExclusive string
			ThroughputFraction             float64
		}
	}
	if res.status != http.StatusOK || json.Unmarshal(res.body, &list) != nil || len(list.PartitionKeyRanges) != 4 {
		t.Fatalf("pkranges: %d %s", res.status, res.body)
	}
	if r := list.PartitionKeyRanges[3]; r.ID != "3" || r.MaxExclusive != "FF" || r.ThroughputFraction != 0.25 {
		t.Errorf("last range: %+v", r)
	}
}
