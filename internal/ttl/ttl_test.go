package ttl

import (
	"errors"
	"testing"
)

func TestVisible(t *testing.T) {
	const ts = 1_700_000_000
	cases := []struct {
		name string
		item ItemTTL
		def  Default
		now  int64
		want bool
	}{
		{"off ignores item ttl", 5, Off, ts + 100, true},
		{"off, no ttl", Absent, Off, ts + 1e9, true},
		{"forever, no ttl", Absent, Forever, ts + 1e9, true},
		{"forever, item 5, before", 5, Forever, ts + 4, true},
		{"forever, item 5, at", 5, Forever, ts + 5, false},
		{"default 10, no ttl, before", Absent, 10, ts + 9, true},
		{"default 10, no ttl, at", Absent, 10, ts + 10, false},
		{"default 10, item -1", Never, 10, ts + 1e9, true},
		{"default 10, item 20 outlives it", 20, 10, ts + 15, true},
		{"default 10, item 5 dies first", 5, 10, ts + 5, false},
		{"max ttl, no overflow, before", Max, Forever, ts + Max - 1, true},
		{"max ttl, no overflow, at", Max, Forever, ts + Max, false},
	}
	for _, c := range cases {
		if got := Visible(ts, c.item, c.def, c.now); got != c.want {
			t.Errorf("%s: Visible(ts, %d, %d, ts%+d) = %v, want %v", c.name, c.item, c.def, c.now-ts, got, c.want)
		}
	}
}

func TestCheckItemTTL(t *testing.T) {
	cases := []struct {
		raw     string
		def     Default
		want    ItemTTL
		wantErr string
	}{
		{"10", Forever, 10, ""},
		{"10.0", Forever, 10, ""},
		{"1e1", Forever, 10, ""},
		{"-1", Forever, Never, ""},
		{"2147483647", Forever, Max, ""},
		{"0", Forever, 0, "0"},
		{"-10", Forever, 0, "-10"},
		{"2147483648", Forever, 0, "2147483648"},
		{"10.5", Forever, 0, "10.5"},
		{"null", Forever, 0, "null"},
		{`"10"`, Forever, 0, "10"},
		{"true", Forever, 0, "true"},
		{"[]", Forever, 0, "[]"},
		{"{}", Forever, 0, "{}"},
		// TTL off: stored un-interpreted, counts as absent.
		{"0", Off, Absent, ""},
		{"null", Off, Absent, ""},
		{"5", Off, 5, ""},
	}
	for _, c := range cases {
		got, err := CheckItemTTL([]byte(c.raw), c.def)
		if c.wantErr != "" {
			var ie *InvalidItemTTL
			want := "The input ttl '" + c.wantErr + "' is invalid. Ensure to provide a nonzero positive integer less than or equal to '2147483647', or '-1' which means never expire."
			if !errors.As(err, &ie) || err.Error() != want {
				t.Errorf("CheckItemTTL(%s, %d) error = %v, want %q", c.raw, c.def, err, want)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("CheckItemTTL(%s, %d) = %d, %v; want %d", c.raw, c.def, got, err, c.want)
		}
	}
	if got, err := CheckItemTTL(nil, 10); got != Absent || err != nil {
		t.Errorf("absent ttl = %d, %v", got, err)
	}
}

func TestParseDefault(t *testing.T) {
	for _, c := range []struct {
		raw  string
		want Default
		ok   bool
	}{
		{"", Off, true}, {"null", Off, true}, {"-1", Forever, true}, {"1", 1, true},
		{"2147483647", Max, true}, {"0", 0, false}, {"-10", 0, false},
		{"2147483648", 0, false}, {"1.5", 0, false}, {`"10"`, 0, false},
	} {
		var raw []byte
		if c.raw != "" {
			raw = []byte(c.raw)
		}
		got, err := ParseDefault(raw)
		if (err == nil) != c.ok || (c.ok && got != c.want) {
			t.Errorf("ParseDefault(%q) = %d, %v; want %d, ok=%v", c.raw, got, err, c.want, c.ok)
		}
	}
}
