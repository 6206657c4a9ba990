package pebble

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ebbdb/ebb/internal/clock"
	"github.com/ebbdb/ebb/internal/storage"
	"github.com/ebbdb/ebb/internal/storage/storagetest"
)

func openMemory(tb testing.TB) storage.Store {
	s, err := OpenMemory()
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

func openDisk(tb testing.TB) storage.Store {
	s, err := Open(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

func TestStore(t *testing.T) {
	t.Run("Memory", func(t *testing.T) {
		storagetest.Run(t, func(t *testing.T) storage.Store { return openMemory(t) })
	})
	t.Run("Disk", func(t *testing.T) {
		storagetest.Run(t, func(t *testing.T) storage.Store { return openDisk(t) })
	})
	// The wrapper the end-to-end suite runs over is a store too.
	t.Run("Replaying", func(t *testing.T) {
		storagetest.Run(t, func(t *testing.T) storage.Store { return storagetest.Replaying(openMemory(t)) })
	})
	t.Run("Scribbling", func(t *testing.T) {
		storagetest.Run(t, func(t *testing.T) storage.Store { return storagetest.Scribbling(openMemory(t)) })
	})
	t.Run("NoRowCache", func(t *testing.T) {
		storagetest.Run(t, func(t *testing.T) storage.Store {
			s, err := OpenMemoryWith(Options{RowCacheSize: -1})
			if err != nil {
				t.Fatal(err)
			}
			return s
		})
	})
}

// TestReopen checks that what an Update acknowledged is there after the
// store is closed and opened again on the same directory.
func TestReopen(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	const n = 100
	for i := range n {
		err := s.Update(ctx, func(w storage.Writer) error {
			return w.Set(fmt.Appendf(nil, "k%03d", i), fmt.Appendf(nil, "v%d", i))
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	err = s.Update(ctx, func(w storage.Writer) error {
		if err := w.Delete([]byte("k000")); err != nil {
			return err
		}
		return w.DeleteRange([]byte("k090"), nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s, err = Open(dir)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer s.Close()
	err = s.View(ctx, func(r storage.Reader) error {
		it := r.Scan(nil, nil, false)
		defer it.Close()
		want := 1
		for ; it.Next(); want++ {
			if k, v := string(it.Key()), string(it.Value()); k != fmt.Sprintf("k%03d", want) || v != fmt.Sprintf("v%d", want) {
				return fmt.Errorf("got %q=%q, want k%03d=v%d", k, v, want, want)
			}
		}
		if want != 90 {
			return fmt.Errorf("read back k001..k%03d, want k001..k089", want-1)
		}
		return it.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestCloseWaitsForView checks that Close lets a View in flight finish
// (Pebble would panic under it) and that the View can still read.
func TestCloseWaitsForView(t *testing.T) {
	s := openMemory(t).(*Store)
	ctx := context.Background()
	if err := s.Update(ctx, func(w storage.Writer) error { return w.Set([]byte("k"), []byte("v")) }); err != nil {
		t.Fatal(err)
	}
	inView := make(chan struct{})
	release := make(chan struct{})
	viewErr := make(chan error)
	go func() {
		viewErr <- s.View(ctx, func(r storage.Reader) error {
			close(inView)
			<-release
			_, err := r.Get([]byte("k"))
			return err
		})
	}()
	<-inView
	closeErr := make(chan error)
	go func() { closeErr <- s.Close() }()
	// Poll until Close has marked the store closed; it must then wait.
	for waited := clock.NewSystem(); ; runtime.Gosched() {
		s.mu.Lock()
		closed := s.closed
		s.mu.Unlock()
		if closed {
			break
		}
		if waited.Elapsed() > 10*time.Second {
			t.Fatal("Close did not start")
		}
	}
	if err := s.View(ctx, func(storage.Reader) error { return nil }); !errors.Is(err, storage.ErrClosed) {
		t.Fatalf("View while closing = %v, want ErrClosed", err)
	}
	select {
	case err := <-closeErr:
		t.Fatalf("Close returned %v while a View was in flight", err)
	default:
	}
	close(release)
	if err := <-viewErr; err != nil {
		t.Fatalf("View in flight during Close: %v", err)
	}
	if err := <-closeErr; err != nil {
		t.Fatalf("Close: %v", err)
	}
}

// TestLeakedIterator checks that an iterator fn forgot to close does not
// outlive the View: Pebble would refuse to close with it open.
func TestLeakedIterator(t *testing.T) {
	s := openMemory(t)
	ctx := context.Background()
	if err := s.Update(ctx, func(w storage.Writer) error { return w.Set([]byte("k"), []byte("v")) }); err != nil {
		t.Fatal(err)
	}
	for _, leak := range []func() error{
		func() error {
			return s.View(ctx, func(r storage.Reader) error { r.Scan(nil, nil, false).Next(); return nil })
		},
		func() error {
			return s.Update(ctx, func(w storage.Writer) error {
				w.Scan(nil, nil, true).Next()
				return w.Set([]byte("k2"), []byte("v"))
			})
		},
	} {
		if err := leak(); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close after leaking iterators: %v", err)
	}
}

func BenchmarkStore(b *testing.B) {
	b.Run("Memory", func(b *testing.B) {
		storagetest.Benchmark(b, func(b *testing.B) storage.Store { return openMemory(b) })
	})
	b.Run("Disk", func(b *testing.B) {
		storagetest.Benchmark(b, func(b *testing.B) storage.Store { return openDisk(b) })
	})
}

// TestDirectoryInUse: a store on a directory another process holds is
// refused with a message that says so and names the holder's process.
func TestDirectoryInUse(t *testing.T) {
	if dir := os.Getenv("EBB_TEST_HOLD_STORE"); dir != "" {
		// The holder: open the store, say so, hold it until stdin closes.
		s, err := Open(dir)
		if err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		fmt.Println("held")
		io.Copy(io.Discard, os.Stdin)
		s.Close()
		os.Exit(0)
	}
	dir := t.TempDir()
	holder := exec.Command(os.Args[0], "-test.run=^TestDirectoryInUse$")
	holder.Env = append(os.Environ(), "EBB_TEST_HOLD_STORE="+dir)
	stdin, _ := holder.StdinPipe()
	stdout, _ := holder.StdoutPipe()
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		holder.Wait()
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if line != "held\n" {
		t.Fatalf("holder: %q, %v", line, err)
	}
	_, err = Open(dir)
	want := "the directory is in use by another Ebb (process " + strconv.Itoa(holder.Process.Pid) + "); stop it or choose another --data-dir"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("second open: %v, want an error saying %q", err, want)
	}
}
