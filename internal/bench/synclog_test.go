package bench

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
)

// TestSyncLogKeepsEveryRecord commits from many goroutines at once and
// checks that each record is in the file exactly once.
func TestSyncLogKeepsEveryRecord(t *testing.T) {
	l, err := newSyncLog(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	name := l.f.Name()
	const writers, each = 8, 50
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				if err := l.commit(fmt.Appendf(nil, "<%d.%d>", w, i)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	for w := range writers {
		for i := range each {
			rec := fmt.Sprintf("<%d.%d>", w, i)
			if n := strings.Count(string(data), rec); n != 1 {
				t.Errorf("record %s is in the log %d times, want once", rec, n)
			}
		}
	}
	if err := l.close(); err != nil {
		t.Fatal(err)
	}
}
