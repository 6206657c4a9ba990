package query

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// scanner turns query text into tokens. Each call to scan returns the
// token's byte offset, the token and its literal text (the decoded value
// for strings). Lexical errors are reported through err and scanning goes
// on, so the parser sees a token stream to the end.
type scanner struct {
	src string
	off int // next byte to read
	err func(pos int, msg string)
}

func (s *scanner) init(src string, err func(pos int, msg string)) {
	s.src, s.off, s.err = src, 0, err
}

func isLetter(r rune) bool {
	return r == '_' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || (r >= utf8.RuneSelf && unicode.IsLetter(r))
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// skip skips white space and comments (-- to end of line, /* ... */).
func (s *scanner) skip() {
	for s.off < len(s.src) {
		c := s.src[s.off]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			s.off++
		case c == '-' && s.off+1 < len(s.src) && s.src[s.off+1] == '-':
			i := strings.IndexByte(s.src[s.off:], '\n')
			if i < 0 {
				s.off = len(s.src)
			} else {
				s.off += i + 1
			}
		case c == '/' && s.off+1 < len(s.src) && s.src[s.off+1] == '*':
			i := strings.Index(s.src[s.off+2:], "*/")
			if i < 0 {
				s.err(s.off, "comment not terminated")
				s.off = len(s.src)
			} else {
				s.off += 2 + i + 2
			}
		default:
			return
		}
	}
}

func (s *scanner) scan() (pos int, tok token, lit string) {
	s.skip()
	pos = s.off
	if s.off >= len(s.src) {
		return pos, tEOF, ""
	}
	c := s.src[s.off]
	if c >= utf8.RuneSelf || isLetter(rune(c)) {
		r, size := utf8.DecodeRuneInString(s.src[s.off:])
		if isLetter(r) {
			s.off += size
			s.identRest()
			lit = s.src[pos:s.off]
			return pos, lookupKeyword(lit), lit
		}
		s.off += size
		return pos, tIllegal, s.src[pos:s.off]
	}
	if isDigit(c) {
		return s.number()
	}
	s.off++
	two := func(next byte, t2, t1 token) (int, token, string) {
		if s.off < len(s.src) && s.src[s.off] == next {
			s.off++
			return pos, t2, s.src[pos:s.off]
		}
		return pos, t1, s.src[pos:s.off]
	}
	switch c {
	case '"', '\'':
		return s.str(pos, c)
	case '@':
		if s.off < len(s.src) {
			if r, size := utf8.DecodeRuneInString(s.src[s.off:]); isLetter(r) || isDigit(s.src[s.off]) {
				s.off += size
				s.identRest()
				return pos, tParam, s.src[pos:s.off]
			}
		}
		return pos, tIllegal, "@"
	case '(':
		return pos, tLParen, "("
	case ')':
		return pos, tRParen, ")"
	case '[':
		return pos, tLBrack, "["
	case ']':
		return pos, tRBrack, "]"
	case '{':
		return pos, tLBrace, "{"
	case '}':
		return pos, tRBrace, "}"
	case ',':
		return pos, tComma, ","
	case '.':
		return pos, tDot, "."
	case ':':
		return pos, tColon, ":"
	case '?':
		return two('?', tCoalesce, tQuestion)
	case '*':
		return pos, tStar, "*"
	case '/':
		return pos, tSlash, "/"
	case '%':
		return pos, tPercent, "%"
	case '+':
		return pos, tPlus, "+"
	case '-':
		return pos, tMinus, "-"
	case '~':
		return pos, tTilde, "~"
	case '=':
		return pos, tEq, "=" // "==" is not Cosmos SQL: the second '=' is a syntax error
	case '!':
		if s.off < len(s.src) && s.src[s.off] == '=' {
			s.off++
			return pos, tNeq, "!="
		}
		return pos, tIllegal, "!"
	case '<':
		if s.off < len(s.src) {
			switch s.src[s.off] {
			case '=':
				s.off++
				return pos, tLe, "<="
			case '>':
				s.off++
				return pos, tNeq, "<>"
			case '<':
				s.off++
				return pos, tShl, "<<"
			}
		}
		return pos, tLt, "<"
	case '>':
		if s.off < len(s.src) {
			switch s.src[s.off] {
			case '=':
				s.off++
				return pos, tGe, ">="
			case '>':
				s.off++
				if s.off < len(s.src) && s.src[s.off] == '>' {
					s.off++
					return pos, tShrZ, ">>>"
				}
				return pos, tShr, ">>"
			}
		}
		return pos, tGt, ">"
	case '&':
		return pos, tAmp, "&"
	case '|':
		return two('|', tConcat, tPipe)
	case '^':
		return pos, tCaret, "^"
	}
	return pos, tIllegal, s.src[pos:s.off]
}

