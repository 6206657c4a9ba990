package e2e

import (
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/ebbdb/ebb/internal/clock/clocktest"
	"github.com/ebbdb/ebb/internal/server"
)

// ttlContainer makes a container with the given defaultTtl (nil = off).
func ttlContainer(t *testing.T, e *env, id string, def *int32) *azcosmos.ContainerClient {
	t.Helper()
	p := pkProps(id, "/pk")
	p.DefaultTimeToLive = def
	return e.container(t, p)
}

var pk = azcosmos.NewPartitionKeyString("p")

// visibleEverywhere reports whether item id is visible to a point read,
// a query, an aggregate and the read feed, and fails if they disagree.
func visibleEverywhere(t *testing.T, e *env, c *azcosmos.ContainerClient, id string) bool {
	t.Helper()
	_, err := c.ReadItem(e.ctx, pk, id, nil)
	read := err == nil
	if err != nil && status(err) != http.StatusNotFound {
		t.Fatalf("read %s: %v", id, err)
	}
	q := fmt.Sprintf("SELECT * FROM c WHERE c.id = '%s'", id)
	query := len(queryAll(t, e, c, q, pk, nil)) == 1
	counted := queryAll(t, e, c, fmt.Sprintf("SELECT VALUE COUNT(1) FROM c WHERE c.id = '%s'", id), pk, nil)
	count := len(counted) == 1 && string(counted[0]) == "1"
	feed := false
	for _, row := range queryAll(t, e, c, "SELECT * FROM c", azcosmos.NewPartitionKey(), nil) {
		if decode(t, row)["id"] == id {
			feed = true
		}
	}
	if read != query || read != count || read != feed {
		t.Fatalf("item %s: read %v, query %v, count %v, cross-partition scan %v disagree", id, read, query, count, feed)
	}
	return read
}

// TestTTLSubSecondWrite: a write at x.999 s still gets _ts = x, so an
// item with ttl 1 lives 0.001 s. (The TTL contract's data file, run by
// TestTTLMatrix, moves the clock in whole seconds only.)
func TestTTLSubSecondWrite(t *testing.T) {
	e := start(t)
	c := ttlContainer(t, e, "edge", int32p(-1))
	e.clock.Advance(999 * time.Millisecond)
	r, err := c.CreateItem(e.ctx, pk, []byte(`{"id":"one","pk":"p","ttl":1}`), &azcosmos.ItemOptions{EnableContentResponseOnWrite: true})
	if err != nil {
		t.Fatal(err)
	}
	if ts := int64(decode(t, r.Value)["_ts"].(float64)); ts != epoch.Unix() {
		t.Fatalf("_ts = %d, want %d (whole seconds)", ts, epoch.Unix())
	}
	if !visibleEverywhere(t, e, c, "one") {
		t.Fatal("ttl 1 gone within its second")
	}
	e.clock.Advance(time.Millisecond)
	if visibleEverywhere(t, e, c, "one") {
		t.Fatal("ttl 1 visible at _ts+1")
	}
}

