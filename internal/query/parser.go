package query

import (
	"math"
	"strconv"
	"strings"
)

// MaxDepth caps the nesting of expressions and subqueries; deeper input is
// rejected rather than risking the stack.
const MaxDepth = 100

// parser is a recursive-descent parser with one token of lookahead. Every
// method that consumes a token calls next or expect; expect always advances,
// so a malformed query cannot make the parser loop.
type parser struct {
	src  string
	sc   scanner
	errs errorList

	// The current token.
	pos int
	tok token
	lit string
	end int // offset just past the current token

	depth int
}

// bailout is panicked (and recovered in parse) to stop after too many
// errors or too deep a nesting.
type bailout struct{}

func (p *parser) init(src string) {
	p.src = src
	p.sc.init(src, func(pos int, msg string) { p.error(pos, msg) })
	p.next()
}

func (p *parser) next() {
	p.pos, p.tok, p.lit = p.sc.scan()
	p.end = p.sc.off
}

// peek is the token after the current one.
func (p *parser) peek() token {
	sc := p.sc
	sc.err = func(int, string) {} // the scan proper reports them
	_, tok, _ := sc.scan()
	return tok
}

func (p *parser) error(pos int, msg string) {
	// Report at most one error per position: the first is the useful one.
	for _, e := range p.errs.errs {
		if e.Pos == pos {
			return
		}
	}
	p.errs.add(SyntaxError, p.src, pos, msg)
	if len(p.errs.errs) >= MaxErrors {
		panic(bailout{})
	}
}

// found describes the current token for "expected X, found Y".
func (p *parser) found() string {
	if p.tok == tEOF {
		return "end of query"
	}
	text := p.src[p.pos:p.end]
	if len(text) > 40 {
		text = text[:40] + "..."
	}
	return "'" + text + "'"
}

func (p *parser) errorExpected(what string) {
	p.error(p.pos, "expected "+what+", found "+p.found())
}

// expect reports an error unless the current token is tok, and advances.
func (p *parser) expect(tok token) int {
	pos := p.pos
	if p.tok != tok {
		p.errorExpected(tok.String())
	}
	p.next()
	return pos
}

// expectClosing is expect for a closing bracket: at end of query it does
// not advance past more input, and the message names the opening.
func (p *parser) expectClosing(tok token, open int, what string) {
	if p.tok != tok {
		line, col := lineCol(p.src, open)
		p.errorExpected(tok.String() + " to close " + what + " opened at line " + strconv.Itoa(line) + ", column " + strconv.Itoa(col))
		if p.tok == tEOF {
			return
		}
	}
	p.next()
}

func (p *parser) enter() {
	p.depth++
	if p.depth > MaxDepth {
		p.error(p.pos, "query nested too deeply (more than "+strconv.Itoa(MaxDepth)+" levels)")
		panic(bailout{})
	}
}

func (p *parser) leave() { p.depth-- }

// isClauseStart reports whether tok begins a clause, where error recovery
// can resume.
func isClauseStart(tok token) bool {
	switch tok {
	case kFrom, kJoin, kWhere, kGroup, kOrder, kOffset, kLimit, tEOF:
		return true
	}
	return false
}

// syncClause skips to the next clause keyword after an error.
func (p *parser) syncClause() {
	for !isClauseStart(p.tok) {
		p.next()
	}
}

// parse parses a whole query. It never panics.
func parse(src string) (stmt *SelectStmt, err error) {
	var p parser
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(bailout); !ok {
				panic(r)
			}
			stmt, err = nil, p.errs.err()
		}
	}()
	p.init(src)
	stmt = p.parseSelect()
	if p.tok != tEOF {
		p.errorExpected("end of query")
	}
	if err := p.errs.err(); err != nil {
		return nil, err
	}
	return stmt, nil
}

// parseFilterClause parses "FROM <source> [WHERE <expr>]", the form of a
// patch condition.
func parseFilterClause(src string) (stmt *SelectStmt, err error) {
	var p parser
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(bailout); !ok {
				panic(r)
			}
			stmt, err = nil, p.errs.err()
		}
	}()
	p.init(src)
	stmt = &SelectStmt{At: p.pos, Star: true}
	if p.tok != kFrom {
		p.errorExpected("FROM")
	} else {
		p.next()
	}
	stmt.From = append(stmt.From, p.parseFromSource(true))
	if p.tok == kWhere {
		p.next()
		stmt.Where = p.parseExpr()
	}
	if p.tok != tEOF {
		p.errorExpected("WHERE or end of condition")
	}
	if err := p.errs.err(); err != nil {
		return nil, err
	}
	return stmt, nil
}

