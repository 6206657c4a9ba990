package document

import (
	"math"
	"strings"
	"testing"
)

// TestEPKV2 checks the version 2 hash against the service's baselines
// (as the Go SDK ships them in internal/epk/testdata), unmasked, and the
// routing form the change feed compares.
func TestEPKV2(t *testing.T) {
	str := func(s string) PKComponent { return PKComponent{Kind: PKString, Str: s} }
	num := func(f float64) PKComponent { return PKComponent{Kind: PKNumber, Num: f} }
	for _, tc := range []struct {
		name string
		in   PKComponent
		want string
	}{
		{"undefined", PKComponent{Kind: PKNone}, "51622DAA78F835834610ABE56EFF5CB5"},
		{"null", PKComponent{Kind: PKNull}, "778867E4430E67857ACE5C908374FE16"},
		{"true", PKComponent{Kind: PKTrue}, "4E711127C5B5A8E4726AC6DD306A3E59"},
		{"false", PKComponent{Kind: PKFalse}, "EFE1BE91E90A3439635E0E9E37361EF2"},
		{"empty string", str(""), "B2E9366E637A71B4E710384B2F4970A0"},
		{"short string", str("asdf"), "608BF1D598F5B63AD5520F04FE58C5E8"},
		{"99 bytes", str("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"), "3C02F609961C32AAC2B912B940D1209A"},
		{"zero", num(0), "555B95BEDAC4B1E9EC1CDC9BB0DDDE58"},
		{"one", num(1), "A0CD98B339BA78A5D0CF6953B87070B0"},
		{"minus one", num(-1), "59938E7A936C1C5B9E3AE842BBC16839"},
		{"path", str("/path1"), "B499FD5198AE0F1EB6B77F6E428D2FF0"},
	} {
		if got := HashEPKV2(AppendEPKInput(nil, tc.in), false); got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.name, got, tc.want)
		}
	}
	multi := PKDef{Kind: "MultiHash", version: 2, Paths: [][]string{{"a"}, {"b"}}}
	got := multi.EPKV2(PartitionKey{str("/path1"), str("/path2")})
	if want := "3499FD5198AE0F1EB6B77F6E428D2FF027A1848BD1102A3B65AFF266874D0FF5"; got != want {
		t.Errorf("MultiHash [/path1, /path2]: got %s, want %s (each level masked)", got, want)
	}
}

