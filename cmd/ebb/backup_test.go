package main

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/ebbdb/ebb/ebbtest"
	"github.com/ebbdb/ebb/internal/clock/clocktest"
)

// TestBackupWhileWriting: a backup taken while a client writes, restored
// into a new data directory, holds every write acknowledged before the
// backup began, and a server on it is consistent.
func TestBackupWhileWriting(t *testing.T) {
	srv := ebbtest.New(t, ebbtest.WithDataDir(t.TempDir()))
	ctx := context.Background()
	if _, err := srv.Client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "db"}, nil); err != nil {
		t.Fatal(err)
	}
	db, _ := srv.Client.NewDatabase("db")
	props := azcosmos.ContainerProperties{ID: "c", PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}}}
	if _, err := db.CreateContainer(ctx, props, nil); err != nil {
		t.Fatal(err)
	}
	c, _ := db.NewContainer("c")

	var acked atomic.Int64 // items 0..acked-1 are acknowledged
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			item := fmt.Sprintf(`{"id":"i%d","pk":"p%d","pad":"%s"}`, i, i%7, strings.Repeat("x", 200))
			if _, err := c.CreateItem(ctx, azcosmos.NewPartitionKeyString(fmt.Sprintf("p%d", i%7)), []byte(item), nil); err != nil {
				t.Error(err)
				return
			}
			acked.Store(int64(i + 1))
		}
	})
	clocktest.WaitUntil(t, "300 acknowledged writes", func() bool { return acked.Load() >= 300 })
	before := acked.Load()
	backupDir := filepath.Join(t.TempDir(), "backup")
	var out bytes.Buffer
	err := runBackup([]string{backupDir, "--endpoint", srv.Endpoint}, &out)
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatalf("ebb backup: %v", err)
	}

	dataDir := filepath.Join(t.TempDir(), "restored")
	if err := runRestore([]string{"--data-dir", dataDir, backupDir}, &out); err != nil {
		t.Fatalf("ebb restore: %v", err)
	}
	if err := runRestore([]string{"--data-dir", dataDir, backupDir}, &out); err == nil || !strings.Contains(err.Error(), "is not empty") {
		t.Errorf("a restore over a data directory that holds data: %v, want a refusal", err)
	}
	restored := ebbtest.New(t, ebbtest.WithDataDir(dataDir))
	rc, _ := restored.Client.NewContainer("db", "c")
	n := 0
	pager := rc.NewQueryItemsPager("SELECT VALUE r.id FROM r", azcosmos.PartitionKey{}, nil)
	seen := map[string]bool{}
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, raw := range page.Items {
			seen[strings.Trim(string(raw), `"`)] = true
			n++
		}
	}
	for i := range before {
		if !seen[fmt.Sprintf("i%d", i)] {
			t.Fatalf("item i%d, acknowledged before the backup began, is not in it (%d items restored, %d acknowledged before)", i, n, before)
		}
	}
	t.Logf("%d items acknowledged before the backup, %d in it", before, n)
}

// TestBackupRefusals: what ebb backup and restore will not do.
func TestBackupRefusals(t *testing.T) {
	mem := ebbtest.New(t)
	err := runBackup([]string{filepath.Join(t.TempDir(), "b"), "--endpoint", mem.Endpoint}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "--memory") {
		t.Errorf("backup of an in-memory server: %v, want an error naming --memory", err)
	}
	if err := runRestore([]string{"--data-dir", filepath.Join(t.TempDir(), "d"), t.TempDir()}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "holds no Ebb store") {
		t.Errorf("restore of a directory that is no backup: %v", err)
	}
}