// parseSelect parses SELECT ... up to the end of the statement.
func (p *parser) parseSelect() *SelectStmt {
	p.enter()
	defer p.leave()
	s := &SelectStmt{At: p.pos}
	if p.tok != kSelect {
		p.errorExpected("SELECT")
		if p.tok == tEOF {
			return s
		}
	}
	p.next()
	if p.tok == kDistinct {
		s.Distinct = true
		p.next()
	}
	if p.tok == kTop {
		p.next()
		s.Top = p.parseCount("TOP")
	}
	p.parseSelection(s)
	if p.tok == kFrom {
		p.next()
		s.From = append(s.From, p.parseFromSource(true))
		for p.tok == kJoin {
			p.next()
			s.From = append(s.From, p.parseFromSource(false))
		}
	}
	if p.tok == kWhere {
		p.next()
		s.Where = p.parseExpr()
	}
	if p.tok == kGroup {
		p.next()
		p.expect(kBy)
		s.GroupBy = p.parseExprList()
	}
	if p.tok == kOrder {
		p.next()
		p.expect(kBy)
		for {
			if p.tok == tIdent && strings.EqualFold(p.lit, "RANK") && p.peek() == tIdent {
				// ORDER BY RANK FullTextScore(…) or RRF(…).
				p.next()
				s.OrderBy = append(s.OrderBy, OrderItem{Expr: p.parseExpr(), Desc: true, Explicit: true, Rank: true})
				if p.tok != tComma {
					break
				}
				p.next()
				continue
			}
			item := OrderItem{Expr: p.parseExpr()}
			switch p.tok {
			case kAsc:
				item.Explicit = true
				p.next()
			case kDesc:
				item.Desc, item.Explicit = true, true
				p.next()
			}
			s.OrderBy = append(s.OrderBy, item)
			if p.tok != tComma {
				break
			}
			p.next()
		}
	}
	if p.tok == kOffset {
		p.next()
		s.Offset = p.parseCount("OFFSET")
		if p.tok != kLimit {
			p.errorExpected("LIMIT")
		} else {
			p.next()
			s.Limit = p.parseCount("LIMIT")
		}
	} else if p.tok == kLimit {
		p.error(p.pos, "LIMIT requires OFFSET (write OFFSET 0 LIMIT n)")
		p.next()
		p.parseCount("LIMIT")
	}
	if p.tok != tEOF && p.tok != tRParen {
		switch p.tok {
		case kSelect:
			p.errorExpected("end of query")
		default:
			p.errorExpected(p.clauseExpectation(s))
		}
		p.syncClause()
		// Resume with the clause we stopped at, to report further errors.
		p.parseTail()
	}
	return s
}

// clauseExpectation names what could follow the statement so far.
func (p *parser) clauseExpectation(s *SelectStmt) string {
	switch {
	case s.From == nil && s.Where == nil && s.GroupBy == nil && s.OrderBy == nil && s.Offset == nil:
		return "FROM"
	case s.Where == nil && s.GroupBy == nil && s.OrderBy == nil && s.Offset == nil:
		return "WHERE, JOIN, GROUP BY, ORDER BY, OFFSET or end of query"
	case s.GroupBy == nil && s.OrderBy == nil && s.Offset == nil:
		return "GROUP BY, ORDER BY, OFFSET or end of query"
	case s.OrderBy == nil && s.Offset == nil:
		return "ORDER BY, OFFSET or end of query"
	}
	return "end of query"
}

// parseTail parses clauses after error recovery, only to find more errors.
func (p *parser) parseTail() {
	for p.tok != tEOF {
		switch p.tok {
		case kFrom, kJoin:
			p.next()
			p.parseFromSource(false)
		case kWhere:
			p.next()
			p.parseExpr()
		case kGroup, kOrder:
			p.next()
			p.expect(kBy)
			p.parseExprList()
			if p.tok == kAsc || p.tok == kDesc {
				p.next()
			}
		case kOffset, kLimit:
			p.next()
			p.parseCount("count")
		default:
			p.errorExpected("end of query")
			p.next()
			p.syncClause()
		}
	}
}

// parseCount parses the operand of TOP, OFFSET or LIMIT: a non-negative
// integer literal or a parameter.
func (p *parser) parseCount(clause string) Expr {
	switch p.tok {
	case tNumber:
		e := p.parseNumber()
		if f := e.Val.num; f < 0 || f != math.Trunc(f) || f > math.MaxInt32 {
			p.error(e.At, "the "+clause+" count must be a non-negative integer")
		}
		return e
	case tParam:
		e := &ParamExpr{At: p.pos, Name: p.lit}
		p.next()
		return e
	}
	p.errorExpected("integer or parameter after " + clause)
	if !isClauseStart(p.tok) {
		p.next()
	}
	return &LiteralExpr{At: p.pos, Val: NumberValue(0)}
}

