package feed

import (
	"testing"

	"github.com/ebbdb/ebb/internal/engine/dberr"
)

func TestParsePolicy(t *testing.T) {
	for _, tc := range []struct {
		name, raw string // raw "" is an absent policy
		want      int64
		err       string
	}{
		{"absent", "", 0, ""},
		{"null", `null`, 0, ""},
		{"empty", `{}`, 0, ""},
		{"null-retention", `{"retentionDuration":null}`, 0, ""},
		{"hour", `{"retentionDuration":60}`, 60, ""},
		{"max", `{"retentionDuration":2147483648}`, 1 << 31, ""},
		{"not-object", `60`, 0, `The changeFeedPolicy must be an object such as {"retentionDuration": 60} (minutes).`},
		{"negative", `{"retentionDuration":-1}`, 0, `The changeFeedPolicy.retentionDuration -1 is invalid; it is a whole number of minutes from 0 to 2147483648, e.g. {"retentionDuration": 60}.`},
		{"fraction", `{"retentionDuration":1.5}`, 0, `The changeFeedPolicy.retentionDuration 1.5 is invalid; it is a whole number of minutes from 0 to 2147483648, e.g. {"retentionDuration": 60}.`},
		{"too-long", `{"retentionDuration":2147483649}`, 0, `The changeFeedPolicy.retentionDuration 2147483649 is invalid; it is a whole number of minutes from 0 to 2147483648, e.g. {"retentionDuration": 60}.`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var raw []byte
			if tc.raw != "" {
				raw = []byte(tc.raw)
			}
			got, err := ParsePolicy(raw)
			if tc.err != "" {
				if !dberr.IsKind(err, dberr.KindBadRequest) || err.Error() != tc.err {
					t.Fatalf("ParsePolicy(%s): got %v, want bad request %q", tc.raw, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("ParsePolicy(%s): got %d, %v; want %d", tc.raw, got, err, tc.want)
			}
		})
	}
}
