package query

import (
	"errors"
	"strings"
	"testing"
)

func TestFilter(t *testing.T) {
	doc := []byte(`{"id":"1","x":1,"s":"abc","tags":["a","b"],"o":{"k":null}}`)
	tests := []struct {
		cond string
		want bool
	}{
		{"from c where c.x = 1", true},
		{"FROM c WHERE c.x = 2", false},
		{"from c where c.missing = 1", false},
		{"from c where NOT (c.missing = 1)", false},
		{"from c where STARTSWITH(c.s, 'a') AND IS_NULL(c.o.k)", true},
		{"from c", true},
		{"from root r where r.id = '1'", true},
		{"from t in c.tags where t = 'b'", true},
		{"from t in c.tags where t = 'z'", false},
		{"from c where ARRAY_CONTAINS(c.tags, 'a')", true},
		{"from c where GetCurrentDateTime() > '2000-01-01'", true},
	}
	for _, tt := range tests {
		f, err := ParseFilter(tt.cond)
		if err != nil {
			t.Fatalf("ParseFilter(%q): %v", tt.cond, err)
		}
		got, err := f.Match(doc, Env{Now: evalNow})
		if err != nil || got != tt.want {
			t.Errorf("%q: got %v, %v, want %v", tt.cond, got, err, tt.want)
		}
	}
}

func TestFilterErrors(t *testing.T) {
	tests := []struct {
		cond string
		col  int
		msg  string
	}{
		{"where c.x = 1", 1, "expected FROM, found 'where'"},
		{"from c wher c.x = 1", 8, "found 'wher'"},
		{"from c where", 13, "expected expression, found end of query"},
		{"from c where c.x = ", 20, "expected expression"},
		{"from c where d.x = 1", 14, "identifier 'd' could not be resolved"},
		{"from c where COUNT(1) > 0", 14, "aggregate COUNT is only allowed in the SELECT list"},
		{"from c where c.x = 1 order by c.x", 22, "expected WHERE or end of condition, found 'order'"},
	}
	for _, tt := range tests {
		_, err := ParseFilter(tt.cond)
		var qe *Error
		if !errors.As(err, &qe) {
			t.Fatalf("ParseFilter(%q): got %v, want *Error", tt.cond, err)
		}
		if qe.Col != tt.col || !strings.Contains(qe.Msg, tt.msg) {
			t.Errorf("ParseFilter(%q):\n got col %d %s\nwant col %d %s", tt.cond, qe.Col, qe.Msg, tt.col, tt.msg)
		}
	}
	f, _ := ParseFilter("from c where c.x = 1")
	if _, err := f.Match([]byte(`{"x":`), Env{}); err == nil {
		t.Errorf("Match on invalid JSON: got no error")
	}
}
