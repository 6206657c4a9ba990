package query

import "strings"

// token is a lexical token of the query language.
type token uint8

const (
	tEOF token = iota
	tIllegal
	tIdent  // c, name
	tParam  // @name (lit includes '@')
	tNumber // 12, 1.5e3, 0x1F
	tString // 'x' or "x" (lit is the decoded value)

	tLParen   // (
	tRParen   // )
	tLBrack   // [
	tRBrack   // ]
	tLBrace   // {
	tRBrace   // }
	tComma    // ,
	tDot      // .
	tColon    // :
	tQuestion // ?
	tCoalesce // ??
	tStar     // *
	tSlash    // /
	tPercent  // %
	tPlus     // +
	tMinus    // -
	tTilde    // ~
	tEq       // =
	tNeq      // != or <>
	tLt       // <
	tLe       // <=
	tGt       // >
	tGe       // >=
	tAmp      // &
	tPipe     // |
	tCaret    // ^
	tConcat   // ||
	tShl      // <<
	tShr      // >>
	tShrZ     // >>>

	keywordBeg
	kAnd
	kArray
	kAs
	kAsc
	kBetween
	kBy
	kDesc
	kDistinct
	kEscape
	kExists
	kFalse
	kFrom
	kGroup
	kIn
	kJoin
	kLike
	kLimit
	kNot
	kNull
	kOffset
	kOr
	kOrder
	kSelect
	kTop
	kTrue
	kUdf
	kUndefined
	kValue
	kWhere
	keywordEnd
)

var tokenNames = [...]string{
	tEOF:      "end of query",
	tIllegal:  "illegal character",
	tIdent:    "identifier",
	tParam:    "parameter",
	tNumber:   "number",
	tString:   "string",
	tLParen:   "'('",
	tRParen:   "')'",
	tLBrack:   "'['",
	tRBrack:   "']'",
	tLBrace:   "'{'",
	tRBrace:   "'}'",
	tComma:    "','",
	tDot:      "'.'",
	tColon:    "':'",
	tQuestion: "'?'",
	tCoalesce: "'??'",
	tStar:     "'*'",
	tSlash:    "'/'",
	tPercent:  "'%'",
	tPlus:     "'+'",
	tMinus:    "'-'",
	tTilde:    "'~'",
	tEq:       "'='",
	tNeq:      "'!='",
	tLt:       "'<'",
	tLe:       "'<='",
	tGt:       "'>'",
	tGe:       "'>='",
	tAmp:      "'&'",
	tPipe:     "'|'",
	tCaret:    "'^'",
	tConcat:   "'||'",
	tShl:      "'<<'",
	tShr:      "'>>'",
	tShrZ:     "'>>>'",

	kAnd:       "AND",
	kArray:     "ARRAY",
	kAs:        "AS",
	kAsc:       "ASC",
	kBetween:   "BETWEEN",
	kBy:        "BY",
	kDesc:      "DESC",
	kDistinct:  "DISTINCT",
	kEscape:    "ESCAPE",
	kExists:    "EXISTS",
	kFalse:     "false",
	kFrom:      "FROM",
	kGroup:     "GROUP",
	kIn:        "IN",
	kJoin:      "JOIN",
	kLike:      "LIKE",
	kLimit:     "LIMIT",
	kNot:       "NOT",
	kNull:      "null",
	kOffset:    "OFFSET",
	kOr:        "OR",
	kOrder:     "ORDER",
	kSelect:    "SELECT",
	kTop:       "TOP",
	kTrue:      "true",
	kUdf:       "udf",
	kUndefined: "undefined",
	kValue:     "VALUE",
	kWhere:     "WHERE",
}

func (t token) String() string {
	if int(t) < len(tokenNames) && tokenNames[t] != "" {
		return tokenNames[t]
	}
	return "token"
}

func (t token) isKeyword() bool { return t > keywordBeg && t < keywordEnd }

// keywords maps the upper-case spelling of each keyword to its token.
var keywords = func() map[string]token {
	m := make(map[string]token)
	for t := keywordBeg + 1; t < keywordEnd; t++ {
		m[strings.ToUpper(tokenNames[t])] = t
	}
	return m
}()

// lookupKeyword returns the keyword token for an identifier spelling, or
// tIdent. Keywords are case-insensitive.
func lookupKeyword(s string) token {
	if len(s) < 2 || len(s) > 9 {
		return tIdent
	}
	var buf [9]byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' {
			c -= 'a' - 'A'
		}
		buf[i] = c
	}
	if t, ok := keywords[string(buf[:len(s)])]; ok {
		return t
	}
	return tIdent
}
