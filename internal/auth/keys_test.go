package auth

import (
	"bytes"
	"encoding/base64"
	"net/url"
	"strings"
	"testing"
	"time"
)

const (
	keyA = "YS1rZXktZm9yLXRlc3RzLW9ubHktYWFhYWFhYWFhYWFh"
	keyB = "Yi1rZXktZm9yLXRlc3RzLW9ubHktYmJiYmJiYmJiYmJi"
	keyR = "ci1rZXktZm9yLXRlc3RzLW9ubHktcnJycnJycnJycnJy"
)

// TestKeyRing: each of the four keys signs; a read-only one says so; keys
// replaced by SetKeys stop working at once.
func TestKeyRing(t *testing.T) {
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	date := now.Format("Mon, 02 Jan 2006 15:04:05 GMT")
	v, err := NewVerifierKeys(Keys{Primary: keyA, Secondary: keyB, ReadOnly: keyR})
	if err != nil {
		t.Fatal(err)
	}
	sign := func(key string) string {
		s, _ := NewVerifier(key)
		return s.Sign("GET", "docs", "dbs/d/colls/c/docs/x", date)
	}
	for _, tt := range []struct {
		key      string
		readOnly bool
	}{{keyA, false}, {keyB, false}, {keyR, true}} {
		ro, err := v.Verify("GET", "docs", "dbs/d/colls/c/docs/x", date, sign(tt.key), now)
		if err != nil || ro != tt.readOnly {
			t.Errorf("key %s…: read-only %v, %v; want %v", tt.key[:6], ro, err, tt.readOnly)
		}
	}
	if err := v.SetKeys(Keys{Primary: keyB}); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify("GET", "docs", "dbs/d/colls/c/docs/x", date, sign(keyA), now); err == nil {
		t.Error("a key rotated out still signs")
	}
	if err := v.SetKeys(Keys{Primary: "not base64!"}); err == nil {
		t.Error("SetKeys took an invalid key")
	}
	if _, err := v.Verify("GET", "docs", "dbs/d/colls/c/docs/x", date, sign(keyB), now); err != nil {
		t.Errorf("an invalid SetKeys changed the keys: %v", err)
	}
	if err := v.VerifyBearer("Bearer " + keyB); err != nil {
		t.Errorf("bearer with the primary key: %v", err)
	}
}

func TestParseKeyFile(t *testing.T) {
	k, err := ParseKeyFile([]byte("# keys\nprimary = " + keyA + "\n\nreadonly=" + keyR + "\n"))
	if err != nil || k.Primary != keyA || k.ReadOnly != keyR || k.Secondary != "" {
		t.Fatalf("got %+v, %v", k, err)
	}
	for _, tt := range []struct{ file, want string }{
		{"secondary=" + keyB, "no primary key"},
		{"primary=" + keyA + "\nprimary=" + keyB, "given twice"},
		{"primary=" + keyA + "\ntertiary=" + keyB, `unknown key "tertiary"`},
		{"primary", "expected NAME=KEY"},
		{"primary=%%%", "not valid base64"},
	} {
		if _, err := ParseKeyFile([]byte(tt.file)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: %v, want an error saying %q", tt.file, err, tt.want)
		}
	}
}

// FuzzVerify: no authorization header, date or path panics the check, and
// none but a real signature passes it.
func FuzzVerify(f *testing.F) {
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	date := now.Format("Mon, 02 Jan 2006 15:04:05 GMT")
	signer, _ := NewVerifier(keyA)
	good := signer.Sign("GET", "docs", "dbs/d/colls/c/docs/x", date)
	f.Add("GET", "docs", "dbs/d/colls/c/docs/x", date, good)
	f.Add("GET", "docs", "dbs/d/colls/c/docs/x", date, "type=master&ver=1.0&sig=")
	f.Add("POST", "dbs", "", date, "type%3Daad%26ver%3D1.0%26sig%3Da.b.c")
	f.Add("GET", "", "", "", "%zz")
	f.Add("PUT", "offers", "abc", date, "type=resource&ver=1.0&sig="+strings.Repeat("A", 200))
	v, _ := NewVerifierKeys(Keys{Primary: keyA, ReadOnly: keyR})
	f.Fuzz(func(t *testing.T, verb, resType, link, date, authorization string) {
		readOnly, err := v.Verify(verb, resType, link, date, authorization, now)
		// Only a signature made with a key can pass: the header may be
		// written another way (escaped or not, without ver, the type
		// in another case where the payload lowercases it), but its
		// signature must be the key's for this request.
		if err == nil && !readOnly && !bytes.Equal(signatureOf(authorization), signatureOf(signer.Sign(verb, resType, link, date))) {
			t.Fatalf("accepted %q for %s %s %s at %q", authorization, verb, resType, link, date)
		}
		v.VerifyBearer(authorization)
		ResourceOf(link)
	})
}

// signatureOf returns the decoded sig of an Authorization header, read
// as Verify reads it, or nil.
func signatureOf(authorization string) []byte {
	if strings.Contains(authorization, "%") {
		if dec, err := url.QueryUnescape(authorization); err == nil {
			authorization = dec
		}
	}
	var sig string
	for _, part := range strings.Split(authorization, "&") {
		if v, ok := strings.CutPrefix(part, "sig="); ok {
			sig = v
		}
	}
	b, err := base64.StdEncoding.DecodeString(sig)
	if err != nil {
		return nil
	}
	return b
}

// FuzzResourceToken opens any Authorization header as a resource token:
// nothing panics, and the only payload that opens is the one this
// verifier sealed (however the header around it is written).
func FuzzResourceToken(f *testing.F) {
	v, err := NewVerifierKeys(Keys{Primary: EmulatorKey, Secondary: keyB})
	if err != nil {
		f.Fatal(err)
	}
	sealed := v.SealResourceToken([]byte("claims"))
	for _, s := range []string{sealed, url.QueryEscape(sealed), "type=resource&ver=1.0&sig=", "type%3Dresource%26sig%3D%ZZ", sealed[:len(sealed)-1], "type=master&ver=1.0&sig=abc"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, header string) {
		payload, err := v.OpenResourceToken(header)
		if err == nil && string(payload) != "claims" {
			t.Fatalf("%q opened to %q, which was never sealed", header, payload)
		}
	})
}

func TestResourceTokenKeys(t *testing.T) {
	v, _ := NewVerifierKeys(Keys{Primary: EmulatorKey, Secondary: keyB})
	token := v.SealResourceToken([]byte("p"))
	// Rolled over: the old primary is now the secondary.
	rolled, _ := NewVerifierKeys(Keys{Primary: keyB, Secondary: EmulatorKey})
	if p, err := rolled.OpenResourceToken(url.QueryEscape(token)); err != nil || string(p) != "p" {
		t.Fatalf("after the keys rolled over: %q, %v", p, err)
	}
	gone, _ := NewVerifierKeys(Keys{Primary: keyB})
	if _, err := gone.OpenResourceToken(token); err == nil {
		t.Fatal("a token of a key the server no longer has opened")
	}
	readOnly, _ := NewVerifierKeys(Keys{Primary: keyB, ReadOnly: EmulatorKey})
	if _, err := readOnly.OpenResourceToken(token); err == nil {
		t.Fatal("a read-only key's token key opened a token")
	}
}
