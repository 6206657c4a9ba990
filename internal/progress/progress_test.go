package progress

import (
	"bytes"
	"testing"
	"time"
)

func TestPlainLines(t *testing.T) {
	var out bytes.Buffer
	m := New(&out, "export shop/carts")
	t0 := m.start
	now := t0
	m.now = func() time.Time { return now }
	m.SetTotals(1000, 1<<20)
	now = t0.Add(time.Second)
	m.Add(100, 100<<10) // under the 5 s between lines: nothing
	now = t0.Add(5 * time.Second)
	m.Add(400, 412<<10)
	now = t0.Add(10 * time.Second)
	m.Add(500, 512<<10)
	m.Done("3 expired items skipped")
	want := "export shop/carts: 500/1000 items, 512.0 KiB/1.0 MiB, 102.4 KiB/s (100 items/s), 5s left\n" +
		"export shop/carts: 1000/1000 items, 1.0 MiB/1.0 MiB, 102.4 KiB/s (100 items/s) in 10s\n" +
		"export shop/carts: 3 expired items skipped\n"
	if out.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", out.String(), want)
	}
}

func TestBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1536: "1.5 KiB", 20 << 20: "20.0 MiB", 3 << 30: "3.0 GiB"} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}
