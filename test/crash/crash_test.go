// Package crash kills a real ebb process with SIGKILL while it purges a
// mass expiry and takes writes to items about to expire, then checks the
// data directory: no acknowledged write is lost and every item is either
// fully present or fully purged.
//
// The short form (3 rounds) runs with go test; EBB_CRASH_ROUNDS sets more.
package crash

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/ebbdb/ebb/internal/engine"
	"github.com/ebbdb/ebb/internal/storage/pebble"
	"github.com/ebbdb/ebb/test/ebbproc"
)

var ebbBinary string

func TestMain(m *testing.M) {
	ebbproc.Main(m, &ebbBinary)
}

func startEbb(t *testing.T, dir string) *ebbproc.Process {
	t.Helper()
	return ebbproc.Start(t, ebbBinary, "ebb", "--data-dir", dir, "--clock-control")
}

func rounds() int {
	if n, err := strconv.Atoi(os.Getenv("EBB_CRASH_ROUNDS")); err == nil && n > 0 {
		return n
	}
	return 3
}

// createContainer creates database "crash" and its container "c" with
// the given defaultTtl and throughput to spare, so the purger is never
// throttled.
func createContainer(t *testing.T, p *ebbproc.Process, defaultTTL int32) *azcosmos.ContainerClient {
	t.Helper()
	ctx := context.Background()
	if _, err := p.Client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "crash"}, nil); err != nil {
		t.Fatal(err)
	}
	db, _ := p.Client.NewDatabase("crash")
	props := azcosmos.ContainerProperties{ID: "c", DefaultTimeToLive: &defaultTTL,
		PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}}}
	tp := azcosmos.NewManualThroughputProperties(1_000_000)
	if _, err := db.CreateContainer(ctx, props, &azcosmos.CreateContainerOptions{ThroughputProperties: &tp}); err != nil {
		t.Fatal(err)
	}
	c, _ := p.Client.NewContainer("crash", "c")
	return c
}

func TestKillDuringPurgeAndWrites(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	acked := map[string]bool{} // pinned items whose create was acknowledged
	for round := 0; round < rounds(); round++ {
		p := startEbb(t, dir)
		if round == 0 {
			createContainer(t, p, 5)
		}
		c, _ := p.Client.NewContainer("crash", "c")
		// A mass of items that will expire together, and some pinned.
		write := func(id string, ttl int) error {
			pk := "p" + strconv.Itoa(len(id)%7)
			body := fmt.Sprintf(`{"id":%q,"pk":%q,"ttl":%d}`, id, pk, ttl)
			_, err := c.UpsertItem(ctx, azcosmos.NewPartitionKeyString(pk), []byte(body), nil)
			return err
		}
		var mu sync.Mutex
		var wg sync.WaitGroup
		for w := 0; w < 4; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 150; i++ {
					id := fmt.Sprintf("r%d-w%d-%d", round, w, i)
					ttl := 1 + i%3
					if i%5 == 0 {
						ttl = -1
					}
					if err := write(id, ttl); err != nil {
						t.Errorf("write %s: %v", id, err)
						return
					}
					if ttl == -1 {
						mu.Lock()
						acked[id] = true
						mu.Unlock()
					}
				}
			}()
		}
		wg.Wait()
		p.Advance(t, 10) // everything not pinned is now due

		// Keep writing items about to expire while the purge runs, and
		// kill the process after a random number of acknowledged writes.
		killAfter := int64(rand.IntN(40))
		var done atomic.Int64
		stop := make(chan struct{})
		reached := make(chan struct{})
		var once sync.Once
		var writers sync.WaitGroup
		for w := 0; w < 4; w++ {
			writers.Add(1)
			go func() {
				defer writers.Done()
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					id := fmt.Sprintf("r%d-late%d-%d", round, w, i)
					ttl := 1
					if i%2 == 0 {
						ttl = -1
					}
					if err := write(id, ttl); err != nil {
						return // the process is gone
					}
					if ttl == -1 {
						mu.Lock()
						acked[id] = true
						mu.Unlock()
					}
					if done.Add(1) >= killAfter {
						once.Do(func() { close(reached) })
					}
				}
			}()
		}
		allStopped := make(chan struct{})
		go func() { writers.Wait(); close(allStopped) }()
		if killAfter > 0 {
			select {
			case <-reached:
			case <-allStopped:
			}
		}
		p.Kill()
		close(stop)
		<-allStopped

		checkDataDir(t, dir, acked)
	}
}

// checkDataDir opens the killed process's data directory in this process
// and checks it.
func checkDataDir(t *testing.T, dir string, acked map[string]bool) {
	t.Helper()
	store, err := pebble.Open(dir)
	if err != nil {
		t.Fatalf("reopen after kill: %v", err)
	}
	defer store.Close()
	eng, err := engine.Open(context.Background(), store, engine.Options{DisablePurger: true})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	if err := eng.CheckConsistency(context.Background()); err != nil {
		t.Fatalf("inconsistent after kill: %v", err)
	}
	for id := range acked {
		pk := "p" + strconv.Itoa(len(id)%7)
		ref := engine.ItemRef{DB: "crash", Coll: "c", ID: id, PK: `["` + pk + `"]`, HasPK: true}
		if _, err := eng.ReadItem(context.Background(), ref, ""); err != nil {
			t.Fatalf("acknowledged item %s lost: %v", id, err)
		}
	}
}

// TestPurgeResumesAfterRestart: a restart with a backlog of expired items
// drains it without any request.
func TestPurgeResumesAfterRestart(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	p := startEbb(t, dir)
	c := createContainer(t, p, -1)
	for i := 0; i < 200; i++ {
		body := fmt.Sprintf(`{"id":"%d","pk":"p","ttl":1}`, i)
		if _, err := c.CreateItem(ctx, azcosmos.NewPartitionKeyString("p"), []byte(body), nil); err != nil {
			t.Fatal(err)
		}
	}
	p.Kill() // before anything expired
	// A restart's manual clock starts at the real time, which is past the
	// items' expiry only if a second has gone by; the high-water mark
	// keeps time from going back, and the advance makes them due.
	p = startEbb(t, dir)
	p.Advance(t, 2)
	ebbproc.WaitFor(t, "the backlog to drain after a restart", func() bool {
		n, _ := p.Backlog(t, "crash", "c")
		return n == 0
	})
}
