package query

// noDocSlot is docRef's slot when the first source is not the item.
const noDocSlot = -2

// docRef returns a test for an expression that is the outermost
// statement's item (the root, or the alias of FROM c), and that alias's
// slot (noDocSlot when the first source is not the container itself).
// REQUIRES: s has a FROM.
func docRef(s *SelectStmt) (isDoc func(Expr) bool, slot int) {
	slot = noDocSlot
	if src0 := s.From[0]; !src0.In {
		if id, ok := src0.Expr.(*IdentExpr); ok && id.slot == rootSlot {
			slot = src0.slot
		}
	}
	return func(e Expr) bool {
		id, ok := e.(*IdentExpr)
		return ok && (id.slot == rootSlot || id.slot == slot)
	}, slot
}

// docFields works out which top-level members of the document the
// outermost statement reads. It returns whole = true if the query uses the
// document as a value (SELECT c, DocumentId(c), c[@p], a non-raw SELECT *),
// else the member names; the executor then builds only those members.
func docFields(s *SelectStmt) (fields []string, whole bool) {
	if len(s.From) == 0 {
		return nil, false
	}
	isDoc, docSlot := docRef(s)
	if docSlot != noDocSlot && s.Star && !s.rawStar {
		return nil, true
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
		if outer && docSlot != noDocSlot {
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
	isDoc, _ := docRef(s)
	walkDeep(s, func(e Expr) bool {
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
		}
		return true
	})
	return names, dynamic
}
