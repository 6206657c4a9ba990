package query

// Filter is a patch condition: "FROM c WHERE <expr>". It is immutable and
// safe for concurrent use.
type Filter struct {
	q *Query
}

// ParseFilter parses a Cosmos patch condition such as
// "from c where c.x = 1" (keywords in any case; WHERE may be omitted, which
// matches every document). Errors are *Error values with positions.
func ParseFilter(text string) (*Filter, error) {
	if err := checkLength(text); err != nil {
		return nil, err
	}
	stmt, err := parseFilterClause(text)
	if err != nil {
		return nil, err
	}
	q, err := check(text, stmt)
	if err != nil {
		return nil, err
	}
	if len(q.udfs) > 0 {
		var errs errorList
		errs.add(SemanticError, text, q.udfsAt[0], "a patch condition cannot call a user-defined function (udf."+q.udfs[0]+")")
		return nil, errs.err()
	}
	return &Filter{q: q}, nil
}

// Match reports whether the document satisfies the condition: the WHERE
// expression evaluates to true for at least one row (a condition over
// FROM x IN c.arr matches if some element does). Parameters are not
// supported in conditions; any @name evaluates as undefined. Only the
// members the condition reads are decoded (doc is a stored, valid
// document); the error is non-nil if those are not valid JSON.
func (f *Filter) Match(doc []byte, env Env) (bool, error) {
	var v Value
	var err error
	if f.q.wholeDoc {
		v, err = ParseJSON(doc)
	} else {
		v, err = parseDocFields(doc, f.q.fields)
	}
	if err != nil {
		return false, err
	}
	return f.MatchValue(v, env), nil
}

// MatchValue is Match on an already parsed document.
func (f *Filter) MatchValue(doc Value, env Env) bool {
	c := newEvalCtx(f.q.nslots, make([]Value, len(f.q.params)), env)
	c.doc = doc
	matched := false
	c.forEachRow(f.q.stmt, 0, func() bool { matched = true; return false })
	return matched
}
