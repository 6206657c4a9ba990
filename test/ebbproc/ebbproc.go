// Package ebbproc runs real ebb processes for tests that need one: a
// crash test that kills a process, a cluster test that starts several.
// It builds the binary once per test binary, starts processes on free
// loopback ports and talks to them with signed REST requests and the Go
// SDK.
package ebbproc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/ebbdb/ebb/internal/auth"
	"github.com/ebbdb/ebb/internal/clock"
)

// wall is real time: requests are signed with it, and waits are bounded
// by it.
var wall = clock.NewSystem()

// Build compiles ./cmd/ebb into a temporary directory and returns the
// binary's path and a function that removes it. Call it from TestMain.
func Build() (string, func(), error) {
	dir, err := os.MkdirTemp("", "ebb-bin-*")
	if err != nil {
		return "", nil, err
	}
	_, here, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(here), "..", "..")
	bin := filepath.Join(dir, "ebb")
	build := exec.Command("go", "build", "-o", bin, "./cmd/ebb")
	build.Dir = root
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("build ebb: %w", err)
	}
	return bin, func() { os.RemoveAll(dir) }, nil
}

// Main is a TestMain body: it builds the binary into *bin, runs the
// tests, removes the binary and exits with the tests' status.
func Main(m *testing.M, bin *string) {
	path, cleanup, err := Build()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	*bin = path
	code := m.Run()
	cleanup()
	os.Exit(code)
}

// Process is one running ebb serving plain HTTP on loopback.
type Process struct {
	Name     string
	Endpoint string
	// Client is a Go SDK client for it that never retries, so a killed
	// process fails fast.
	Client *azcosmos.Client
	cmd    *exec.Cmd
}

// Start runs bin with --no-tls, --listen on a free port and args, and
// waits until it serves. The process is killed when the test ends.
func Start(t testing.TB, bin, name string, args ...string) *Process {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	args = append([]string{"--no-tls", "--listen", fmt.Sprintf("127.0.0.1:%d", port), "--log-level", "error"}, args...)
	cmd := exec.Command(bin, args...)
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
		cmd.Wait()
		t.Fatalf("ebb %s did not start: %q, %v", name, line, err)
	}
	go io.Copy(io.Discard, stdout)
	p := &Process{Name: name, Endpoint: fmt.Sprintf("http://127.0.0.1:%d/", port), cmd: cmd}
	cred, _ := azcosmos.NewKeyCredential(auth.EmulatorKey)
	p.Client, err = azcosmos.NewClientWithKey(p.Endpoint, cred, &azcosmos.ClientOptions{
		ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Kill)
	return p
}

// Kill ends the process with SIGKILL (no clean shutdown) and waits.
func (p *Process) Kill() {
	if p.cmd.ProcessState == nil {
		p.cmd.Process.Kill()
		p.cmd.Wait()
	}
}

// REST sends a request signed with the emulator key and, for a 2xx
// answer with a body, decodes it into out (when not nil).
func (p *Process) REST(t testing.TB, method, path string, hdr map[string]string, body string, out any) (int, http.Header) {
	t.Helper()
	v, _ := auth.NewVerifier(auth.EmulatorKey)
	date := wall.Now().UTC().Format(http.TimeFormat)
	typ, link, err := auth.ResourceOf(path)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(method, strings.TrimSuffix(p.Endpoint, "/")+path, strings.NewReader(body))
	req.Header.Set("x-ms-date", date)
	req.Header.Set("authorization", v.Sign(method, typ, link, date))
	req.Header.Set("content-type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s on %s: %v", method, path, p.Name, err)
	}
	defer resp.Body.Close()
	if out != nil && resp.StatusCode >= 200 && resp.StatusCode < 300 && resp.StatusCode != http.StatusNoContent {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatalf("%s %s: decode: %v", method, path, err)
		}
	}
	return resp.StatusCode, resp.Header
}

// Advance moves the process's manual clock (it must run with
// --clock-control).
func (p *Process) Advance(t testing.TB, seconds int) {
	t.Helper()
	if st, _ := p.REST(t, "POST", "/_ebb/clock", nil, fmt.Sprintf(`{"advanceSeconds":%d}`, seconds), nil); st != http.StatusOK {
		t.Fatalf("advance the clock of %s: %d", p.Name, st)
	}
}

// Backlog reads a container's TTL backlog and purge lease holder.
func (p *Process) Backlog(t testing.TB, db, coll string) (backlog int, leaseHolder string) {
	t.Helper()
	var st struct {
		Backlog     int
		LeaseHolder string
	}
	if code, _ := p.REST(t, "GET", "/_ebb/containers/"+db+"/"+coll+"/ttl", nil, "", &st); code != http.StatusOK {
		t.Fatalf("ttl status of %s/%s on %s: %d", db, coll, p.Name, code)
	}
	return st.Backlog, st.LeaseHolder
}

// WaitFor polls cond until it holds, failing the test after a generous
// deadline. It never asserts how long anything took.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := wall.Elapsed() + 30*time.Second
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if wall.Elapsed() > deadline {
			t.Fatalf("timed out waiting for %s", what)
		}
		<-tick.C
	}
}

// IncrementIfMatch adds one to the "n" of item id (a document
// {"id", "pk", "n"}) with optimistic concurrency: it reads the item and
// replaces it under If-Match. won is false when another writer replaced
// it in between (412), which is not an error.
func IncrementIfMatch(ctx context.Context, c *azcosmos.ContainerClient, pk, id string) (won bool, err error) {
	key := azcosmos.NewPartitionKeyString(pk)
	r, err := c.ReadItem(ctx, key, id, nil)
	if err != nil {
		return false, err
	}
	var doc struct{ N int }
	if err := json.Unmarshal(r.Value, &doc); err != nil {
		return false, err
	}
	body, _ := json.Marshal(map[string]any{"id": id, "pk": pk, "n": doc.N + 1})
	_, err = c.ReplaceItem(ctx, key, id, body, &azcosmos.ItemOptions{IfMatchEtag: &r.ETag})
	var re *azcore.ResponseError
	if errors.As(err, &re) && re.StatusCode == http.StatusPreconditionFailed {
		return false, nil
	}
	return err == nil, err
}
