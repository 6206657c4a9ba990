package query

import "testing"

func TestTypeFunctions(t *testing.T) {
	runExprCases(t, []exprCase{
		{"IS_DEFINED(c.n)", "true"},
		{"IS_DEFINED(c.missing)", "false"},
		{"IS_DEFINED(c.z)", "true"},
		{"IS_NULL(c.z)", "true"},
		{"IS_NULL(c.missing)", "false"},
		{"IS_BOOL(c.b)", "true"},
		{"IS_BOOL(1)", "false"},
		{"IS_NUMBER(c.f)", "true"},
		{"IS_NUMBER(c.str5)", "false"},
		{"IS_STRING(c.s)", "true"},
		{"IS_ARRAY(c.arr)", "true"},
		{"IS_ARRAY(c.o)", "false"},
		{"IS_OBJECT(c.o)", "true"},
		{"IS_PRIMITIVE(c.z)", "true"},
		{"IS_PRIMITIVE(c.s)", "true"},
		{"IS_PRIMITIVE(c.arr)", "false"},
		{"IS_PRIMITIVE(c.missing)", "false"},
		{"IS_INTEGER(c.n)", "true"},
		{"IS_INTEGER(c.f)", "false"},
		{"IS_INTEGER(c.str5)", "false"},
		{"IS_INTEGER(1e300)", "false"},
		{"IS_INTEGER(-9223372036854775808)", "true"},
		{"IS_INTEGER(9223372036854775807)", "true"},
		{"IS_INTEGER(18446744073709551615)", "false"},
		{"IS_FINITE_NUMBER(c.f)", "true"},
		{"IS_FINITE_NUMBER(c.s)", "false"},
		{"is_defined(c.n)", "true"},
	})
}
