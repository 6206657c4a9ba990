package query

import (
	"sort"
	"strconv"
)

// ErrorKind says whether an Error comes from the grammar or from checking
// the meaning of a well-formed query.
type ErrorKind uint8

const (
	SyntaxError   ErrorKind = iota // the text does not follow the grammar
	SemanticError                  // well-formed, but meaningless (unknown function, bad alias, ...)
	LimitError                     // beyond one of the service's limits on a query (limits.go)
)

// Error is a problem in a query's text, with its position.
type Error struct {
	Kind ErrorKind
	Pos  int // byte offset in the query text, from 0
	Line int // from 1
	Col  int // from 1, in bytes
	Msg  string
	// List holds every error found, sorted by position, the first being
	// this one. Parsing stops after MaxErrors.
	List []*Error
}

// MaxErrors is the number of errors after which parsing gives up.
const MaxErrors = 10

func (e *Error) Error() string {
	s := e.describe()
	if n := len(e.List) - 1; n > 0 {
		s += " (and " + strconv.Itoa(n) + " more error"
		if n > 1 {
			s += "s"
		}
		s += ")"
	}
	return s
}

func (e *Error) describe() string {
	kind := "Syntax error"
	switch e.Kind {
	case SemanticError:
		kind = "Semantic error"
	case LimitError:
		// The service words these without a position; so does Ebb, so
		// that clients matching its messages find them.
		return e.Msg
	}
	return kind + " at line " + strconv.Itoa(e.Line) + ", column " + strconv.Itoa(e.Col) + ": " + e.Msg
}

// errorList collects errors while parsing and checking.
type errorList struct {
	errs []*Error
}

func (l *errorList) add(kind ErrorKind, src string, pos int, msg string) {
	line, col := lineCol(src, pos)
	l.errs = append(l.errs, &Error{Kind: kind, Pos: pos, Line: line, Col: col, Msg: msg})
}

// err returns the first error (with List filled) or nil.
func (l *errorList) err() error {
	if len(l.errs) == 0 {
		return nil
	}
	sort.SliceStable(l.errs, func(i, j int) bool { return l.errs[i].Pos < l.errs[j].Pos })
	first := *l.errs[0]
	list := make([]*Error, len(l.errs))
	copy(list, l.errs)
	list[0] = &first
	first.List = list
	return &first
}

// lineCol converts a byte offset into a 1-based line and column.
func lineCol(src string, pos int) (line, col int) {
	if pos > len(src) {
		pos = len(src)
	}
	line, col = 1, 1
	for i := 0; i < pos; i++ {
		if src[i] == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return line, col
}
