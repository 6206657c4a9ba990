package e2e

import (
	"net/http"
	"sync"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/ebbdb/ebb/internal/server"
)

// TestUniqueKeys: through the Go SDK, a container's unique keys are
// enforced per logical partition on every write kind, concurrent creates
// of one value leave exactly one, the policy is echoed, and everything
// holds after a restart. (The engine's testdata/unique covers each rule.)
func TestUniqueKeys(t *testing.T) {
	dir := t.TempDir()
	e := startWith(t, server.Config{DataDir: dir})
	db := e.database(t, "db-unique")
	props := azcosmos.ContainerProperties{ID: "users",
		PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}},
		UniqueKeyPolicy: &azcosmos.UniqueKeyPolicy{UniqueKeys: []azcosmos.UniqueKey{
			{Paths: []string{"/email"}}, {Paths: []string{"/first", "/last"}}}}}
	if _, err := db.CreateContainer(e.ctx, props, nil); err != nil {
		t.Fatal(err)
	}
	c, _ := db.NewContainer("users")
	read, err := c.Read(e.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if u := read.ContainerProperties.UniqueKeyPolicy; u == nil || len(u.UniqueKeys) != 2 || len(u.UniqueKeys[1].Paths) != 2 {
		t.Fatalf("uniqueKeyPolicy read back as %+v", u)
	}
	create := func(body string) error {
		_, err := c.CreateItem(e.ctx, pk, []byte(body), nil)
		return err
	}
	if err := create(`{"id":"1","pk":"p","email":"a@example.com","first":"Ada","last":"L"}`); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, create(`{"id":"2","pk":"p","email":"a@example.com"}`), http.StatusConflict, "a second item with the same email")
	wantStatus(t, create(`{"id":"2","pk":"p","email":"b@example.com","first":"Ada","last":"L"}`), http.StatusConflict, "the same first and last name")
	other := azcosmos.NewPartitionKeyString("q")
	if _, err := c.CreateItem(e.ctx, other, []byte(`{"id":"2","pk":"q","email":"a@example.com"}`), nil); err != nil {
		t.Fatalf("the same email in another partition: %v", err)
	}
	_, err = c.UpsertItem(e.ctx, pk, []byte(`{"id":"3","pk":"p","email":"a@example.com"}`), nil)
	wantStatus(t, err, http.StatusConflict, "an upsert taking a held email")
	var ops azcosmos.PatchOperations
	ops.AppendSet("/first", "Ada")
	if _, err = c.PatchItem(e.ctx, other, "2", ops, nil); err != nil {
		t.Fatalf("patch in the other partition: %v", err)
	}

	// Concurrent creates of one value: exactly one succeeds.
	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[int]int{}
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := `{"id":"race-` + string(rune('a'+i)) + `","pk":"p","email":"race@example.com"}`
			err := create(body)
			mu.Lock()
			statuses[status(err)]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if statuses[0] != 1 || statuses[http.StatusConflict] != 15 {
		t.Fatalf("concurrent creates of one email: %v (0: success), want one success and fifteen 409", statuses)
	}

	stopOrFail(t, e)
	e = startWith(t, server.Config{DataDir: dir})
	db, _ = e.client.NewDatabase("db-unique")
	c, _ = db.NewContainer("users")
	wantStatus(t, create(`{"id":"4","pk":"p","email":"race@example.com"}`), http.StatusConflict, "a held email after a restart")
}
