package main

import (
	"errors"
	"flag"
	"strings"
	"testing"
)

// TestLimitFlagsPositive checks that a timeout or connection cap of zero
// or less is refused before anything starts: the server has no "no
// limit" setting, and zero must not quietly mean the default.
func TestLimitFlagsPositive(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--read-header-timeout", "0s"}, "--read-header-timeout must be positive"},
		{[]string{"--read-timeout", "0s"}, "--read-timeout must be positive"},
		{[]string{"--write-timeout", "-1s"}, "--write-timeout must be positive"},
		{[]string{"--idle-timeout", "0s"}, "--idle-timeout must be positive"},
		{[]string{"--max-connections", "0"}, "--max-connections must be positive"},
	} {
		err := run(append([]string{"--memory"}, tt.args...))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ebb %s: got %v, want an error saying %q", strings.Join(tt.args, " "), err, tt.want)
		}
	}
}

// TestHelp: --help (and -h) is a request for the usage, which main
// answers with status 0, for ebb and its bench subcommands alike.
func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"bench", "--help"}, {"bench", "ttl", "--help"}, {"clock", "--help"}, {"ttl", "--help"}, {"ls", "-h"}} {
		if err := run(args); !errors.Is(err, flag.ErrHelp) {
			t.Errorf("ebb %s: %v, want flag.ErrHelp", strings.Join(args, " "), err)
		}
	}
}
