package bench

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/ebbdb/ebb/internal/auth"
)

// NewClient returns an SDK client for endpoint with the emulator key,
// trusting any certificate and preferring HTTP/2, as the end-to-end
// tests and the SDK's own emulator tests connect. Each client has its own
// transport, hence its own connection; closeIdle closes it, which lets
// the server shut down without waiting for the client to go away.
func NewClient(endpoint string) (client *azcosmos.Client, closeIdle func(), err error) {
	cred, err := azcosmos.NewKeyCredential(auth.EmulatorKey)
	if err != nil {
		return nil, nil, err
	}
	transport := &http.Transport{
		TLSClientConfig:   &tls.Config{InsecureSkipVerify: true},
		ForceAttemptHTTP2: true,
	}
	client, err = azcosmos.NewClientWithKey(endpoint, cred, &azcosmos.ClientOptions{
		ClientOptions: azcore.ClientOptions{Transport: &http.Client{Transport: transport}},
	})
	if err != nil {
		return nil, nil, err
	}
	return client, transport.CloseIdleConnections, nil
}

// WithPartitionCount returns ctx for a container create that asks for n
// physical partitions (x-ebb-partition-count, which the SDK has no
// option for): azcore's header policy, in every client's pipeline, sends
// the header.
func WithPartitionCount(ctx context.Context, n int) context.Context {
	return policy.WithHTTPHeader(ctx, http.Header{"x-ebb-partition-count": {strconv.Itoa(n)}})
}

// Fixture is a container prepared for a workload, with the operations the
// workloads time.
type Fixture struct {
	Container *azcosmos.ContainerClient
	pk        azcosmos.PartitionKey
	// pks, when set, spread the items over logical partitions: item j is
	// in pks[j mod len(pks)] (named pkNames[j mod len(pks)]), so worker w
	// of len(pks) workers, whose operations i have i mod len(pks) = w,
	// writes only its own.
	pks     []azcosmos.PartitionKey
	pkNames []string
	// keys is how many items were preloaded; reads and upserts cycle
	// through their ids.
	keys int
	// created numbers the items Create makes, so their ids are unique.
	created atomic.Int64
}

// NewFixture creates database dbID with a container "items" partitioned
// on PartitionKeyPath.
func NewFixture(ctx context.Context, client *azcosmos.Client, dbID string) (*Fixture, error) {
	return newFixture(ctx, client, dbID, 0)
}

// newFixture is NewFixture for a container of parts physical partitions
// (0: as many as its throughput gives). Only the container create
// carries the count: Ebb refuses x-ebb-partition-count on any other
// request.
func newFixture(ctx context.Context, client *azcosmos.Client, dbID string, parts int) (*Fixture, error) {
	if _, err := client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: dbID}, nil); err != nil {
		return nil, fmt.Errorf("create database %s: %w", dbID, err)
	}
	db, err := client.NewDatabase(dbID)
	if err != nil {
		return nil, err
	}
	props := azcosmos.ContainerProperties{
		ID: "items",
		PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{
			Paths: []string{PartitionKeyPath}, Kind: azcosmos.PartitionKeyKindHash, Version: 2,
		},
	}
	createCtx := ctx
	if parts > 0 {
		createCtx = WithPartitionCount(ctx, parts)
	}
	if _, err := db.CreateContainer(createCtx, props, nil); err != nil {
		return nil, fmt.Errorf("create container: %w", err)
	}
	c, err := db.NewContainer(props.ID)
	if err != nil {
		return nil, err
	}
	return &Fixture{Container: c, pk: azcosmos.NewPartitionKeyString(PartitionKey)}, nil
}

// AttachFixture is a fixture on a container another fixture created
// (through another node of a cluster), with its key set.
func AttachFixture(client *azcosmos.Client, dbID string, like *Fixture) (*Fixture, error) {
	c, err := client.NewContainer(dbID, "items")
	if err != nil {
		return nil, err
	}
	return &Fixture{Container: c, pk: like.pk, pks: like.pks, pkNames: like.pkNames, keys: like.keys}, nil
}