func (p *parser) parseSelection(s *SelectStmt) {
	switch p.tok {
	case tStar:
		s.Star = true
		p.next()
		return
	case kValue:
		s.Value = true
		p.next()
		s.Items = []SelectItem{{Expr: p.parseExpr()}}
		if p.tok == kAs {
			p.error(p.pos, "SELECT VALUE cannot have an alias")
			p.next()
			if p.tok == tIdent {
				p.next()
			}
		}
		return
	case kFrom, tEOF:
		p.errorExpected("'*', VALUE or an expression after SELECT")
		return
	}
	for {
		item := SelectItem{Expr: p.parseExpr()}
		if p.tok == kAs {
			p.next()
			item.AliasPos = p.pos
			item.Alias = p.parseAlias()
		} else if p.tok == tIdent {
			item.AliasPos = p.pos
			item.Alias = p.lit
			p.implicitAlias(selectFollow, s.From == nil)
		}
		s.Items = append(s.Items, item)
		if p.tok != tComma {
			return
		}
		p.next()
	}
}

// parseAlias parses the identifier after AS.
func (p *parser) parseAlias() string {
	if p.tok != tIdent {
		p.errorExpected("identifier")
		if !isClauseStart(p.tok) && p.tok != tComma {
			p.next()
		}
		return ""
	}
	name := p.lit
	p.next()
	return name
}

// parseFromSource parses one FROM or JOIN source.
func (p *parser) parseFromSource(first bool) *FromSource {
	src := &FromSource{At: p.pos}
	switch p.tok {
	case tIdent:
		id := &IdentExpr{At: p.pos, Name: p.lit}
		p.next()
		if p.tok == kIn {
			// alias IN collection
			p.next()
			src.In = true
			src.Alias, src.AliasPos = id.Name, id.At
			src.Expr = p.parseCollection()
			return src
		}
		src.Expr = p.parsePostfix(id)
	case tLParen:
		src.Expr = p.parseCollection()
	default:
		if p.tok.isKeyword() && p.tok != kFrom && !isClauseStart(p.tok) && p.tok != kSelect {
			p.errorExpected("identifier")
		} else {
			p.errorExpected("a container name, an alias or a subquery")
		}
		if !isClauseStart(p.tok) {
			p.next()
		}
		src.Expr = &LiteralExpr{At: src.At}
		return src
	}
	if p.tok == kAs {
		p.next()
		src.AliasPos = p.pos
		src.Alias = p.parseAlias()
	} else if p.tok == tIdent {
		src.AliasPos = p.pos
		src.Alias = p.lit
		p.implicitAlias(fromFollow, false)
	}
	return src
}

// selectFollow and fromFollow are the tokens that may follow a select item
// and a FROM/JOIN source.
var (
	selectFollow = []token{tComma, kFrom, kWhere, kGroup, kOrder, kOffset, tEOF, tRParen}
	fromFollow   = []token{kJoin, kWhere, kGroup, kOrder, kOffset, kLimit, tEOF, tRParen}
)

// implicitAlias consumes an alias written without AS. If what follows
// cannot follow an alias, the "alias" was most likely a misspelt keyword
// (SELECT c.name FORM c): report it as such and skip to the next clause.
func (p *parser) implicitAlias(follow []token, inSelect bool) {
	pos, end := p.pos, p.end
	p.next()
	for _, t := range follow {
		if p.tok == t {
			return
		}
	}
	want := "WHERE, JOIN, GROUP BY, ORDER BY, OFFSET or end of query"
	if inSelect {
		want = "FROM"
	}
	p.error(pos, "expected "+want+", found '"+p.src[pos:end]+"'")
	p.syncClause()
}

// parseCollection parses what follows IN in a FROM/JOIN source, or a
// parenthesized subquery source: a path or a subquery.
func (p *parser) parseCollection() Expr {
	if p.tok == tLParen {
		lparen := p.pos
		p.next()
		if p.tok == kSelect {
			q := p.parseSelect()
			p.expectClosing(tRParen, lparen, "subquery")
			return &SubqueryExpr{At: lparen, Kind: ArraySubquery, Query: q}
		}
		x := p.parseExpr()
		p.expectClosing(tRParen, lparen, "parenthesis")
		return p.parsePostfix(x)
	}
	return p.parseUnary()
}
