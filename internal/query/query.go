package query

import (
	"encoding/binary"
	"hash/fnv"
	"slices"
	"strconv"
)

// Query is a parsed and checked query. It is immutable and safe to share;
// Bind it to parameter values to run it.
type Query struct {
	text string
	// tokenText is what a continuation token is bound to (Plan.hash):
	// the text, but for an ORDER BY query the statement without its
	// WHERE (see orderByTokenText).
	tokenText string
	stmt      *SelectStmt
	// dcount, for a count of distinct values, is the outer query, and
	// stmt its subquery (dcount.go).
	dcount *dcount
	params []string // parameter names, by slot
	nslots int      // variable slots needed
	// fields are the top-level document members the query reads, unless
	// wholeDoc (see docFields).
	fields   []string
	wholeDoc bool
	// docNames are the members of the item the query names (c.a,
	// c["b"]), docDynamic whether it also names one by a value known only
	// at run time (c[@p]): what decides whether it reads a computed
	// property (markDocRefs).
	docNames   []string
	docDynamic bool
	// udfs are the user-defined functions the query calls, and where
	// each is first called.
	udfs   []string
	udfsAt []int
}

// Parse parses and checks a query. Any problem is returned as a *Error with
// its position (Error.List has every problem found, up to MaxErrors).
func Parse(text string) (*Query, error) {
	if err := checkLength(text); err != nil {
		return nil, err
	}
	stmt, err := parse(text)
	if err != nil {
		return nil, err
	}
	return check(text, stmt)
}

func check(text string, stmt *SelectStmt) (*Query, error) {
	c := &checker{src: text, params: map[string]int{}}
	inner, dc, isCount := distinctCountShape(stmt)
	if isCount {
		// The query runs its subquery and counts the rows (dcount.go).
		c.checkDistinctCount(inner)
		stmt = inner
	} else {
		c.checkStmt(stmt, 0, true)
	}
	c.checkSearchFunctions(stmt)
	if err := c.errs.err(); err != nil {
		return nil, err
	}
	q := &Query{text: text, tokenText: text, stmt: stmt, dcount: dc, params: c.names, nslots: c.maxSlots, udfs: c.udfs, udfsAt: c.udfsAt}
	if planMode(stmt) == modeOrderBy {
		q.tokenText = orderByTokenText(stmt)
	}
	q.fields, q.wholeDoc = docFields(stmt)
	q.docNames, q.docDynamic = markDocRefs(stmt)
	prepareSearchCalls(stmt)
	return q, nil
}

// orderByTokenText is what an ORDER BY query's continuation tokens are
// bound to: the statement without its WHERE. An SDK resumes a
// cross-partition ORDER BY query by sending each range the plan's
// rewritten query with a filter on the last row's sort values in place
// of its {documentdb-formattableorderbyquery-filter} placeholder, and the
// range it stopped in gets that range's continuation token with it
// (@azure/cosmos OrderByQueryRangeStrategy, the .NET SDK's ORDER BY
// pipeline stage likewise): the service takes the token with the
// changed filter. An ORDER BY token holds the position of the last row
// returned in the sort order, and the next page returns the rows after
// it that pass the WHERE it is given, so a token stays well defined
// under any WHERE.
func orderByTokenText(s *SelectStmt) string {
	each := *s
	each.Where = nil
	return formatStmt(&each)
}

// Text returns the query text as given to Parse.
func (q *Query) Text() string { return q.text }

// UDFs returns the names of the user-defined functions the query calls
// (udf.<name>), each once: what Env.UDFs must provide.
func (q *Query) UDFs() []string { return slices.Clone(q.udfs) }

// Params returns the names of the parameters the query refers to.
func (q *Query) Params() []string { return append([]string(nil), q.params...) }

// String returns the query in canonical form.
func (q *Query) String() string {
	if q.dcount != nil {
		return formatStmt(q.dcount.outer)
	}
	return formatStmt(q.stmt)
}

// Plan is a query bound to parameter values, ready to run. It is
// immutable; Page may be called concurrently.
type Plan struct {
	q      *Query
	params []Value // by slot; undefined for a parameter not supplied
	hash   uint64  // of the query text and the parameter values
	skip   int     // OFFSET, 0 if absent
	max    int     // min(TOP, LIMIT), -1 if neither
	mode   execMode
	// cps are the computed properties of the container the plan runs
	// over (BindComputed); readsCps says the query reads one, so the
	// evaluator resolves them. fields and wholeDoc are the query's reads
	// of the item with those of the computed properties it reads in
	// place of their names (see docFields).
	cps      *Computed
	readsCps bool
	fields   []string
	wholeDoc bool
	// vectors are the container's distance functions by path
	// (SetVectors), which the query plan's ORDER BY directions need.
	vectors func(path string) (string, bool)
}

// SetVectors gives the plan its container's vector distance functions by
// path, as Env.Vectors gives them to a page.
func (p *Plan) SetVectors(f func(path string) (string, bool)) { p.vectors = f }

// Bind binds parameter values. A parameter the query refers to but params
// lacks evaluates as undefined (as in Cosmos DB); extra parameters are
// ignored. TOP, OFFSET and LIMIT given by a parameter must be non-negative
// integers, else Bind returns a *Error pointing at the parameter.
func (q *Query) Bind(params []Param) (*Plan, error) {
	return q.BindComputed(params, nil)
}