// NewSpreadFixture is NewFixture for a container of parts physical
// partitions whose items are spread over spread logical partitions, one
// for each of spread workers, chosen to land in different physical
// partitions as far as there are enough: it writes a probe item to
// candidate keys and keeps each key whose write answers with the session
// token of a range not yet taken.
func NewSpreadFixture(ctx context.Context, client *azcosmos.Client, dbID string, parts, spread int) (*Fixture, error) {
	f, err := newFixture(ctx, client, dbID, parts)
	if err != nil {
		return nil, err
	}
	used := map[string]int{} // keys kept, by range
	for k := 0; len(f.pkNames) < spread; k++ {
		name := fmt.Sprintf("w%d", k)
		pk := azcosmos.NewPartitionKeyString(name)
		resp, err := f.Container.UpsertItem(ctx, pk, ItemIn("probe", name, 0), nil)
		if err != nil {
			return nil, fmt.Errorf("probe partition key %s: %w", name, err)
		}
		rangeID := ""
		if resp.SessionToken != nil {
			rangeID, _, _ = strings.Cut(*resp.SessionToken, ":")
		}
		// A key of a range that has the fewest so far, every range
		// having one before any gets two.
		least := used[rangeID] == 0
		if len(used) == parts {
			least = true
			for _, n := range used {
				least = least && used[rangeID] <= n
			}
		}
		if !least && k < 100*spread {
			continue
		}
		used[rangeID]++
		f.pks, f.pkNames = append(f.pks, pk), append(f.pkNames, name)
	}
	return f, nil
}

// pkOf is the partition key of the j-th preloaded item, and its name.
func (f *Fixture) pkOf(j int) (azcosmos.PartitionKey, string) {
	if len(f.pks) == 0 {
		return f.pk, PartitionKey
	}
	return f.pks[j%len(f.pks)], f.pkNames[j%len(f.pks)]
}

// Load upserts items 0…n-1 with the given number of goroutines, and makes
// them the key set that Read and Upsert cycle through.
func (f *Fixture) Load(ctx context.Context, n, concurrency int) error {
	concurrency = max(1, min(concurrency, n))
	var (
		next atomic.Int64
		wg   sync.WaitGroup
		errs = make([]error, concurrency)
	)
	for w := range concurrency {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n || ctx.Err() != nil {
					return
				}
				pk, name := f.pkOf(i)
				if _, err := f.Container.UpsertItem(ctx, pk, ItemIn(ItemID(i), name, 0), nil); err != nil {
					errs[w] = fmt.Errorf("load item %d: %w", i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	f.keys = n
	return ctx.Err()
}

// Read point-reads the (i mod keys)-th preloaded item.
// REQUIRES: Load has run.
func (f *Fixture) Read(ctx context.Context, i int) error {
	pk, _ := f.pkOf(i % f.keys)
	resp, err := f.Container.ReadItem(ctx, pk, ItemID(i%f.keys), nil)
	if err != nil {
		return err
	}
	if len(resp.Value) < ItemSize {
		return fmt.Errorf("read %s: got %d bytes, want at least %d", ItemID(i%f.keys), len(resp.Value), ItemSize)
	}
	return nil
}

// Upsert replaces the (i mod keys)-th preloaded item with new content; the
// SDK asks for a minimal reply, as it does by default.
// REQUIRES: Load has run.
func (f *Fixture) Upsert(ctx context.Context, i int) error {
	pk, name := f.pkOf(i % f.keys)
	_, err := f.Container.UpsertItem(ctx, pk, ItemIn(ItemID(i%f.keys), name, i+1), nil)
	return err
}

// Create creates a new item with an id no other call used.
func (f *Fixture) Create(ctx context.Context) error {
	n := int(f.created.Add(1))
	_, err := f.Container.CreateItem(ctx, f.pk, Item(fmt.Sprintf("new-%09d", n), n), nil)
	return err
}

// FeedPage reads the first page of SELECT * FROM c in the benchmark
// partition: PageSize documents of ItemSize bytes.
// REQUIRES: Load has loaded at least PageSize items.
func (f *Fixture) FeedPage(ctx context.Context) error {
	pager := f.Container.NewQueryItemsPager("SELECT * FROM c", f.pk, &azcosmos.QueryOptions{PageSizeHint: PageSize})
	resp, err := pager.NextPage(ctx)
	if err != nil {
		return err
	}
	if len(resp.Items) != PageSize {
		return fmt.Errorf("read-feed page: got %d items, want %d", len(resp.Items), PageSize)
	}
	return nil
}
