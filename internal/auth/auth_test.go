package auth

import (
	"net/url"
	"testing"
	"time"
)

func TestVerify(t *testing.T) {
	v, err := NewVerifier(EmulatorKey)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 22, 5, 19, 17, 0, time.UTC)
	date := "Sun, 22 Nov 2026 05:19:17 GMT"
	good := v.Sign("GET", "docs", "dbs/db/colls/c 1/docs/x y", date)
	other, _ := NewVerifier("bm90IHRoZSBrZXk=")
	cases := []struct {
		name, verb, typ, link, date, auth string
		now                               time.Time
		ok                                bool
	}{
		{"valid", "GET", "docs", "dbs/db/colls/c 1/docs/x y", date, good, now, true},
		{"valid, not URL-encoded", "GET", "docs", "dbs/db/colls/c 1/docs/x y", date, "type=master&ver=1.0&sig=" + mustUnescape(t, good)[len("type=master&ver=1.0&sig="):], now, true},
		{"lower-case verb signs the same", "get", "DOCS", "dbs/db/colls/c 1/docs/x y", date, good, now, true},
		{"other link", "GET", "docs", "dbs/db/colls/c 1/docs/x", date, good, now, false},
		{"other verb", "PUT", "docs", "dbs/db/colls/c 1/docs/x y", date, good, now, false},
		{"other key", "GET", "docs", "dbs/db/colls/c 1/docs/x y", date, other.Sign("GET", "docs", "dbs/db/colls/c 1/docs/x y", date), now, false},
		{"no header", "GET", "docs", "x", date, "", now, false},
		{"no date", "GET", "docs", "dbs/db/colls/c 1/docs/x y", "", good, now, false},
		{"bad date", "GET", "docs", "dbs/db/colls/c 1/docs/x y", "yesterday", good, now, false},
		{"date too old", "GET", "docs", "dbs/db/colls/c 1/docs/x y", date, good, now.Add(16 * time.Minute), false},
		{"garbage signature", "GET", "docs", "x", date, "type=master&ver=1.0&sig=%%%", now, false},
		{"huge signature", "GET", "docs", "x", date, "type=master&ver=1.0&sig=" + string(make([]byte, 500)), now, false},
		{"aad refused by default", "GET", "docs", "x", date, "type=aad&ver=1.0&sig=a.b.c", now, false},
	}
	for _, c := range cases {
		_, err := v.Verify(c.verb, c.typ, c.link, c.date, c.auth, c.now)
		if (err == nil) != c.ok {
			t.Errorf("%s: Verify = %v, want ok=%v", c.name, err, c.ok)
		}
	}
}

func mustUnescape(t *testing.T, s string) string {
	t.Helper()
	out := ""
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			var b byte
			for _, h := range s[i+1 : i+3] {
				b <<= 4
				switch {
				case h >= '0' && h <= '9':
					b |= byte(h - '0')
				case h >= 'A' && h <= 'F':
					b |= byte(h - 'A' + 10)
				}
			}
			out += string(b)
			i += 2
			continue
		}
		out += string(s[i])
	}
	return out
}

func TestResourceOf(t *testing.T) {
	cases := []struct{ path, typ, link string }{
		{"/", "", ""},
		{"/dbs", "dbs", ""},
		{"/dbs/db1", "dbs", "dbs/db1"},
		{"/dbs/db1/colls", "colls", "dbs/db1"},
		{"/dbs/db1/colls/c%201/docs/x%2Fy", "docs", "dbs/db1/colls/c 1/docs/x/y"},
		{"/dbs/db1/colls/c1/docs", "docs", "dbs/db1/colls/c1"},
		{"/offers", "offers", ""},
		{"/offers/AbCd/", "offers", "abcd"},
		{"/_ebb/clock", "_ebb", "_ebb/clock"},
	}
	for _, c := range cases {
		typ, link, err := ResourceOf(c.path)
		if err != nil || typ != c.typ || link != c.link {
			t.Errorf("ResourceOf(%q) = %q, %q, %v; want %q, %q", c.path, typ, link, err, c.typ, c.link)
		}
	}
	if _, _, err := ResourceOf("/dbs/%zz"); err == nil {
		t.Error("a bad escape must be an error")
	}
}

func BenchmarkVerify(b *testing.B) {
	v, _ := NewVerifier(EmulatorKey)
	date := "Sun, 22 Nov 2026 05:19:17 GMT"
	now := time.Date(2026, 11, 22, 5, 19, 17, 0, time.UTC)
	sig := v.Sign("GET", "docs", "dbs/db/colls/c/docs/item-000001", date)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.Verify("GET", "docs", "dbs/db/colls/c/docs/item-000001", date, sig, now); err != nil {
			b.Fatal(err)
		}
	}
}

func TestVerifyBearer(t *testing.T) {
	v, err := NewVerifier(EmulatorKey)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, auth string
		ok         bool
	}{
		{"the master key", "Bearer " + EmulatorKey, true},
		{"scheme in any case", "bearer " + EmulatorKey, true},
		{"another key", "Bearer bm90IHRoZSBrZXk=", false},
		{"a prefix of the key", "Bearer " + EmulatorKey[:40], false},
		{"not base64", "Bearer %%%", false},
		{"no token", "Bearer", false},
		{"empty token", "Bearer ", false},
		{"basic", "Basic " + EmulatorKey, false},
		{"a signature", v.Sign("GET", "metrics", "", "Sun, 22 Nov 2026 05:19:17 GMT"), false},
		{"nothing", "", false},
	}
	for _, c := range cases {
		if err := v.VerifyBearer(c.auth); (err == nil) != c.ok {
			t.Errorf("%s: VerifyBearer(%q) = %v, want ok=%v", c.name, c.auth, err, c.ok)
		}
	}
}

// TestQueryUnescape holds queryUnescape to url.QueryUnescape, which it
// replaced on the path every request takes.
func TestQueryUnescape(t *testing.T) {
	for _, s := range []string{
		"", "plain", "type%3Dmaster%26ver%3D1.0%26sig%3Dab%2Bcd%2F%3D", "a+b", "%zz", "%4", "%", "50%", "%41%42", "%e2%82%ac",
	} {
		checkUnescape(t, s)
	}
}

func checkUnescape(t *testing.T, s string) {
	t.Helper()
	want, err := url.QueryUnescape(s)
	got, ok := queryUnescape([]byte("x"), s)
	if ok != (err == nil) || ok && string(got) != "x"+want {
		t.Fatalf("queryUnescape(%q) = %q, %v; url.QueryUnescape gives %q, %v", s, got, ok, want, err)
	}
}

func FuzzQueryUnescape(f *testing.F) {
	f.Add("type%3Dmaster%26sig%3Da+b%2")
	f.Fuzz(checkUnescape)
}
