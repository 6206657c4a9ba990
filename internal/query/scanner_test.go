package query

import (
	"fmt"
	"strings"
	"testing"
)

func TestScanner(t *testing.T) {
	src := "SELECT c.a, @p1 FROM c WHERE c['x'] >= -1.5e3 /* c */ AND c.b <> 0x1f -- end\n OR \"q\\\"\" ?? NULL >>> 2 || 'é'"
	want := []string{
		"0 SELECT SELECT", "7 identifier c", "8 '.' .", "9 identifier a", "10 ',' ,", "12 parameter @p1",
		"16 FROM FROM", "21 identifier c", "23 WHERE WHERE", "29 identifier c", "30 '[' [", "31 string x",
		"34 ']' ]", "36 '>=' >=", "39 '-' -", "40 number 1.5e3", "54 AND AND", "58 identifier c", "59 '.' .",
		"60 identifier b", "62 '!=' <>", "65 number 0x1f", "78 OR OR", "81 string q\"", "87 '??' ??",
		"90 null NULL", "95 '>>>' >>>", "99 number 2", "101 '||' ||", "104 string é", "108 end of query ",
	}
	var s scanner
	var errs []string
	s.init(src, func(pos int, msg string) { errs = append(errs, fmt.Sprint(pos, msg)) })
	var got []string
	for {
		pos, tok, lit := s.scan()
		got = append(got, fmt.Sprintf("%d %s %s", pos, tok, lit))
		if tok == tEOF {
			break
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("tokens:\n got %q\nwant %q", got, want)
	}
	if len(errs) != 0 {
		t.Errorf("unexpected errors %v", errs)
	}
}

func TestKeywordsCaseInsensitive(t *testing.T) {
	for _, w := range []string{"select", "SELECT", "Select", "sElEcT"} {
		if got := lookupKeyword(w); got != kSelect {
			t.Errorf("lookupKeyword(%q): got %v, want SELECT", w, got)
		}
	}
	for _, w := range []string{"selects", "c", "root", "IS_DEFINED", "x"} {
		if got := lookupKeyword(w); got != tIdent {
			t.Errorf("lookupKeyword(%q): got %v, want identifier", w, got)
		}
	}
}
