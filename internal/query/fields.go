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
