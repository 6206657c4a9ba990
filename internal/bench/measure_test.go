package bench

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, x := range v {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = i + 1
	}
	tests := []struct {
		name    string
		samples []time.Duration
		p       float64
		want    time.Duration
	}{
		{"empty", nil, 50, 0},
		{"one sample", ms(7), 99, 7 * time.Millisecond},
		{"median of odd count", ms(1, 2, 3), 50, 2 * time.Millisecond},
		{"median of even count is the lower middle", ms(1, 2, 3, 4), 50, 2 * time.Millisecond},
		{"p99 of 100", ms(hundred...), 99, 99 * time.Millisecond},
		{"p100 is the maximum", ms(hundred...), 100, 100 * time.Millisecond},
		{"p99 of 10 is the maximum", ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 99, 10 * time.Millisecond},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Percentile(tc.samples, tc.p); got != tc.want {
				t.Errorf("Percentile(%v, %v) = %v, want %v", tc.samples, tc.p, got, tc.want)
			}
		})
	}
}

func TestMeasureCount(t *testing.T) {
	for _, conc := range []int{1, 8} {
		var calls atomic.Int64
		seen := make([]atomic.Bool, 100)
		st, err := Measure(context.Background(), conc, Limit{Count: 100}, func(_ context.Context, i int) error {
			calls.Add(1)
			if i < len(seen) {
				seen[i].Store(true)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if st.Ops != 100 || calls.Load() != 100 {
			t.Errorf("concurrency %d: got %d ops, %d calls, want 100", conc, st.Ops, calls.Load())
		}
		if conc == 1 {
			for i := range seen {
				if !seen[i].Load() {
					t.Errorf("sequential run skipped i=%d", i)
				}
			}
		}
	}
}

func TestMeasureStopsOnError(t *testing.T) {
	boom := errors.New("boom")
	_, err := Measure(context.Background(), 4, Limit{Count: 1000}, func(_ context.Context, i int) error {
		if i >= 10 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) {
		t.Fatalf("got %v, want %v", err, boom)
	}
}

func TestMeasureCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Measure(ctx, 2, Limit{Count: 10}, func(context.Context, int) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
}

func TestItemSize(t *testing.T) {
	for _, n := range []int{0, 7, 1 << 40} {
		if b := Item(ItemID(123456), n); len(b) != ItemSize {
			t.Errorf("Item(n=%d) is %d bytes, want %d", n, len(b), ItemSize)
		}
	}
}

func TestThousands(t *testing.T) {
	for _, tc := range []struct {
		in   float64
		want string
	}{{0, "0"}, {999.4, "999"}, {1000, "1,000"}, {13512.4, "13,512"}, {1234567, "1,234,567"}, {-4500, "-4,500"}} {
		if got := thousands(tc.in); got != tc.want {
			t.Errorf("thousands(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestRoundLimit(t *testing.T) {
	total := 0
	for r := range 3 {
		total += roundLimit(Limit{Count: 10}, r, 3).Count
	}
	if total != 10 {
		t.Errorf("rounds of 10 ops add up to %d", total)
	}
	if got := roundLimit(Limit{Duration: 10 * time.Second}, 4, 5); got.Duration != 2*time.Second {
		t.Errorf("a fifth of 10s = %v", got.Duration)
	}
}
