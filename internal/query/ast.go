package query

// The syntax tree. Every node records the byte offset where it starts;
// the checker fills the unexported fields (resolved slots, function
// bindings, aggregate indexes) that the evaluator uses.

// Expr is a scalar expression.
type Expr interface {
	Pos() int
	exprNode()
}

// LiteralExpr is a constant: undefined, null, true, false, a number or a
// string.
type LiteralExpr struct {
	At  int
	Val Value
}

// ParamExpr is a reference to a parameter, @name.
type ParamExpr struct {
	At   int
	Name string // includes '@'
	slot int    // index into the bound parameter values
}

// IdentExpr is a reference to an input alias (c in c.id).
type IdentExpr struct {
	At   int
	Name string
	// slot is the alias's variable slot, or rootSlot for the container
	// name in the first FROM source (it denotes the document).
	slot int
}

const rootSlot = -1

// PropertyExpr is X.Name.
type PropertyExpr struct {
	X    Expr
	Dot  int
	Name string
	// doc: X is the item (the root alias of the outermost query), so
	// Name may be a computed property (set by the checker, markDocRefs).
	doc bool
}

// IndexExpr is X[Index]; Index is a string (a property), a number (an array
// element) or anything evaluating to one.
type IndexExpr struct {
	X      Expr
	Lbrack int
	Index  Expr
	// doc: X is the item, as in PropertyExpr.
	doc bool
}

// UnaryExpr is Op X for -, +, ~ and NOT.
type UnaryExpr struct {
	At int
	Op token
	X  Expr
}

// BinaryExpr is X Op Y for arithmetic, comparison, logic, bitwise,
// concatenation (||) and coalesce (??).
type BinaryExpr struct {
	X     Expr
	OpPos int
	Op    token
	Y     Expr
}

// InExpr is X [NOT] IN (List...).
type InExpr struct {
	X    Expr
	At   int // position of IN (or NOT)
	Not  bool
	List []Expr
}

// BetweenExpr is X [NOT] BETWEEN Lo AND Hi.
type BetweenExpr struct {
	X      Expr
	At     int
	Not    bool
	Lo, Hi Expr
}

// LikeExpr is X [NOT] LIKE Pattern [ESCAPE Escape].
type LikeExpr struct {
	X       Expr
	At      int
	Not     bool
	Pattern Expr
	Escape  Expr // nil if absent
	// like caches the compiled pattern when Pattern and Escape are
	// constants.
	like *likePattern
}

// TernaryExpr is Cond ? Then : Else.
type TernaryExpr struct {
	Cond, Then, Else Expr
}

// CallExpr is a call of a built-in function (or udf.Name, which Ebb
// rejects).
type CallExpr struct {
	At   int
	Udf  bool
	Name string // as written
	Args []Expr
	fn   *builtin // resolved by the checker
	agg  int      // aggregate index within its query, or -1
	// cache holds what a function prepared from constant arguments (a
	// compiled regular expression).
	cache any
	// vectorRank: a VectorDistance call that is an ORDER BY key without
	// ASC or DESC (functions_vector.go).
	vectorRank bool
}

// ObjectExpr is an object constructor {a: x, "b": y}.
type ObjectExpr struct {
	Lbrace int
	Fields []ObjectField
}

// ObjectField is one member of an ObjectExpr.
type ObjectField struct {
	At    int
	Name  string
	Value Expr
}

// ArrayExpr is an array constructor [x, y].
type ArrayExpr struct {
	Lbrack int
	Elems  []Expr
}

// SubqueryKind says how a subquery's rows become a value.
type SubqueryKind uint8

const (
	ScalarSubquery SubqueryKind = iota // (SELECT ...): the first row, or undefined
	ExistsSubquery                     // EXISTS(SELECT ...): whether there is a row
	ArraySubquery                      // ARRAY(SELECT ...): all rows as an array
	FirstSubquery                      // FIRST(SELECT ...): the first row, or undefined
	LastSubquery                       // LAST(SELECT ...): the last row, or undefined
)

// SubqueryExpr is a subquery used as a value.
type SubqueryExpr struct {
	At    int
	Kind  SubqueryKind
	Query *SelectStmt
}

