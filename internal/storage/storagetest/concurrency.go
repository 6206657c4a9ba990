package storagetest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"

	"github.com/ebbdb/ebb/internal/storage"
)

// readInt reads a decimal counter; absent reads as zero.
func readInt(r storage.Reader, key string) (int, error) {
	v, found, err := read(r, key)
	if err != nil || !found {
		return 0, err
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("value of %q: %w", key, err)
	}
	return n, nil
}

func writeInt(w storage.Writer, key string, n int) error {
	return w.Set([]byte(key), strconv.AppendInt(nil, int64(n), 10))
}

// testConcurrentCounter runs read-increment-write from many goroutines on
// one key. A lost update (two increments that read the same value) shows
// up as a short total.
func testConcurrentCounter(t *testing.T, s storage.Store) {
	const workers, increments = 8, 200
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range increments {
				err := s.Update(context.Background(), func(w storage.Writer) error {
					n, err := readInt(w, "counter")
					if err != nil {
						return err
					}
					return writeInt(w, "counter", n+1)
				})
				if err != nil {
					t.Errorf("increment: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	wantValue(t, s, "counter", strconv.Itoa(workers*increments))
}

// testConcurrentTransfer moves money between two accounts while readers
// check, in Views and in read-only Updates, that the total never changes:
// a reader that saw one side of a transfer would see money appear or
// vanish.
func testConcurrentTransfer(t *testing.T, s storage.Store) {
	const (
		writers, transfers = 4, 100
		readers            = 4
		total              = 1000
	)
	set(t, s, kv{"acct/a", "500"}, kv{"acct/b", "500"})

	// sum reads both balances by point reads and by a scan.
	sum := func(r storage.Reader) error {
		a, err := readInt(r, "acct/a")
		if err != nil {
			return err
		}
		b, err := readInt(r, "acct/b")
		if err != nil {
			return err
		}
		if a+b != total {
			return fmt.Errorf("Get: a=%d + b=%d = %d, want %d", a, b, a+b, total)
		}
		pairs, err := collect(r, []byte("acct/"), []byte("acct0"), rand.N(2) == 0)
		if err != nil {
			return err
		}
		scanned := 0
		for _, p := range pairs {
			n, err := strconv.Atoi(p.v)
			if err != nil {
				return err
			}
			scanned += n
		}
		if scanned != total {
			return fmt.Errorf("Scan: %v sums to %d, want %d", pairs, scanned, total)
		}
		return nil
	}

	done := make(chan struct{})
	var readerWG, writerWG sync.WaitGroup
	for i := range readers {
		readerWG.Go(func() {
			// Keep reading until the writers finish, and at least a few times.
			for n := 0; ; n++ {
				select {
				case <-done:
					if n >= 10 {
						return
					}
				default:
				}
				var err error
				if i%2 == 0 {
					err = s.View(context.Background(), sum)
				} else {
					err = s.Update(context.Background(), func(w storage.Writer) error { return sum(w) })
				}
				if err != nil {
					t.Errorf("reader: %v", err)
					return
				}
			}
		})
	}
	for range writers {
		writerWG.Go(func() {
			for range transfers {
				from, to := "acct/a", "acct/b"
				if rand.N(2) == 0 {
					from, to = to, from
				}
				err := s.Update(context.Background(), func(w storage.Writer) error {
					f, err := readInt(w, from)
					if err != nil {
						return err
					}
					g, err := readInt(w, to)
					if err != nil {
						return err
					}
					amount := rand.N(f + 1)
					return errors.Join(writeInt(w, from, f-amount), writeInt(w, to, g+amount))
				})
				if err != nil {
					t.Errorf("transfer: %v", err)
					return
				}
			}
		})
	}
	writerWG.Wait()
	close(done)
	readerWG.Wait()
	view(t, s, sum)
}

// testWriteSkew is the two-doctors-on-call anomaly that snapshot isolation
// allows and serializability forbids: each transaction checks that both
// are on call and takes only itself off. Run concurrently, at most one of
// them may succeed in doing so.
func testWriteSkew(t *testing.T, s storage.Store) {
	const rounds = 50
	for round := range rounds {
		set(t, s, kv{"oncall/x", "1"}, kv{"oncall/y", "1"})
		var wg sync.WaitGroup
		for _, me := range []string{"oncall/x", "oncall/y"} {
			wg.Go(func() {
				err := s.Update(context.Background(), func(w storage.Writer) error {
					x, err := readInt(w, "oncall/x")
					if err != nil {
						return err
					}
					y, err := readInt(w, "oncall/y")
					if err != nil {
						return err
					}
					if x+y < 2 {
						return nil
					}
					return writeInt(w, me, 0)
				})
				if err != nil {
					t.Errorf("round %d: %v", round, err)
				}
			})
		}
		wg.Wait()
		var x, y int
		view(t, s, func(r storage.Reader) error {
			var err error
			if x, err = readInt(r, "oncall/x"); err != nil {
				return err
			}
			y, err = readInt(r, "oncall/y")
			return err
		})
		if x+y != 1 {
			t.Fatalf("round %d: x=%d y=%d after two concurrent checks, want exactly one left on call", round, x, y)
		}
	}
}
