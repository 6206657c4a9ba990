package query

import (
	"slices"
	"strconv"
	"strings"
)

// formatExpr prints an expression as canonical query text: keywords in
// upper case, strings in double quotes, minimal parentheses made explicit
// around every compound operand. The query plan uses it for
// orderByExpressions and groupByExpressions, the checker to compare
// expressions.
func formatExpr(e Expr) string {
	var b strings.Builder
	writeExpr(&b, e)
	return b.String()
}

// formatStmt prints a statement.
func formatStmt(s *SelectStmt) string {
	var b strings.Builder
	writeStmt(&b, s)
	return b.String()
}

func writeStmt(b *strings.Builder, s *SelectStmt) {
	b.WriteString("SELECT ")
	if s.Distinct {
		b.WriteString("DISTINCT ")
	}
	if s.Top != nil {
		b.WriteString("TOP ")
		writeExpr(b, s.Top)
		b.WriteByte(' ')
	}
	switch {
	case s.Star:
		b.WriteByte('*')
	case s.Value:
		b.WriteString("VALUE ")
		writeExpr(b, s.Items[0].Expr)
	default:
		for i, it := range s.Items {
			if i > 0 {
				b.WriteString(", ")
			}
			writeExpr(b, it.Expr)
			if it.Alias != "" {
				b.WriteString(" AS ")
				b.WriteString(it.Alias)
			}
		}
	}
	writeFromWhere(b, s, false)
	for i, g := range s.GroupBy {
		if i == 0 {
			b.WriteString(" GROUP BY ")
		} else {
			b.WriteString(", ")
		}
		writeExpr(b, g)
	}
	for i, o := range s.OrderBy {
		if i == 0 {
			b.WriteString(" ORDER BY ")
		} else {
			b.WriteString(", ")
		}
		if o.Rank {
			b.WriteString("RANK ")
			writeExpr(b, o.Expr)
			continue
		}
		writeExpr(b, o.Expr)
		if o.Desc {
			b.WriteString(" DESC")
		}
	}
	if s.Offset != nil {
		b.WriteString(" OFFSET ")
		writeExpr(b, s.Offset)
		b.WriteString(" LIMIT ")
		writeExpr(b, s.Limit)
	}
}

func writeSource(b *strings.Builder, src *FromSource) {
	if src.In {
		b.WriteString(src.Alias)
		b.WriteString(" IN ")
	}
	if sq, ok := src.Expr.(*SubqueryExpr); ok {
		b.WriteByte('(')
		writeStmt(b, sq.Query)
		b.WriteByte(')')
	} else if isPath(src.Expr) {
		writeExpr(b, src.Expr)
	} else {
		b.WriteByte('(')
		writeExpr(b, src.Expr)
		b.WriteByte(')')
	}
	if src.In {
		return
	}
	if src.Alias != "" && src.Alias != inferredName(src.Expr) {
		b.WriteByte(' ')
		b.WriteString(src.Alias)
	}
}

func isSimpleIdent(s string) bool {
	if s == "" || lookupKeyword(s) != tIdent {
		return false
	}
	for i, r := range s {
		if !(isLetter(r) || (i > 0 && r >= '0' && r <= '9')) {
			return false
		}
	}
	return true
}