// BindComputed is Bind for a query over the items of a container with
// computed properties cs (nil: none): c.<name> and c["<name>"] of a
// computed property then evaluate its expression over the item, as if
// the item had that member, wherever the query reads them; SELECT * and
// the item as a value (SELECT c) do not include them.
func (q *Query) BindComputed(params []Param, cs *Computed) (*Plan, error) {
	p := &Plan{q: q, params: make([]Value, len(q.params)), cps: cs, fields: q.fields, wholeDoc: q.wholeDoc}
	slots := make(map[string]int, len(q.params))
	for slot, name := range q.params {
		slots[name] = slot
	}
	// The last value given for a name wins.
	for _, pr := range params {
		if slot, ok := slots[pr.Name]; ok {
			p.params[slot] = pr.Value
		}
	}
	// Validate TOP/OFFSET/LIMIT parameters in every statement.
	var errs errorList
	var visit func(s *SelectStmt)
	visit = func(s *SelectStmt) {
		for _, e := range []Expr{s.Top, s.Offset, s.Limit} {
			if pe, ok := e.(*ParamExpr); ok {
				if _, ok := countValue(p.params[pe.slot]); !ok {
					errs.add(SemanticError, q.text, pe.At, "the value of "+pe.Name+" must be a non-negative integer, found "+describeValue(p.params[pe.slot]))
				}
			}
		}
		walkStmt(s, func(x Expr) bool {
			if sq, ok := x.(*SubqueryExpr); ok {
				visit(sq.Query)
				return false
			}
			return true
		})
		for _, src := range s.From {
			if sq, ok := src.Expr.(*SubqueryExpr); ok {
				visit(sq.Query)
			}
		}
	}
	visit(q.stmt)
	if err := errs.err(); err != nil {
		return nil, err
	}
	c := &evalCtx{params: p.params}
	p.skip, p.max = c.limits(q.stmt)

	h := fnv.New64a()
	h.Write([]byte(q.tokenText))
	var buf []byte
	for slot, name := range q.params {
		buf = binary.AppendUvarint(buf[:0], uint64(len(name)))
		buf = append(buf, name...)
		buf = appendKey(buf, p.params[slot])
		h.Write(buf)
	}
	p.hash = h.Sum64()
	p.mode = planMode(q.stmt)
	p.bindComputed()
	return p, nil
}

// bindComputed works out whether the plan reads a computed property of
// p.cps and, if so, which members of the item the evaluator must decode:
// a computed property's name is not read from the item, its query's
// members are. A query that reads none costs nothing more.
func (p *Plan) bindComputed() {
	q, cs := p.q, p.cps
	if cs.Len() == 0 {
		return
	}
	var used []string
	for _, n := range q.docNames {
		if cs.Has(n) {
			used = append(used, n)
		}
	}
	if q.docDynamic {
		// c[@p] may name any of them; the query decodes the whole item
		// already (docFields), which covers every computed property.
		p.readsCps = true
		return
	}
	if len(used) == 0 {
		return
	}
	p.readsCps = true
	if p.wholeDoc {
		return
	}
	reads, whole := cs.reads(used)
	if whole {
		p.fields, p.wholeDoc = nil, true
		return
	}
	fields := make([]string, 0, len(q.fields)+len(reads))
	for _, f := range q.fields {
		if !cs.Has(f) {
			fields = append(fields, f)
		}
	}
	for _, f := range reads {
		if !containsString(fields, f) {
			fields = append(fields, f)
		}
	}
	p.fields = fields
}

// Computed returns the computed properties the plan was bound with (nil:
// none): an index serves the plan only if it indexes the same ones.
func (p *Plan) Computed() *Computed { return p.cps }

// UDFs returns the names of the user-defined functions the plan calls.
func (p *Plan) UDFs() []string { return p.q.UDFs() }

func describeValue(v Value) string {
	if v.kind == Undefined {
		return "no value"
	}
	s := v.JSON()
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	return s
}

// Query returns the query the plan was bound from.
func (p *Plan) Query() *Query { return p.q }

// execMode is how the executor runs a plan.
type execMode uint8

const (
	modeStream       execMode = iota // rows in source order, resumable by storage key
	modeOrderBy                      // top-k by sort keys, resumable by sort position
	modeMaterialized                 // whole result computed, paged by offset
	modeNoFrom                       // no FROM: rows computed without a source
	modeFused                        // ORDER BY RANK RRF(…): whole result ranked, paged by offset
)

func (m execMode) String() string {
	switch m {
	case modeStream:
		return "stream"
	case modeOrderBy:
		return "orderby"
	case modeMaterialized:
		return "materialized"
	case modeNoFrom:
		return "nofrom"
	case modeFused:
		return "fused"
	}
	return "mode(" + strconv.Itoa(int(m)) + ")"
}

func planMode(s *SelectStmt) execMode {
	switch {
	case len(s.From) == 0:
		return modeNoFrom
	case s.isAggregate() || s.Distinct:
		return modeMaterialized
	case len(s.OrderBy) > 0 && s.OrderBy[0].Rank && isRRF(s.OrderBy[0].Expr):
		return modeFused
	case len(s.OrderBy) > 0:
		return modeOrderBy
	}
	return modeStream
}
