package document

import (
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
