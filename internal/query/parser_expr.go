package query

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

func (p *parser) parseExprList() []Expr {
	list := []Expr{p.parseExpr()}
	for p.tok == tComma {
		p.next()
		list = append(list, p.parseExpr())
	}
	return list
}

// parseExpr parses a full scalar expression.
func (p *parser) parseExpr() Expr {
	p.enter()
	defer p.leave()
	return p.parseTernary()
}

func (p *parser) parseTernary() Expr {
	cond := p.parseCoalesce()
	if p.tok != tQuestion {
		return cond
	}
	p.next()
	then := p.parseExpr()
	p.expect(tColon)
	p.enter()
	els := p.parseTernary()
	p.leave()
	return &TernaryExpr{Cond: cond, Then: then, Else: els}
}

func (p *parser) parseCoalesce() Expr { return p.parseLeft(tCoalesce, p.parseOr) }
func (p *parser) parseOr() Expr       { return p.parseLeft(kOr, p.parseAnd) }
func (p *parser) parseAnd() Expr      { return p.parseLeft(kAnd, p.parseNot) }

// parseLeft parses operands joined by op, grouping to the left.
func (p *parser) parseLeft(op token, operand func() Expr) Expr {
	x := operand()
	for p.tok == op {
		pos := p.pos
		p.next()
		x = &BinaryExpr{X: x, OpPos: pos, Op: op, Y: operand()}
	}
	return x
}

func (p *parser) parseNot() Expr {
	if p.tok == kNot {
		pos := p.pos
		p.next()
		p.enter()
		x := p.parseNot()
		p.leave()
		return &UnaryExpr{At: pos, Op: kNot, X: x}
	}
	return p.parseComparison()
}

func (p *parser) parseComparison() Expr {
	x := p.parseConcat()
	between := false // x is a BETWEEN this loop parsed
	for {
		startsBetween := p.tok == kBetween || p.tok == kNot && p.peek() == kBetween
		if between && startsBetween {
			// 1 BETWEEN 2 AND 3 BETWEEN 4 AND 5 is a syntax error in
			// the service's grammar: the second would compare a boolean.
			p.error(p.pos, "BETWEEN cannot follow BETWEEN: put one of them in parentheses")
		}
		between = startsBetween
		switch p.tok {
		case tEq, tNeq, tLt, tLe, tGt, tGe:
			op, pos := p.tok, p.pos
			p.next()
			x = &BinaryExpr{X: x, OpPos: pos, Op: op, Y: p.parseConcat()}
			continue
		case kIn, kLike, kBetween:
			x = p.parsePredicate(x, p.pos, false)
			continue
		case kNot:
			pos := p.pos
			p.next()
			if p.tok != kIn && p.tok != kLike && p.tok != kBetween {
				p.errorExpected("IN, LIKE or BETWEEN after NOT")
				return x
			}
			x = p.parsePredicate(x, pos, true)
			continue
		}
		return x
	}
}

// parsePredicate parses IN, LIKE or BETWEEN (the current token) after x.
func (p *parser) parsePredicate(x Expr, pos int, not bool) Expr {
	switch p.tok {
	case kIn:
		p.next()
		lparen := p.pos
		p.expect(tLParen)
		e := &InExpr{X: x, At: pos, Not: not}
		if p.tok == tRParen {
			p.errorExpected("expression")
		} else {
			e.List = p.parseExprList()
		}
		p.expectClosing(tRParen, lparen, "IN list")
		return e
	case kLike:
		p.next()
		e := &LikeExpr{X: x, At: pos, Not: not, Pattern: p.parseConcat()}
		if p.tok == kEscape {
			p.next()
			e.Escape = p.parseConcat()
		}
		return e
	default: // kBetween
		p.next()
		e := &BetweenExpr{X: x, At: pos, Not: not}
		e.Lo = p.parseConcat()
		p.expect(kAnd)
		e.Hi = p.parseConcat()
		return e
	}
}

