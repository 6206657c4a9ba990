package index

import (
	"encoding/hex"
	"errors"
	"net/url"
	"testing"

	"github.com/ebbdb/ebb/internal/query"
)

// TestTokens pins the continuation layout: marker, big-endian policy
// fingerprint, query token.
func TestTokens(t *testing.T) {
	tok := append(TokenPrefix(OrderedToken, 0x0102030405060708), 1, 2)
	if got := hex.EncodeToString(tok); got != "4f01020304050607080102" {
		t.Fatalf("token %s", got)
	}
	q, kind, fp, err := SplitToken(tok)
	if err != nil || kind != OrderedToken || fp != 0x0102030405060708 || string(q) != "\x01\x02" {
		t.Fatalf("SplitToken: %x %c %x %v", q, kind, fp, err)
	}
	if q, kind, _, err := SplitToken([]byte{1, 9}); err != nil || kind != 0 || string(q) != "\x01\x09" {
		t.Fatalf("a scan's token: %x %d %v", q, kind, err)
	}
	if _, _, _, err := SplitToken([]byte{FilterToken, 1}); !errors.Is(err, query.ErrBadContinuation) {
		t.Fatalf("a cut index token: %v", err)
	}
}

func TestUtilization(t *testing.T) {
	for _, tc := range []struct {
		potential []string
		want      string
	}{
		{nil, `{"UtilizedSingleIndexes":[],"PotentialSingleIndexes":[],"UtilizedCompositeIndexes":[],"PotentialCompositeIndexes":[]}`},
		{[]string{"/a/?"}, `{"UtilizedSingleIndexes":[],"PotentialSingleIndexes":[{"FilterExpression":"","IndexSpec":"/a/?","FilterPreciseSet":true,"IndexPreciseSet":true,"IndexImpactScore":"High"}],"UtilizedCompositeIndexes":[],"PotentialCompositeIndexes":[]}`},
	} {
		got, err := url.QueryUnescape(Utilization(nil, tc.potential))
		if err != nil || got != tc.want {
			t.Errorf("%v: got %s, want %s", tc.potential, got, tc.want)
		}
	}
}