// groupRefExpr replaces, in the SELECT of a GROUP BY query, an expression
// equal to the Index-th grouping expression. X is the original, kept for
// printing.
type groupRefExpr struct {
	X     Expr
	Index int
}

func (e *LiteralExpr) Pos() int  { return e.At }
func (e *ParamExpr) Pos() int    { return e.At }
func (e *IdentExpr) Pos() int    { return e.At }
func (e *PropertyExpr) Pos() int { return e.X.Pos() }
func (e *IndexExpr) Pos() int    { return e.X.Pos() }
func (e *UnaryExpr) Pos() int    { return e.At }
func (e *BinaryExpr) Pos() int   { return e.X.Pos() }
func (e *InExpr) Pos() int       { return e.X.Pos() }
func (e *BetweenExpr) Pos() int  { return e.X.Pos() }
func (e *LikeExpr) Pos() int     { return e.X.Pos() }
func (e *TernaryExpr) Pos() int  { return e.Cond.Pos() }
func (e *CallExpr) Pos() int     { return e.At }
func (e *ObjectExpr) Pos() int   { return e.Lbrace }
func (e *ArrayExpr) Pos() int    { return e.Lbrack }
func (e *SubqueryExpr) Pos() int { return e.At }
func (e *groupRefExpr) Pos() int { return e.X.Pos() }

func (*LiteralExpr) exprNode()  {}
func (*ParamExpr) exprNode()    {}
func (*IdentExpr) exprNode()    {}
func (*PropertyExpr) exprNode() {}
func (*IndexExpr) exprNode()    {}
func (*UnaryExpr) exprNode()    {}
func (*BinaryExpr) exprNode()   {}
func (*InExpr) exprNode()       {}
func (*BetweenExpr) exprNode()  {}
func (*LikeExpr) exprNode()     {}
func (*TernaryExpr) exprNode()  {}
func (*CallExpr) exprNode()     {}
func (*ObjectExpr) exprNode()   {}
func (*ArrayExpr) exprNode()    {}
func (*SubqueryExpr) exprNode() {}
func (*groupRefExpr) exprNode() {}

// SelectStmt is one SELECT, the whole query or a subquery.
type SelectStmt struct {
	At       int
	Distinct bool
	Top      Expr // *LiteralExpr or *ParamExpr; nil if absent
	Star     bool // SELECT *
	Value    bool // SELECT VALUE; then Items has exactly one element
	Items    []SelectItem
	From     []*FromSource // FROM then each JOIN; nil without FROM
	Where    Expr
	GroupBy  []Expr
	OrderBy  []OrderItem
	Offset   Expr // *LiteralExpr or *ParamExpr; nil if absent
	Limit    Expr

	// Filled by the checker.
	aggs     []*CallExpr // aggregate calls in Items, indexed by CallExpr.agg
	baseSlot int         // first slot of this statement's aliases
	rawStar  bool        // SELECT * over the document itself: rows are the raw bytes
}

// SelectItem is one projection; Name is the output property name (the
// alias, the inferred property name, or $1, $2, ...).
type SelectItem struct {
	Expr     Expr
	Alias    string // as written after AS, "" if none
	AliasPos int
	Name     string
}

// FromSource is the FROM source or one JOIN source:
//
//	Expr [[AS] Alias]      the value of Expr (rows: one, if defined)
//	Alias IN Expr          each element of the array Expr
//	(SELECT ...) [[AS] Alias]  each row of the subquery
type FromSource struct {
	At       int
	Alias    string
	AliasPos int
	In       bool
	Expr     Expr // for a subquery source, a *SubqueryExpr
	slot     int
}

// OrderItem is one ORDER BY key.
type OrderItem struct {
	Expr Expr
	Desc bool
	// Explicit: the query says ASC or DESC.
	Explicit bool
	// Rank: ORDER BY RANK <score>, highest score first.
	Rank bool
}

// isAggregate reports whether a statement aggregates its rows (aggregates
// in the projection or GROUP BY).
func (s *SelectStmt) isAggregate() bool { return len(s.aggs) > 0 || len(s.GroupBy) > 0 }