// binaryLevels lists the binary operators from || (loosest) to * (tightest),
// below the comparisons.
var binaryLevels = [][]token{
	{tConcat},
	{tPipe},
	{tCaret},
	{tAmp},
	{tShl, tShr, tShrZ},
	{tPlus, tMinus},
	{tStar, tSlash, tPercent},
}

func (p *parser) parseConcat() Expr { return p.parseBinary(0) }

func (p *parser) parseBinary(level int) Expr {
	if level == len(binaryLevels) {
		return p.parseUnary()
	}
	x := p.parseBinary(level + 1)
	for slices.Contains(binaryLevels[level], p.tok) {
		op, pos := p.tok, p.pos
		p.next()
		x = &BinaryExpr{X: x, OpPos: pos, Op: op, Y: p.parseBinary(level + 1)}
	}
	return x
}

func (p *parser) parseUnary() Expr {
	switch p.tok {
	case tMinus, tPlus, tTilde:
		op, pos := p.tok, p.pos
		p.next()
		p.enter()
		x := p.parseUnary()
		p.leave()
		// Fold -<number literal> so that -1 is a constant.
		if lit, ok := x.(*LiteralExpr); ok && op == tMinus && lit.Val.kind == Number {
			return &LiteralExpr{At: pos, Val: NumberValue(-lit.Val.num)}
		}
		return &UnaryExpr{At: pos, Op: op, X: x}
	}
	return p.parsePostfix(p.parsePrimary())
}

// parsePostfix parses .name and [index] after x.
func (p *parser) parsePostfix(x Expr) Expr {
	for {
		switch p.tok {
		case tDot:
			dot := p.pos
			p.next()
			if p.tok == tIdent {
				x = &PropertyExpr{X: x, Dot: dot, Name: p.lit}
				p.next()
			} else if p.tok.isKeyword() {
				// Cosmos DB reserves its keywords after '.' too: c.value
				// is a syntax error there, and c["value"] the way to write it.
				p.error(p.pos, fmt.Sprintf("incorrect syntax near '%s': a reserved word cannot follow '.'; write [\"%s\"] instead", p.lit, p.lit))
				p.next()
				return x
			} else {
				p.errorExpected("property name after '.'")
				if p.tok != tEOF && !isClauseStart(p.tok) {
					p.next()
				}
				return x
			}
		case tLBrack:
			lbrack := p.pos
			p.next()
			idx := p.parseExpr()
			p.expectClosing(tRBrack, lbrack, "index")
			x = &IndexExpr{X: x, Lbrack: lbrack, Index: idx}
		default:
			return x
		}
	}
}

func (p *parser) parseNumber() *LiteralExpr {
	pos, lit := p.pos, p.lit
	p.next()
	var f float64
	if len(lit) > 2 && (lit[1] == 'x' || lit[1] == 'X') {
		u, err := strconv.ParseUint(lit[2:], 16, 64)
		if err != nil {
			p.error(pos, "number "+strconv.Quote(lit)+" is out of range")
		}
		f = float64(u)
	} else {
		var err error
		f, err = strconv.ParseFloat(lit, 64)
		if err != nil && !strings.Contains(err.Error(), "range") {
			// Malformed (already reported by the scanner); use 0.
			f = 0
		} else if err != nil || math.IsInf(f, 0) {
			p.error(pos, "number "+strconv.Quote(lit)+" is out of range")
			f = 0
		}
	}
	return &LiteralExpr{At: pos, Val: NumberValue(f)}
}

