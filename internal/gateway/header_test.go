package gateway

import (
	"go/ast"
	"go/parser"
	"go/token"
	"net/textproto"
	"path/filepath"
	"strconv"
	"testing"
)

// TestHeaderKeysCanonical checks every key this package reads with
// header, which looks the key up as it is: in any other form than
// net/http's canonical one it would never be found.
func TestHeaderKeysCanonical(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	seen := 0
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				// The keys of a [...]string ranged over, as in
				// checkRequestOptions, are checked too.
				if s, err := strconv.Unquote(lit.Value); err == nil && len(s) > 5 && s[:5] == "X-Ms-" {
					seen++
					if c := textproto.CanonicalMIMEHeaderKey(s); c != s {
						t.Errorf("%s: header key %q is not canonical; want %q", fset.Position(lit.Pos()), s, c)
					}
				}
			}
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) != 2 {
				return true
			}
			if id, ok := call.Fun.(*ast.Ident); !ok || id.Name != "header" {
				return true
			}
			lit, ok := call.Args[1].(*ast.BasicLit)
			if !ok {
				return true
			}
			key, _ := strconv.Unquote(lit.Value)
			if c := textproto.CanonicalMIMEHeaderKey(key); c != key {
				t.Errorf("%s: header(…, %q): want %q", fset.Position(lit.Pos()), key, c)
			}
			return true
		})
	}
	if seen == 0 {
		t.Fatal("found no header keys to check")
	}
}