// TestEPKV1 checks version 1 EPKs against the JS SDK's test vectors
// (azure-sdk-for-js, sdk/cosmosdb/cosmos/test/internal/unit/hashing/
// v1.spec.ts) and the raw hash against the service's baselines (as the Go
// SDK ships them in internal/epk/testdata, PartitionKeyHashV1, which hash
// the whole value: the cut to 100 characters is the EPK's, not the hash's).
func TestEPKV1(t *testing.T) {
	str := func(s string) PKComponent { return PKComponent{Kind: PKString, Str: s} }
	num := func(f float64) PKComponent { return PKComponent{Kind: PKNumber, Num: f} }
	for _, tc := range []struct {
		in   PKComponent
		want string
	}{
		{str("partitionKey"), "05C1E1B3D9CD2608716273756A756A706F4C667A00"},
		{str("redmond"), "05C1EFE313830C087366656E706F6500"},
		{str(strings.Repeat("a", 110)), "05C1EB5921F70608" + strings.Repeat("62", 100) + "00"},
		{str(""), "05C1CF33970FF80800"},
		{str("aa"), "05C1C7B7270FE008626200"},
		{PKComponent{Kind: PKNull}, "05C1ED45D7475601"},
		{PKComponent{Kind: PKTrue}, "05C1D7C5A903D803"},
		{PKComponent{Kind: PKFalse}, "05C1DB857D857C02"},
		{PKComponent{Kind: PKNone}, "05C1D529E345DC00"},
		{num(5), "05C1D9C1C5517C05C014"},
		{num(5.5), "05C1D7A771716C05C016"},
		{num(12313.1221), "05C1ED154D592E05C0C90723F50FC925D8"},
		{num(123456789), "05C1D9E1A5311C05C19DB7CD8B40"},
	} {
		if got := EPKV1(PartitionKey{tc.in}); got != tc.want {
			t.Errorf("EPKV1(%s): got %s, want %s", PartitionKey{tc.in}.AppendJSON(nil), got, tc.want)
		}
	}
	for _, tc := range []struct {
		in   PKComponent
		want uint32
	}{
		{PKComponent{Kind: PKNone}, 0x514E28B7},
		{PKComponent{Kind: PKNull}, 0xE45AD1AB},
		{PKComponent{Kind: PKTrue}, 0x5E2A8076},
		{PKComponent{Kind: PKFalse}, 0x6C27D09F},
		{str(""), 0x3CCCB0FF},
		{str("asdf"), 0xB02BABC2},
		{str(strings.Repeat("a", 99)), 0xCCC122D9},
		{str(strings.Repeat("a", 100)), 0xD5843D83},
		{str(strings.Repeat("a", 101)), 0x3B1B5D8D},
		{num(0), 0x1EDA80A6},
		{num(1), 0xE1655A93},
		{num(-1), 0x452BDBE7},
		{num(math.MaxFloat64), 0x378B3C46},
		{num(-math.MaxFloat64), 0xE38DD8A1},
	} {
		if got := HashEPKV1(AppendEPKInputV1(nil, tc.in)); got != tc.want {
			t.Errorf("HashEPKV1(%s): got %08X, want %08X", PartitionKey{tc.in}.AppendJSON(nil), got, tc.want)
		}
	}
	// A Hash key of version 1 uses it; MultiHash keys are always version 2.
	v1 := PKDef{Kind: "Hash", version: 1, Paths: [][]string{{"pk"}}}
	if got := v1.EPK(PartitionKey{str("redmond")}); got != "05C1EFE313830C087366656E706F6500" {
		t.Errorf("version 1 Hash key: got %s", got)
	}
	multi := PKDef{Kind: "MultiHash", version: 1, Paths: [][]string{{"a"}}}
	if got, want := multi.EPK(PartitionKey{str("/path1")}), multi.EPKV2(PartitionKey{str("/path1")}); got != want {
		t.Errorf("MultiHash: got %s, want the version 2 %s", got, want)
	}
}

func TestTruncateUTF16(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"abc", 2, "ab"},
		{"abc", 5, "abc"},
		{"é" + "x", 1, "é"},   // é is one code unit, two bytes
		{"a😀b", 2, "a\uFFFD"}, // the cut splits the pair: its high half
		{"a😀b", 3, "a😀"},
		{strings.Repeat("é", 60), 100, strings.Repeat("é", 60)},
	} {
		if got := truncateUTF16(tc.in, tc.n); got != tc.want {
			t.Errorf("truncateUTF16(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

// TestEPKFilterV1 serves an EPK sub-range of a version 1 container.
func TestEPKFilterV1(t *testing.T) {
	def, err := ParsePKDef([]byte(`{"paths":["/pk"],"kind":"Hash"}`)) // version 1 by default
	if err != nil {
		t.Fatal(err)
	}
	in, err := def.EPKFilter("", "05C1E0")
	if err != nil || in == nil {
		t.Fatalf("EPKFilter: no filter (%v) for a sub-range", err)
	}
	for _, tc := range []struct {
		pk   string
		want bool
	}{
		{"aa", true},            // 05C1C7…
		{"", true},              // 05C1CF…
		{"redmond", false},      // 05C1EF…
		{"partitionKey", false}, // 05C1E1…
	} {
		enc := PartitionKey{{Kind: PKString, Str: tc.pk}}.Encode(nil)
		if got := in(enc); got != tc.want {
			t.Errorf("%q in [\"\", 05C1E0): got %v, want %v", tc.pk, got, tc.want)
		}
	}
}