func writeExpr(b *strings.Builder, e Expr) {
	switch x := e.(type) {
	case nil:
	case *LiteralExpr:
		if x.Val.kind == Undefined {
			b.WriteString("undefined")
		} else {
			b.Write(x.Val.AppendJSON(nil))
		}
	case *ParamExpr:
		b.WriteString(x.Name)
	case *IdentExpr:
		b.WriteString(x.Name)
	case *PropertyExpr:
		// A compound operand in parentheses ((a % b).c); a number with
		// a space (0 .a, not 0.a, which scans as a malformed number).
		writeOperand(b, x.X)
		if lit, ok := x.X.(*LiteralExpr); ok && lit.Val.kind == Number {
			b.WriteByte(' ')
		}
		if isSimpleIdent(x.Name) {
			b.WriteByte('.')
			b.WriteString(x.Name)
		} else {
			b.WriteByte('[')
			b.Write(appendString(nil, x.Name))
			b.WriteByte(']')
		}
	case *IndexExpr:
		writeOperand(b, x.X)
		b.WriteByte('[')
		writeExpr(b, x.Index)
		b.WriteByte(']')
	case *UnaryExpr:
		b.WriteString(opText(x.Op))
		if inner, ok := x.X.(*UnaryExpr); ok && (inner.Op == kNot) == (x.Op == kNot) {
			// A prefix operator applies to another of its precedence as
			// written, with no parentheses, which would each add a
			// nesting level the text did not have (the parser allows
			// MaxDepth), so that a canonical form (and a query plan's
			// rewritten query, which the SDKs send back) parses
			// whenever its query did. The space keeps "- -x" from
			// reading as a comment.
			b.WriteByte(' ')
			writeExpr(b, inner)
			return
		}
		if x.Op == kNot {
			b.WriteByte(' ')
		}
		writeOperand(b, x.X)
	case *BinaryExpr:
		if left, ok := x.X.(*BinaryExpr); ok && binaryLevel(left.Op) == binaryLevel(x.Op) {
			// Operators of one level group to the left, so a chain
			// (a AND b AND c, 1 + 2 - 3) is written as it parses, not
			// with a parenthesis per operator: a long chain parses
			// flat, and its parentheses would nest past MaxDepth.
			writeExpr(b, left)
		} else {
			writeOperand(b, x.X)
		}
		b.WriteByte(' ')
		b.WriteString(opText(x.Op))
		b.WriteByte(' ')
		writeOperand(b, x.Y)
	case *InExpr:
		writeOperand(b, x.X)
		if x.Not {
			b.WriteString(" NOT")
		}
		b.WriteString(" IN (")
		for i, y := range x.List {
			if i > 0 {
				b.WriteString(", ")
			}
			writeExpr(b, y)
		}
		b.WriteByte(')')
	case *BetweenExpr:
		writeOperand(b, x.X)
		if x.Not {
			b.WriteString(" NOT")
		}
		b.WriteString(" BETWEEN ")
		writeOperand(b, x.Lo)
		b.WriteString(" AND ")
		writeOperand(b, x.Hi)
	case *LikeExpr:
		writeOperand(b, x.X)
		if x.Not {
			b.WriteString(" NOT")
		}
		b.WriteString(" LIKE ")
		writeOperand(b, x.Pattern)
		if x.Escape != nil {
			b.WriteString(" ESCAPE ")
			writeOperand(b, x.Escape)
		}
	case *TernaryExpr:
		writeOperand(b, x.Cond)
		b.WriteString(" ? ")
		writeOperand(b, x.Then)
		b.WriteString(" : ")
		if _, ok := x.Else.(*TernaryExpr); ok {
			// ?: groups to the right: a chain is written as it parses,
			// for the reason a binary chain is (below).
			writeExpr(b, x.Else)
		} else {
			writeOperand(b, x.Else)
		}
	case *CallExpr:
		if x.Udf {
			b.WriteString("udf.")
			b.WriteString(x.Name)
		} else if x.fn != nil {
			b.WriteString(x.fn.name)
		} else {
			b.WriteString(strings.ToUpper(x.Name))
		}
		b.WriteByte('(')
		for i, y := range x.Args {
			if i > 0 {
				b.WriteString(", ")
			}
			writeExpr(b, y)
		}
		b.WriteByte(')')
	case *ObjectExpr:
		b.WriteByte('{')
		for i, f := range x.Fields {
			if i > 0 {
				b.WriteString(", ")
			}
			b.Write(appendString(nil, f.Name))
			b.WriteString(": ")
			writeExpr(b, f.Value)
		}
		b.WriteByte('}')
	case *ArrayExpr:
		b.WriteByte('[')
		for i, y := range x.Elems {
			if i > 0 {
				b.WriteString(", ")
			}
			writeExpr(b, y)
		}
		b.WriteByte(']')
	case *SubqueryExpr:
		switch x.Kind {
		case ExistsSubquery:
			b.WriteString("EXISTS")
		case ArraySubquery:
			b.WriteString("ARRAY")
		case FirstSubquery:
			b.WriteString("FIRST")
		case LastSubquery:
			b.WriteString("LAST")
		}
		b.WriteByte('(')
		writeStmt(b, x.Query)
		b.WriteByte(')')
	case *groupRefExpr:
		writeExpr(b, x.X)
	default:
		b.WriteString("?" + strconv.Itoa(e.Pos()))
	}
}

// writeOperand writes an operand, in parentheses if it is compound.
func writeOperand(b *strings.Builder, e Expr) {
	switch e.(type) {
	case *BinaryExpr, *InExpr, *BetweenExpr, *LikeExpr, *TernaryExpr, *UnaryExpr:
		b.WriteByte('(')
		writeExpr(b, e)
		b.WriteByte(')')
	default:
		writeExpr(b, e)
	}
}

// binaryLevel is the precedence level of a binary operator, as the parser
// groups them (parseLeft, parseComparison, binaryLevels); operators of
// one level group to the left.
func binaryLevel(op token) int {
	switch op {
	case tCoalesce:
		return 0
	case kOr:
		return 1
	case kAnd:
		return 2
	case tEq, tNeq, tLt, tLe, tGt, tGe:
		return 3
	}
	for i, level := range binaryLevels {
		if slices.Contains(level, op) {
			return 4 + i
		}
	}
	return -1
}

func opText(op token) string {
	switch op {
	case kAnd:
		return "AND"
	case kOr:
		return "OR"
	case kNot:
		return "NOT"
	case tNeq:
		return "!="
	}
	s := op.String()
	return strings.Trim(s, "'")
}
