package main

import (
	"flag"
	"fmt"
	"runtime"
	"runtime/debug"
)

// version is set at link time by scripts/release
// (-ldflags "-X main.version=v1.2.3"); otherwise the build's module
// version or commit stands in.
var version = ""

// versionString is Ebb's version, the commit it was built from when
// known, and the platform.
func versionString() string {
	v, commit, modified := version, "", false
	if info, ok := debug.ReadBuildInfo(); ok {
		if v == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			v = info.Main.Version
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	if v == "" {
		v = "devel"
	}
	out := "ebb " + v
	if commit != "" {
		if len(commit) > 12 {
			commit = commit[:12]
		}
		out += " (" + commit
		if modified {
			out += ", modified"
		}
		out += ")"
	}
	return out + " " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH
}

// runVersion is `ebb version`.
func runVersion(args []string) error {
	fs := flag.NewFlagSet("ebb version", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: ebb version\n\nPrints Ebb's version, commit, Go version and platform.")
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("version: unexpected arguments %q", fs.Args())
	}
	fmt.Println(versionString())
	return nil
}