func (s *scanner) identRest() {
	for s.off < len(s.src) {
		c := s.src[s.off]
		if c < utf8.RuneSelf {
			if isLetter(rune(c)) || isDigit(c) {
				s.off++
				continue
			}
			return
		}
		r, size := utf8.DecodeRuneInString(s.src[s.off:])
		if !isLetter(r) && !unicode.IsDigit(r) {
			return
		}
		s.off += size
	}
}

// number scans a decimal (12, 1.5, 2e-3) or hexadecimal (0x1F) literal.
func (s *scanner) number() (int, token, string) {
	pos := s.off
	src := s.src
	if src[s.off] == '0' && s.off+1 < len(src) && (src[s.off+1] == 'x' || src[s.off+1] == 'X') {
		s.off += 2
		d := s.off
		for s.off < len(src) && isHex(src[s.off]) {
			s.off++
		}
		if s.off == d {
			s.err(pos, "invalid hexadecimal number "+strconv.Quote(src[pos:s.off]))
		}
	} else {
		for s.off < len(src) && isDigit(src[s.off]) {
			s.off++
		}
		if s.off+1 < len(src) && src[s.off] == '.' && isDigit(src[s.off+1]) {
			s.off++
			for s.off < len(src) && isDigit(src[s.off]) {
				s.off++
			}
		} else if s.off+1 < len(src) && src[s.off] == '.' && isLetter(rune(src[s.off+1])) {
			// 0.E is a malformed number to the service, not 0 and a
			// property E (a number has no properties).
			s.off++
			s.identRest()
			s.err(pos, "invalid number "+strconv.Quote(src[pos:s.off]))
			return pos, tNumber, src[pos:s.off]
		}
		if s.off < len(src) && (src[s.off] == 'e' || src[s.off] == 'E') {
			save := s.off
			s.off++
			if s.off < len(src) && (src[s.off] == '+' || src[s.off] == '-') {
				s.off++
			}
			if s.off < len(src) && isDigit(src[s.off]) {
				for s.off < len(src) && isDigit(src[s.off]) {
					s.off++
				}
			} else {
				s.off = save
			}
		}
	}
	// A number glued to letters (12abc) is one bad token, not two.
	if s.off < len(src) {
		if r, _ := utf8.DecodeRuneInString(src[s.off:]); isLetter(r) {
			s.identRest()
			s.err(pos, "invalid number "+strconv.Quote(src[pos:s.off]))
		}
	}
	return pos, tNumber, src[pos:s.off]
}

func isHex(c byte) bool {
	return isDigit(c) || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F')
}

// str scans a string literal opened by quote at pos (already consumed).
func (s *scanner) str(pos int, quote byte) (int, token, string) {
	src := s.src
	start := s.off
	// Fast path: no escapes.
	for s.off < len(src) {
		c := src[s.off]
		if c == quote {
			s.off++
			return pos, tString, src[start : s.off-1]
		}
		if c == '\\' {
			break
		}
		s.off++
	}
	var b strings.Builder
	b.WriteString(src[start:s.off])
	for s.off < len(src) {
		c := src[s.off]
		if c == quote {
			s.off++
			return pos, tString, b.String()
		}
		if c != '\\' {
			b.WriteByte(c)
			s.off++
			continue
		}
		if s.off+1 >= len(src) {
			s.off++
			break
		}
		e := src[s.off+1]
		escPos := s.off
		s.off += 2
		switch e {
		case '\'', '"', '\\', '/':
			b.WriteByte(e)
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			r, ok := hex4(src, s.off)
			if !ok {
				s.err(escPos, "invalid unicode escape in string")
				continue
			}
			s.off += 4
			if r >= 0xD800 && r < 0xDC00 && s.off+6 <= len(src) && src[s.off] == '\\' && src[s.off+1] == 'u' {
				if r2, ok2 := hex4(src, s.off+2); ok2 && r2 >= 0xDC00 && r2 < 0xE000 {
					r = (r-0xD800)<<10 | (r2 - 0xDC00) + 0x10000
					s.off += 6
				}
			}
			b.WriteRune(r)
		default:
			s.err(escPos, "invalid escape sequence '\\"+string(rune(e))+"' in string")
		}
	}
	s.err(pos, "string literal not terminated")
	return pos, tString, b.String()
}
