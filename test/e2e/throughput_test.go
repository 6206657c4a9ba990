package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/ebbdb/ebb/internal/auth"
	"github.com/ebbdb/ebb/internal/server"
)

// TestEnforcedThroughput: with --enforce-throughput a burst beyond a
// 400 RU/s offer gets 429 with x-ms-retry-after-ms, and the SDK, which
// retries those on its own, still completes every write.
func TestEnforcedThroughput(t *testing.T) {
	e := startWith(t, server.Config{Memory: true, EnforceThroughput: true})
	e.container(t, pkProps("limited", "/pk"))
	rc := newRest(t, e)
	throttled := 0
	var retryAfter string
	for i := 0; i < 200 && throttled == 0; i++ {
		body := fmt.Sprintf(`{"id":"raw%d","pk":"p","pad":"%s"}`, i, strings.Repeat("x", 4000))
		resp := rc.do(t, "POST", "/dbs/db-limited/colls/limited/docs", map[string]string{"x-ms-documentdb-partitionkey": `["p"]`}, []byte(body))
		if resp.status == http.StatusTooManyRequests {
			throttled++
			retryAfter = resp.header.Get("x-ms-retry-after-ms")
		}
	}
	if throttled == 0 || retryAfter == "" {
		t.Fatalf("200 writes of 4 KB (about 23 RU each) against 400 RU/s: %d answered 429 (retry after %q), want some with a retry-after", throttled, retryAfter)
	}
	// Ebb's own administration of the container answers while its
	// throughput is used up, as its tools must under load.
	for _, path := range []string{"/_ebb/containers/db-limited/limited/ttl", "/_ebb/containers/db-limited/limited/partitions"} {
		if resp := rc.do(t, "GET", path, nil, nil); resp.status != http.StatusOK {
			t.Errorf("GET %s with the throughput used up: %d, want 200", path, resp.status)
		}
	}
	// A client that retries 429s as the Cosmos SDKs' throttle policies do:
	// until a total wait of about 30 s (.NET's MaxRetryWaitTimeOnRateLimitedRequests),
	// here up to 20 times (azcore's default of three is for transient
	// errors). On a loaded machine nine were once too few.
	cred, _ := azcosmos.NewKeyCredential(auth.EmulatorKey)
	client, err := azcosmos.NewClientWithKey(e.srv.URL, cred, &azcosmos.ClientOptions{ClientOptions: azcore.ClientOptions{
		Transport: insecureTransport(),
		Retry:     policy.RetryOptions{MaxRetries: 20, MaxRetryDelay: 5 * time.Second},
	}})
	if err != nil {
		t.Fatal(err)
	}
	sdk, _ := client.NewContainer("db-limited", "limited")
	for i := 0; i < 20; i++ {
		body := fmt.Sprintf(`{"id":"sdk%d","pk":"p","pad":"%s"}`, i, strings.Repeat("x", 4000))
		if _, err := sdk.CreateItem(e.ctx, azcosmos.NewPartitionKeyString("p"), []byte(body), nil); err != nil {
			t.Fatalf("SDK write %d under throttling: %v", i, err)
		}
	}
}
