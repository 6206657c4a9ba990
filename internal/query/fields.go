package query

// docFields works out which top-level members of the document the
// outermost statement reads. It returns whole = true if the query uses the
// document as a value (SELECT c, DocumentId(c), c[@p], a non-raw SELECT *),
// else the member names; the executor then builds only those members.
func docFields(s *SelectStmt) (fields []string, whole bool) {
	if len(s.From) == 0 {
		return nil, false
	}
	docSlot := -2
	src0 := s.From[0]
	if id, ok := src0.Expr.(*IdentExpr); ok && id.slot == rootSlot && !src0.In {
		docSlot = src0.slot
		if s.Star && !s.rawStar {
			return nil, true
		}
	}
	isDoc := func(e Expr) bool {
		id, ok := e.(*IdentExpr)
		return ok && (id.slot == rootSlot || id.slot == docSlot)
	}
	add := func(name string) {
		for _, f := range fields {
			if f == name {
				return
			}
		}
		fields = append(fields, name)
	}
	var visitStmt func(st *SelectStmt, outer bool)
	var visit func(e Expr) bool
	visit = func(e Expr) bool {
		if whole {
			return false
		}
		switch x := e.(type) {
		case *PropertyExpr:
			if isDoc(x.X) {
				add(x.Name)
				return false
			}
		case *IndexExpr:
			if isDoc(x.X) {
				if lit, ok := x.Index.(*LiteralExpr); ok && lit.Val.kind == String {
					add(lit.Val.str)
					return false
				}
				whole = true
				return false
			}
		case *IdentExpr:
			if isDoc(x) {
				whole = true
			}
			return false
		case *SubqueryExpr:
			visitStmt(x.Query, false)
			return false
		}
		return true
	}
	visitStmt = func(st *SelectStmt, outer bool) {
		from := 0
		if outer && docSlot != -2 {
			from = 1 // not FROM c itself
		}
		walkStmtFrom(st, from, visit)
	}
	visitStmt(s, true)
	if whole {
		return nil, true
	}
	if fields == nil {
		fields = []string{}
	}
	return fields, false
}

// markDocRefs flags the member accesses of the outermost statement's
// item (c.a, c["a"], c[expr], in its subqueries too: the accesses
// docFields counts), which are the ones that may name a computed
// property, and returns the names they read and whether one names its
// member by a value known only at run time (c[@p]).
func markDocRefs(s *SelectStmt) (names []string, dynamic bool) {
	if len(s.From) == 0 {
		return nil, false
	}
	docSlot := -2
	src0 := s.From[0]
	if id, ok := src0.Expr.(*IdentExpr); ok && id.slot == rootSlot && !src0.In {
		docSlot = src0.slot
	}
	isDoc := func(e Expr) bool {
		id, ok := e.(*IdentExpr)
		return ok && (id.slot == rootSlot || id.slot == docSlot)
	}
	var visitStmt func(st *SelectStmt)
	visit := func(e Expr) bool {
		switch x := e.(type) {
		case *PropertyExpr:
			if isDoc(x.X) {
				x.doc = true
				if !containsString(names, x.Name) {
					names = append(names, x.Name)
				}
			}
		case *IndexExpr:
			if isDoc(x.X) {
				x.doc = true
				if lit, ok := x.Index.(*LiteralExpr); ok && lit.Val.kind == String {
					if !containsString(names, lit.Val.str) {
						names = append(names, lit.Val.str)
					}
				} else {
					dynamic = true
				}
			}
		case *SubqueryExpr:
			visitStmt(x.Query)
			return false
		}
		return true
	}
	visitStmt = func(st *SelectStmt) { walkStmt(st, visit) }
	visitStmt(s)
	return names, dynamic
}
