package ttl_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/ebbdb/ebb/internal/ttl"
	"github.com/ebbdb/ebb/test/ttlmatrix"
)

// TestTTLMatrix checks the pure rules against the TTL contract's data
// file, testdata/ttl/matrix at the module root: its default-ttl, item-ttl
// and expiry rows. The scenarios need a store; internal/engine and the
// SDK suites run them.
func TestTTLMatrix(t *testing.T) {
	datadriven.RunTest(t, ttlmatrix.Path(t), func(t *testing.T, d *datadriven.TestData) string {
		switch d.Cmd {
		case "default-ttl":
			def, err := ttl.ParseDefault(ttlmatrix.Raw(d, "value"))
			if err != nil {
				return "400 " + err.Error()
			}
			return ttlmatrix.Setting(defaultRaw(def))
		case "item-ttl":
			var lines []string
			for _, c := range []struct {
				name string
				def  ttl.Default
			}{{"TTL on", ttl.Forever}, {"TTL off", ttl.Off}} {
				outcome := "accepted"
				if _, err := ttl.CheckItemTTL(ttlmatrix.Raw(d, "value"), c.def); err != nil {
					outcome = "400 " + err.Error()
				}
				lines = append(lines, c.name+": "+outcome)
			}
			return strings.Join(lines, "\n")
		case "expiry":
			return expiry(t, d)
		}
		return d.Expected
	})
}

// defaultRaw writes a Default as the container property: nil when off.
func defaultRaw(def ttl.Default) json.RawMessage {
	if !def.On() {
		return nil
	}
	return json.RawMessage(strconv.FormatInt(int64(def), 10))
}

func expiry(t *testing.T, d *datadriven.TestData) string {
	const ts = 1_700_000_000
	def, err := ttl.ParseDefault(ttlmatrix.Raw(d, "defaultTtl"))
	if err != nil {
		t.Fatalf("%s: %v", d.Pos, err)
	}
	item, err := ttl.CheckItemTTL(ttlmatrix.Raw(d, "ttl"), def)
	if err != nil {
		t.Fatalf("%s: %v", d.Pos, err)
	}
	arg, _ := d.Arg("at")
	var out []string
	for _, v := range arg.Vals {
		s, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatalf("%s: %v", d.Pos, err)
		}
		state := "gone"
		if ttl.Visible(ts, item, def, ts+s) {
			state = "visible"
		}
		out = append(out, "_ts+"+v+" "+state)
	}
	return strings.Join(out, "\n")
}
