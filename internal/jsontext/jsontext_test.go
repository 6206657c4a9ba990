package jsontext

import (
	"encoding/json"
	"testing"
)

func TestStyles(t *testing.T) {
	for _, s := range []string{"", "plain", `quo"te\back`, "<a href=x>&</a>", "tab\tnl\ncr\r\x00\x1f", "line\u2028sep\u2029", "bad\xffutf8", "é漢🙂"} {
		want, _ := json.Marshal(s)
		if got := EncodingJSON.AppendString(nil, s); string(got) != string(want) {
			t.Errorf("EncodingJSON(%q) = %s, want %s", s, got, want)
		}
		got := Minimal.AppendString(nil, s)
		var back string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Errorf("Minimal(%q) = %s, not JSON: %v", s, got, err)
		}
	}
	if got := string(Minimal.AppendString(nil, "<&>\u2028\xff")); got != "\"<&>\u2028\ufffd\"" {
		t.Errorf("Minimal escapes more than JSON requires: %s", got)
	}
}