func (p *parser) parsePrimary() Expr {
	pos := p.pos
	switch p.tok {
	case tNumber:
		return p.parseNumber()
	case tString:
		lit := p.lit
		p.next()
		return &LiteralExpr{At: pos, Val: StringValue(lit)}
	case kTrue:
		p.next()
		return &LiteralExpr{At: pos, Val: trueValue}
	case kFalse:
		p.next()
		return &LiteralExpr{At: pos, Val: falseValue}
	case kNull:
		p.next()
		return &LiteralExpr{At: pos, Val: nullValue}
	case kUndefined:
		p.next()
		return &LiteralExpr{At: pos, Val: undefinedValue}
	case tParam:
		name := p.lit
		p.next()
		return &ParamExpr{At: pos, Name: name}
	case tIdent:
		name := p.lit
		p.next()
		if p.tok == tLParen && p.peek() == kSelect && (strings.EqualFold(name, "FIRST") || strings.EqualFold(name, "LAST")) {
			// FIRST(SELECT …) and LAST(SELECT …), which the service's
			// grammar has (the .NET SDK's parser baselines,
			// ScalarExpressionSqlParserBaselineTests.First and .Last).
			kind := FirstSubquery
			if strings.EqualFold(name, "LAST") {
				kind = LastSubquery
			}
			lparen := p.pos
			p.next()
			q := p.parseSelect()
			p.expectClosing(tRParen, lparen, "subquery")
			return &SubqueryExpr{At: pos, Kind: kind, Query: q}
		}
		if p.tok == tLParen {
			return p.parseCall(pos, name, false)
		}
		return &IdentExpr{At: pos, Name: name}
	case kUdf:
		p.next()
		p.expect(tDot)
		name := p.lit
		if p.tok != tIdent {
			p.errorExpected("function name after udf.")
		}
		p.next()
		if p.tok != tLParen {
			p.errorExpected("'('")
			return &LiteralExpr{At: pos}
		}
		return p.parseCall(pos, name, true)
	case kExists, kArray:
		kind := ExistsSubquery
		if p.tok == kArray {
			kind = ArraySubquery
		}
		p.next()
		lparen := p.pos
		p.expect(tLParen)
		q := p.parseSelect()
		p.expectClosing(tRParen, lparen, "subquery")
		return &SubqueryExpr{At: pos, Kind: kind, Query: q}
	case tLParen:
		p.next()
		if p.tok == kSelect {
			q := p.parseSelect()
			p.expectClosing(tRParen, pos, "subquery")
			return &SubqueryExpr{At: pos, Kind: ScalarSubquery, Query: q}
		}
		x := p.parseExpr()
		p.expectClosing(tRParen, pos, "parenthesis")
		return x
	case tLBrack:
		return p.parseArray()
	case tLBrace:
		return p.parseObject()
	}
	p.errorExpected("expression")
	if p.tok != tEOF && !isClauseStart(p.tok) && p.tok != tRParen && p.tok != tRBrack && p.tok != tRBrace && p.tok != tComma {
		p.next()
	}
	return &LiteralExpr{At: pos}
}

func (p *parser) parseCall(pos int, name string, udf bool) Expr {
	lparen := p.pos
	p.next() // '('
	call := &CallExpr{At: pos, Name: name, Udf: udf, agg: -1}
	if p.tok != tRParen {
		p.enter()
		call.Args = p.parseExprList()
		p.leave()
	}
	p.expectClosing(tRParen, lparen, "argument list")
	return call
}

func (p *parser) parseArray() Expr {
	p.enter()
	defer p.leave()
	e := &ArrayExpr{Lbrack: p.pos}
	p.next()
	if p.tok != tRBrack {
		e.Elems = p.parseExprList()
	}
	p.expectClosing(tRBrack, e.Lbrack, "array")
	return e
}

func (p *parser) parseObject() Expr {
	p.enter()
	defer p.leave()
	e := &ObjectExpr{Lbrace: p.pos}
	p.next()
loop:
	for p.tok != tRBrace && p.tok != tEOF {
		f := ObjectField{At: p.pos}
		switch {
		case p.tok == tIdent || p.tok == tString || p.tok.isKeyword():
			f.Name = p.lit
			p.next()
		default:
			p.errorExpected("property name")
			if p.tok == tComma {
				p.next()
				continue
			}
			if isClauseStart(p.tok) || p.tok == tRParen || p.tok == tRBrack {
				break loop
			}
			p.next()
			continue
		}
		p.expect(tColon)
		f.Value = p.parseExpr()
		e.Fields = append(e.Fields, f)
		if p.tok != tComma {
			break
		}
		p.next()
		if p.tok == tRBrace {
			// { "a": 1, } is a syntax error in the service's grammar.
			p.errorExpected("property name")
		}
	}
	p.expectClosing(tRBrace, e.Lbrace, "object")
	return e
}
