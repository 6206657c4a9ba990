// Package crash kills a real ebb process with SIGKILL while it purges a
// mass expiry and takes writes to items about to expire, then checks the
// data directory: no acknowledged write is lost and every item is either
// fully present or fully purged.
//
// The short form (3 rounds) runs with go test; EBB_CRASH_ROUNDS sets more.
package crash

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/ebbdb/ebb/internal/auth"
	"github.com/ebbdb/ebb/internal/engine"
	"github.com/ebbdb/ebb/internal/storage/pebble"
)

var ebbBinary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ebb-crash-bin-*")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ebbBinary = filepath.Join(dir, "ebb")
	build := exec.Command("go", "build", "-o", ebbBinary, "../../cmd/ebb")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build ebb:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// process is one running ebb.
type process struct {
	cmd      *exec.Cmd
	endpoint string
	client   *azcosmos.Client
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func startEbb(t *testing.T, dir string) *process {
	t.Helper()
	port := freePort(t)
	cmd := exec.Command(ebbBinary, "--data-dir", dir, "--no-tls", "--clock-control", "--listen", fmt.Sprintf("127.0.0.1:%d", port), "--log-level", "error")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The banner is printed once the listener is up.
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.Contains(line, "serving") {
		cmd.Process.Kill()
		t.Fatalf("ebb did not start: %q, %v", line, err)
	}
	go io.Copy(io.Discard, stdout)
	p := &process{cmd: cmd, endpoint: fmt.Sprintf("http://127.0.0.1:%d/", port)}
	cred, _ := azcosmos.NewKeyCredential(auth.EmulatorKey)
	p.client, err = azcosmos.NewClientWithKey(p.endpoint, cred, &azcosmos.ClientOptions{
		ClientOptions: azcore.ClientOptions{Retry: policyNoRetry()},
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func (p *process) kill() {
	p.cmd.Process.Kill()
	p.cmd.Wait()
}

// advance moves the server's manual clock.
func (p *process) advance(t *testing.T, seconds int) {
	t.Helper()
	v, _ := auth.NewVerifier(auth.EmulatorKey)
	date := time.Now().UTC().Format(http.TimeFormat)
	req, _ := http.NewRequest("POST", p.endpoint+"_ebb/clock", strings.NewReader(fmt.Sprintf(`{"advanceSeconds":%d}`, seconds)))
	req.Header.Set("x-ms-date", date)
	req.Header.Set("authorization", v.Sign("POST", "_ebb", "_ebb/clock", date))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("advance clock: %d", resp.StatusCode)
	}
}

func rounds() int {
	if n, err := strconv.Atoi(os.Getenv("EBB_CRASH_ROUNDS")); err == nil && n > 0 {
		return n
	}
	return 3
}

func TestKillDuringPurgeAndWrites(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	acked := map[string]bool{} // pinned items whose create was acknowledged
	for round := 0; round < rounds(); round++ {
		p := startEbb(t, dir)
		if round == 0 {
			if _, err := p.client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "crash"}, nil); err != nil {
				t.Fatal(err)
			}
			db, _ := p.client.NewDatabase("crash")
			def := int32(5)
			props := azcosmos.ContainerProperties{ID: "c", DefaultTimeToLive: &def,
				PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}}}
			tp := azcosmos.NewManualThroughputProperties(1_000_000)
			if _, err := db.CreateContainer(ctx, props, &azcosmos.CreateContainerOptions{ThroughputProperties: &tp}); err != nil {
				t.Fatal(err)
			}
		}
		c, _ := p.client.NewContainer("crash", "c")
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
		p.advance(t, 10) // everything not pinned is now due

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
		p.kill()
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
	if _, err := p.client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "crash"}, nil); err != nil {
		t.Fatal(err)
	}
	db, _ := p.client.NewDatabase("crash")
	def := int32(-1)
	props := azcosmos.ContainerProperties{ID: "c", DefaultTimeToLive: &def,
		PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}}}
	tp := azcosmos.NewManualThroughputProperties(1_000_000)
	if _, err := db.CreateContainer(ctx, props, &azcosmos.CreateContainerOptions{ThroughputProperties: &tp}); err != nil {
		t.Fatal(err)
	}
	c, _ := p.client.NewContainer("crash", "c")
	for i := 0; i < 200; i++ {
		body := fmt.Sprintf(`{"id":"%d","pk":"p","ttl":1}`, i)
		if _, err := c.CreateItem(ctx, azcosmos.NewPartitionKeyString("p"), []byte(body), nil); err != nil {
			t.Fatal(err)
		}
	}
	p.kill() // before anything expired
	// A restart's manual clock starts at the real time, which is past the
	// items' expiry only if a second has gone by; the high-water mark
	// keeps time from going back, and the advance makes them due.
	p = startEbb(t, dir)
	defer p.kill()
	p.advance(t, 2)
	waitFor(t, "the backlog to drain after a restart", func() bool { return backlog(t, p) == 0 })
}

func backlog(t *testing.T, p *process) int {
	v, _ := auth.NewVerifier(auth.EmulatorKey)
	date := time.Now().UTC().Format(http.TimeFormat)
	req, _ := http.NewRequest("GET", p.endpoint+"_ebb/containers/crash/c/ttl", nil)
	req.Header.Set("x-ms-date", date)
	req.Header.Set("authorization", v.Sign("GET", "ttl", "_ebb/containers/crash/c", date))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st struct{ Backlog int }
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil || resp.StatusCode != 200 {
		t.Fatalf("ttl status: %d, %v", resp.StatusCode, err)
	}
	return st.Backlog
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		<-tick.C
	}
}

// policyNoRetry makes the SDK give up at once on a dead server instead of
// retrying against it.
func policyNoRetry() policy.RetryOptions { return policy.RetryOptions{MaxRetries: -1} }
