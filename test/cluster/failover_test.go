package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/ebbdb/ebb/internal/auth"
	"github.com/ebbdb/ebb/internal/clock"
	"github.com/ebbdb/ebb/internal/storage/postgres/pgtest"
	"github.com/ebbdb/ebb/test/ebbproc"
)

// TestPostgresFailover kills the PostgreSQL primary in the middle of a
// write load on two Ebb nodes and promotes its synchronous standby, as
// an operator or a failover manager would. The nodes were given both
// hosts with target_session_attrs=read-write: they must find the new
// primary on their own, answer the requests in between with 503 and
// x-ms-retry-after-ms (which the SDK honours and retries), and lose no
// write a client saw acknowledged.
func TestPostgresFailover(t *testing.T) {
	pg := pgtest.StartReplicated(t)
	nodes := []*ebbproc.Process{
		ebbproc.Start(t, ebbBinary, "a", "--store", pg.URL(), "--node-id", "a"),
		ebbproc.Start(t, ebbBinary, "b", "--store", pg.URL(), "--node-id", "b"),
	}
	ctx := context.Background()
	if _, err := nodes[0].Client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "shop"}, nil); err != nil {
		t.Fatal(err)
	}
	db, _ := nodes[0].Client.NewDatabase("shop")
	props := azcosmos.ContainerProperties{ID: "orders",
		PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}}}
	if _, err := db.CreateContainer(ctx, props, nil); err != nil {
		t.Fatal(err)
	}

	// Eight writers, four per node, each upserting new items in its own
	// logical partition through an SDK client that retries as users'
	// clients do. Every acknowledged write is logged.
	wall := clock.NewSystem()
	var (
		seen      unavailableLog
		stop      atomic.Bool
		wg        sync.WaitGroup
		mu        sync.Mutex
		acked     = map[string]int{} // id → n
		ackTimes  []time.Duration
		otherErrs []error
	)
	const writers = 8
	// Writers stop with the test, however it ends.
	t.Cleanup(func() { stop.Store(true); wg.Wait() })
	for w := range writers {
		node := nodes[w%len(nodes)]
		c := retryingClient(t, node.Endpoint, &seen)
		items, _ := c.NewContainer("shop", "orders")
		wg.Add(1)
		go func() {
			defer wg.Done()
			pk := fmt.Sprintf("w%d", w)
			key := azcosmos.NewPartitionKeyString(pk)
			for n := 0; !stop.Load(); n++ {
				id := fmt.Sprintf("%s-%d", pk, n)
				body, _ := json.Marshal(map[string]any{"id": id, "pk": pk, "n": n})
				_, err := items.UpsertItem(ctx, key, body, nil)
				mu.Lock()
				if err == nil {
					acked[id] = n
					ackTimes = append(ackTimes, wall.Elapsed())
				} else if !isUnavailable(err) {
					otherErrs = append(otherErrs, err)
				}
				mu.Unlock()
			}
		}()
	}
	ackedCount := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(acked)
	}
	ebbproc.WaitFor(t, "writes before the failover", func() bool { return ackedCount() >= 400 })

	killedAt := wall.Elapsed()
	pg.KillPrimary()
	pg.PromoteStandby()
	before := ackedCount()
	ebbproc.WaitFor(t, "writes after the failover", func() bool { return ackedCount() >= before+400 })
	stop.Store(true)
	wg.Wait()

	if len(otherErrs) > 0 {
		t.Fatalf("%d writes failed with something other than 503 (first: %v)", len(otherErrs), otherErrs[0])
	}
	if seen.withoutRetryAfter.Load() > 0 {
		t.Fatalf("%d of %d 503 answers had no x-ms-retry-after-ms", seen.withoutRetryAfter.Load(), seen.count.Load())
	}
	// Every acknowledged write is there, on both nodes, with its content.
	for _, node := range nodes {
		items, _ := node.Client.NewContainer("shop", "orders")
		lost := 0
		for id, n := range acked {
			r, err := items.ReadItem(ctx, azcosmos.NewPartitionKeyString(id[:2]), id, nil)
			var doc struct{ N int }
			if err == nil {
				err = json.Unmarshal(r.Value, &doc)
			}
			if err != nil || doc.N != n {
				lost++
				if lost <= 3 {
					t.Errorf("acknowledged %s (n=%d) on %s: %+v, %v", id, n, node.Name, doc, err)
				}
			}
		}
		if lost > 0 {
			t.Fatalf("%d of %d acknowledged writes lost after the failover", lost, len(acked))
		}
	}
	// The outage as the clients saw it: the longest time without an
	// acknowledgement.
	gap := time.Duration(0)
	for i := 1; i < len(ackTimes); i++ {
		gap = max(gap, ackTimes[i]-ackTimes[i-1])
	}
	t.Logf("failover: no write acknowledged for %.2f s (primary killed and standby promoted %.2f s into the run); %d answers were 503, all with x-ms-retry-after-ms; %d writes acknowledged, 0 lost",
		gap.Seconds(), killedAt.Seconds(), seen.count.Load(), len(acked))
}

// unavailableLog counts the 503 answers the SDK saw, before its retries.
type unavailableLog struct {
	count, withoutRetryAfter atomic.Int64
}

func (l *unavailableLog) Do(req *policy.Request) (*http.Response, error) {
	resp, err := req.Next()
	if err == nil && resp.StatusCode == http.StatusServiceUnavailable {
		l.count.Add(1)
		if resp.Header.Get("x-ms-retry-after-ms") == "" {
			l.withoutRetryAfter.Add(1)
		}
	}
	return resp, err
}

// retryingClient is an SDK client for endpoint with the SDK's own retry
// policy, which the users' clients have, reporting each 503 to log.
func retryingClient(t *testing.T, endpoint string, log *unavailableLog) *azcosmos.Client {
	cred, _ := azcosmos.NewKeyCredential(auth.EmulatorKey)
	c, err := azcosmos.NewClientWithKey(endpoint, cred, &azcosmos.ClientOptions{
		ClientOptions: azcore.ClientOptions{PerRetryPolicies: []policy.Policy{log}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// isUnavailable reports whether err is the SDK giving up on 503s.
func isUnavailable(err error) bool {
	var re *azcore.ResponseError
	return errors.As(err, &re) && re.StatusCode == http.StatusServiceUnavailable
}