// TestPurgeIsPhysical shows the purger really deletes: once an item is
// purged, turning TTL off cannot bring it back.
func TestPurgeIsPhysical(t *testing.T) {
	e := start(t)
	c := ttlContainer(t, e, "purge", int32p(5))
	for i := 0; i < 50; i++ {
		id := strconv.Itoa(i)
		if _, err := c.CreateItem(e.ctx, pk, []byte(`{"id":"`+id+`","pk":"p"}`), nil); err != nil {
			t.Fatal(err)
		}
	}
	e.clock.Advance(5 * time.Second)
	clocktest.WaitUntil(t, "purge of 50 expired items", func() bool { return e.srv.Engine.StoredItems() == 0 })
	r, err := c.Read(e.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := *r.ContainerProperties
	p.DefaultTimeToLive = nil
	if _, err := c.Replace(e.ctx, p, nil); err != nil {
		t.Fatal(err)
	}
	if n := len(queryAll(t, e, c, "SELECT * FROM c", azcosmos.NewPartitionKey(), nil)); n != 0 {
		t.Fatalf("%d purged items came back", n)
	}
}

// TestQueriesWhileItemsExpire pages through every kind of query while the
// manual clock moves 3 s between pages and a third of the items expire
// along the way (at 10 to 14 s), with the purger off (expired items stay
// stored and must be hidden) and on: every page holds only items alive
// when it was served, no row comes twice, every item that never expires
// comes once, ORDER BY stays in order across pages (served from the
// range index, the composite index, and a heap), and aggregates, GROUP
// BY and DISTINCT count only live items at every step.
func TestQueriesWhileItemsExpire(t *testing.T) {
	for _, purger := range []bool{false, true} {
		t.Run(fmt.Sprintf("purger-%v", purger), func(t *testing.T) {
			e := startWith(t, server.Config{Memory: true, DisablePurger: !purger})
			props := pkProps("expiring", "/pk")
			props.DefaultTimeToLive = int32p(-1)
			props.IndexingPolicy = withComposite(
				azcosmos.CompositeIndex{Path: "/g", Order: azcosmos.CompositeIndexAscending},
				azcosmos.CompositeIndex{Path: "/n", Order: azcosmos.CompositeIndexAscending})
			c := e.container(t, props)
			const items = 40
			expiresAt := map[string]time.Time{} // absent: never
			for i := range items {
				id := fmt.Sprintf("i%02d", i)
				doc := map[string]any{"id": id, "pk": fmt.Sprintf("p%d", i%3), "n": i, "g": fmt.Sprintf("g%d", i%4), "tags": []string{fmt.Sprintf("t%d", i%2)}}
				if i%3 == 0 {
					doc["ttl"] = 10 + i%5
					expiresAt[id] = epoch.Add(time.Duration(10+i%5) * time.Second)
				}
				if _, err := c.CreateItem(e.ctx, azcosmos.NewPartitionKeyString(doc["pk"].(string)), mustJSON(t, doc), nil); err != nil {
					t.Fatal(err)
				}
			}
			alive := func(id string, at time.Time) bool {
				exp, ok := expiresAt[id]
				return !ok || at.Before(exp)
			}
			type run struct {
				q string
				// key, for ORDER BY queries, is the sort key of a row,
				// which must not decrease from row to row.
				key func(m map[string]any) string
				// all: every item that never expires is a row.
				all   bool
				pager *runtime.Pager[azcosmos.QueryItemsResponse]
				seen  map[string]bool
				last  string
			}
			num := func(m map[string]any) int { return int(m["n"].(float64)) }
			runs := []*run{
				{q: "SELECT * FROM c", all: true},
				{q: "SELECT * FROM c WHERE c.g = 'g1'"},
				{q: "SELECT * FROM c ORDER BY c.n DESC", all: true, key: func(m map[string]any) string { return fmt.Sprintf("%03d", 100-num(m)) }},
				{q: "SELECT * FROM c ORDER BY c.g, c.n", all: true, key: func(m map[string]any) string { return fmt.Sprintf("%s/%03d", m["g"], num(m)) }},
				{q: "SELECT * FROM c ORDER BY c.g DESC, c.n", all: true, key: func(m map[string]any) string { return fmt.Sprintf("%c/%03d", 'z'-m["g"].(string)[1], num(m)) }},
				{q: "SELECT TOP 15 * FROM c WHERE c.n >= 0 ORDER BY c.n", key: func(m map[string]any) string { return fmt.Sprintf("%03d", num(m)) }},
				{q: "SELECT * FROM c ORDER BY c.n OFFSET 5 LIMIT 20", key: func(m map[string]any) string { return fmt.Sprintf("%03d", num(m)) }},
				{q: "SELECT c.id FROM c JOIN t IN c.tags WHERE t = 't1'"},
			}
			for _, r := range runs {
				r.pager = c.NewQueryItemsPager(r.q, azcosmos.NewPartitionKey(), &azcosmos.QueryOptions{PageSizeHint: 4})
				r.seen = map[string]bool{}
			}
			// In rounds, each query takes its next page, then the clock
			// moves on (it never goes back: Ebb's TTL clock only moves
			// forwards).
			for round := 0; ; round++ {
				at := e.clock.Now()
				live := 0
				for i := range items {
					if alive(fmt.Sprintf("i%02d", i), at) {
						live++
					}
				}
				// Aggregates and GROUP BY count only the live items.
				if got := queryAll(t, e, c, "SELECT VALUE COUNT(1) FROM c", azcosmos.NewPartitionKey(), nil); len(got) != 1 || string(got[0]) != fmt.Sprint(live) {
					t.Fatalf("COUNT at %v: %s, want %d", at, got, live)
				}
				sum := 0
				for _, raw := range queryAll(t, e, c, "SELECT c.g, COUNT(1) AS n FROM c GROUP BY c.g", azcosmos.NewPartitionKey(), nil) {
					sum += int(decode(t, raw)["n"].(float64))
				}
				if sum != live {
					t.Fatalf("GROUP BY counts at %v sum to %d, want %d", at, sum, live)
				}
				if got := queryAll(t, e, c, "SELECT DISTINCT VALUE c.id FROM c", azcosmos.NewPartitionKey(), nil); len(got) != live {
					t.Fatalf("DISTINCT at %v: %d rows, want %d", at, len(got), live)
				}
				more := false
				for _, r := range runs {
					if !r.pager.More() {
						continue
					}
					more = true
					page, err := r.pager.NextPage(e.planCtx)
					if err != nil {
						t.Fatalf("%s: %v", r.q, err)
					}
					for _, raw := range page.Items {
						m := decode(t, raw)
						id := m["id"].(string)
						if !alive(id, at) {
							t.Fatalf("%s: %s, expired at %v, served at %v", r.q, id, expiresAt[id], at)
						}
						if r.seen[id] {
							t.Fatalf("%s: %s returned twice", r.q, id)
						}
						r.seen[id] = true
						if r.key != nil {
							k := r.key(m)
							if k < r.last {
								t.Fatalf("%s: %s (key %s) after key %s", r.q, id, k, r.last)
							}
							r.last = k
						}
					}
				}
				if !more {
					if at.Sub(epoch) < 15*time.Second {
						t.Fatalf("the queries ended after %d rounds, before every item expired", round)
					}
					break
				}
				e.clock.Advance(3 * time.Second)
			}
			for _, r := range runs {
				if !r.all {
					continue
				}
				for i := range items {
					if id := fmt.Sprintf("i%02d", i); expiresAt[id].IsZero() && !r.seen[id] {
						t.Fatalf("%s: %s, which never expires, is missing", r.q, id)
					}
				}
			}
		})
	}
}
