package e2e

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/ebbdb/ebb/internal/auth"
	"github.com/ebbdb/ebb/internal/server"
)

const (
	secondaryKey = "c2Vjb25kYXJ5LWtleS1mb3ItdGVzdHMtc3Nzc3Nzc3Nzcw=="
	readOnlyKey  = "cmVhZC1vbmx5LWtleS1mb3ItdGVzdHMtcnJycnJycnJycnI="
)

// clientWithKey is an SDK client for e's server signing with key.
func clientWithKey(t *testing.T, e *env, key string) *azcosmos.Client {
	t.Helper()
	cred, err := azcosmos.NewKeyCredential(key)
	if err != nil {
		t.Fatal(err)
	}
	c, err := azcosmos.NewClientWithKey(e.srv.URL, cred, &azcosmos.ClientOptions{ClientOptions: azcore.ClientOptions{Transport: insecureTransport()}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestReadOnlyKey: through the Go SDK, a read-only key reads, queries and
// reads feeds, and every write with it is 401 with the service's text,
// changing nothing; so is Ebb's administration. The secondary key does
// everything.
func TestReadOnlyKey(t *testing.T) {
	e := startWith(t, server.Config{Memory: true, SecondaryKey: secondaryKey, ReadOnlyKey: readOnlyKey})
	c := e.container(t, pkProps("ro", "/pk"))
	pk := azcosmos.NewPartitionKeyString("p")
	if _, err := c.CreateItem(e.ctx, pk, []byte(`{"id":"a","pk":"p"}`), nil); err != nil {
		t.Fatal(err)
	}

	ro, _ := clientWithKey(t, e, readOnlyKey).NewContainer("db-ro", "ro")
	if _, err := ro.ReadItem(e.ctx, pk, "a", nil); err != nil {
		t.Fatalf("read with the read-only key: %v", err)
	}
	pager := ro.NewQueryItemsPager("SELECT * FROM c", pk, nil)
	if page, err := pager.NextPage(e.ctx); err != nil || len(page.Items) != 1 {
		t.Fatalf("query with the read-only key: %v", err)
	}
	writes := map[string]error{}
	_, writes["create"] = ro.CreateItem(e.ctx, pk, []byte(`{"id":"b","pk":"p"}`), nil)
	_, writes["upsert"] = ro.UpsertItem(e.ctx, pk, []byte(`{"id":"a","pk":"p","v":2}`), nil)
	_, writes["replace"] = ro.ReplaceItem(e.ctx, pk, "a", []byte(`{"id":"a","pk":"p","v":2}`), nil)
	_, writes["patch"] = ro.PatchItem(e.ctx, pk, "a", azcosmos.PatchOperations{}, nil)
	_, writes["delete"] = ro.DeleteItem(e.ctx, pk, "a", nil)
	_, writes["replace throughput"] = ro.ReplaceThroughput(e.ctx, azcosmos.NewManualThroughputProperties(500), nil)
	_, writes["delete container"] = ro.Delete(e.ctx, nil)
	_, writes["create database"] = clientWithKey(t, e, readOnlyKey).CreateDatabase(e.ctx, azcosmos.DatabaseProperties{ID: "nope"}, nil)
	for what, err := range writes {
		if status(err) != http.StatusUnauthorized {
			t.Errorf("%s with the read-only key: %v, want 401", what, err)
		}
	}
	rc := newRest(t, e)
	rc.key, _ = auth.NewVerifier(readOnlyKey)
	if r := rc.do(t, http.MethodGet, "/_ebb/clock", nil, nil); r.status != http.StatusUnauthorized {
		t.Errorf("GET /_ebb/clock with the read-only key: %d, want 401", r.status)
	}
	read, err := c.ReadItem(e.ctx, pk, "a", nil)
	if err != nil || string(read.Value) == "" {
		t.Fatalf("the item after the refused writes: %v", err)
	}

	sec, _ := clientWithKey(t, e, secondaryKey).NewContainer("db-ro", "ro")
	if _, err := sec.UpsertItem(e.ctx, pk, []byte(`{"id":"c","pk":"p"}`), nil); err != nil {
		t.Errorf("write with the secondary key: %v", err)
	}
}

// TestKeyRotation: with --key-file, keys roll from one to another while
// the server serves: a key moved to secondary keeps working, and once
// removed it is refused.
func TestKeyRotation(t *testing.T) {
	file := filepath.Join(t.TempDir(), "keys")
	write := func(s string) {
		if err := os.WriteFile(file, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("primary=" + auth.EmulatorKey + "\n")
	e := startWith(t, server.Config{Memory: true, KeyFile: file})
	e.database(t, "rot")
	use := func(key string) error {
		_, err := clientWithKey(t, e, key).CreateDatabase(e.ctx, azcosmos.DatabaseProperties{ID: "rot-" + key[:4]}, nil)
		if status(err) == http.StatusConflict {
			return nil
		}
		return err
	}
	write("primary=" + secondaryKey + "\nsecondary=" + auth.EmulatorKey + "\n")
	if err := e.srv.ReloadKeys(); err != nil {
		t.Fatal(err)
	}
	if err := use(auth.EmulatorKey); err != nil {
		t.Errorf("the old key, now secondary: %v", err)
	}
	if err := use(secondaryKey); err != nil {
		t.Errorf("the new primary: %v", err)
	}
	write("primary=" + secondaryKey + "\n")
	if err := e.srv.ReloadKeys(); err != nil {
		t.Fatal(err)
	}
	if err := use(auth.EmulatorKey); status(err) != http.StatusUnauthorized {
		t.Errorf("the old key after it was removed: %v, want 401", err)
	}
	write("primary=broken\n")
	if err := e.srv.ReloadKeys(); err == nil {
		t.Error("a key file that does not parse was taken")
	}
	if err := use(secondaryKey); err != nil {
		t.Errorf("the keys after a bad file: %v", err)
	}
}
