package query

import "testing"

func TestOtherFunctions(t *testing.T) {
	runExprCases(t, []exprCase{
		{"IIF(c.b, 'yes', 'no')", `"yes"`},
		{"IIF(c.n, 'yes', 'no')", `"no"`},
		{"IIF(c.missing, 'yes', c.missing)", "undefined"},
		{"DocumentId({_rid: 'AQIDBAUGBwgsAQAAAAAAAA=='})", "300"},
		{"DocumentId({_rid: 'AQIDBAUGBwg='})", "undefined"},
		{"DocumentId({_rid: 17})", "undefined"},
		{"DocumentId(c)", "undefined"},
		{"DocumentId(c.o)", "undefined"},
		{"FullTextContains(c.text, 'quick')", "true"},
		{"FullTextContains(c.text, 'QUICK')", "true"},
		{"FullTextContains(c.text, 'qui')", "false"},
		{"FullTextContains(c.text, 'brown fox')", "true"},
		{"FullTextContains(c.text, 'fox brown')", "false"},
		{"FullTextContains(c.n, 'x')", "undefined"},
		{"FullTextContainsAll(c.text, 'fox', 'the')", "true"},
		{"FullTextContainsAll(c.text, 'fox', 'dog')", "false"},
		{"FullTextContainsAny(c.text, 'dog', 'jumps')", "true"},
		{"FullTextContainsAny(c.text, 'dog', 'cat')", "false"},
	})
}
