package storagetest

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ebbdb/ebb/internal/storage"
)

// Benchmark measures the point operations the engine issues most: an
// Update that writes one key, alone and from 8 goroutines at once (where a
// backend's group commit or connection pool shows), and a View that reads
// one key. open returns a fresh, empty store; Benchmark closes it.
func Benchmark(b *testing.B, open func(b *testing.B) storage.Store) {
	value := make([]byte, 100)
	for i := range value {
		value[i] = byte('a' + i%26)
	}
	fresh := func(b *testing.B) storage.Store {
		s := open(b)
		b.Cleanup(func() { _ = s.Close() })
		return s
	}
	setOne := func(s storage.Store, i int) error {
		return s.Update(context.Background(), func(w storage.Writer) error {
			return w.Set(benchKey(i), value)
		})
	}

	b.Run("UpdateSet", func(b *testing.B) {
		s := fresh(b)
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			if err := setOne(s, i); err != nil {
				b.Fatal(err)
			}
		}
	})

	b.Run("UpdateSet8Goroutines", func(b *testing.B) {
		s := fresh(b)
		b.ReportAllocs()
		b.ResetTimer()
		// b.N operations shared by exactly 8 goroutines, whatever GOMAXPROCS is.
		var next atomic.Int64
		var failed atomic.Value
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for i := int(next.Add(1)); i <= b.N; i = int(next.Add(1)) {
					if err := setOne(s, i); err != nil {
						failed.Store(err)
						return
					}
				}
			})
		}
		wg.Wait()
		if err, _ := failed.Load().(error); err != nil {
			b.Fatal(err)
		}
	})

	b.Run("ViewGet", func(b *testing.B) {
		s := fresh(b)
		const keys = 1000
		err := s.Update(context.Background(), func(w storage.Writer) error {
			for i := range keys {
				if err := w.Set(benchKey(i), value); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			err := s.View(context.Background(), func(r storage.Reader) error {
				_, err := r.Get(benchKey(i % keys))
				return err
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}

func benchKey(i int) []byte { return fmt.Appendf(nil, "bench/%010d", i) }
