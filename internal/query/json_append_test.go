package query

import (
	"math"
	"testing"
)

func TestAppendNumber(t *testing.T) {
	pointOne, pointTwo := 0.1, 0.2
	tests := []struct {
		in   float64
		want string
	}{
		{0, "0"},
		{math.Copysign(0, -1), "0"},
		{1, "1"},
		{-42, "-42"},
		{pointOne + pointTwo, "0.30000000000000004"},
		{1.5, "1.5"},
		{1e21, "1e+21"},
		{1.5e21, "1.5e+21"},
		{123456789012345680000, "123456789012345680000"},
		{1e-7, "1e-7"},
		{1.25e-7, "1.25e-7"},
		{0.000001, "0.000001"},
		{9007199254740993, "9007199254740992"},
		{-1e300, "-1e+300"},
	}
	for _, tt := range tests {
		if got := string(appendNumber(nil, tt.in)); got != tt.want {
			t.Errorf("appendNumber(%v): got %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestAppendString(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", `"plain"`},
		{"q\"b\\", `"q\"b\\"`},
		{"\x00\x1f\n\t", `"\u0000\u001f\n\t"`},
		{"<&>", `"<&>"`},
		{"bad\xffutf8", "\"bad\ufffdutf8\""},
		{"é", `"é"`},
	}
	for _, tt := range tests {
		if got := string(appendString(nil, tt.in)); got != tt.want {
			t.Errorf("appendString(%q): got %s, want %s", tt.in, got, tt.want)
		}
	}
}
