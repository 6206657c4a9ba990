package query

import (
	"math"
	"strings"
)

// VectorDistance(a, b [, bruteForce [, options]]) is the similarity of
// two vectors by a distance function: the options' distanceFunction,
// else the container's vectorEmbeddingPolicy's for the path a reads
// (Env.Vectors), else cosine. Cosine is from -1 to 1 and dot product
// unbounded, the greater the more similar; Euclidean is a distance, the
// smaller the more similar. Every distance a row shows is computed
// exactly; bruteForce and searchListSizeMultiplier only decide how a
// search over a diskANN index finds its candidates (VectorOrder).
// Anything but two arrays of numbers of one length is undefined.
//
// In ORDER BY without ASC or DESC, the service orders by similarity,
// most similar first: the checker marks such a call (vectorRank), and it
// then evaluates to a key that sorts that way ascending (the similarity
// negated, the Euclidean distance as it is), items without a vector
// last.

// vectorCall is what prepare found in a VectorDistance call: the path of
// the item that its first argument reads ("/v"; "" for none).
type vectorCall struct{ path string }

func registerVectorFunctions() {
	// _VectorScore is VectorDistance's value where a hybrid search's
	// component query orders by it (hybrid.go).
	register("_VectorScore", 2, 4, func(c *evalCtx, x *CallExpr, a []Value) Value {
		d, ok := vectorDistance(vectorFunction(c, x, a), a[0], a[1])
		if !ok {
			return undefinedValue
		}
		return NumberValue(d)
	})
	register("VectorDistance", 2, 4, func(c *evalCtx, x *CallExpr, a []Value) Value {
		fn := vectorFunction(c, x, a)
		d, ok := vectorDistance(fn, a[0], a[1])
		switch {
		case !ok && x.vectorRank:
			return NumberValue(math.MaxFloat64) // ranked last
		case !ok:
			return undefinedValue
		}
		if x.vectorRank && fn != "euclidean" {
			d = -d
		}
		return NumberValue(d)
	})
}

// prepareSearchCalls records in each VectorDistance and full-text call
// of a checked statement the item path its first argument reads.
func prepareSearchCalls(s *SelectStmt) {
	if len(s.From) == 0 {
		return
	}
	isDoc, _ := docRef(s)
	walkDeep(s, func(e Expr) bool {
		if x, ok := e.(*CallExpr); ok {
			switch {
			case x.fn != nil && (x.fn.name == "VectorDistance" || x.fn.name == "_VectorScore") && len(x.Args) > 0:
				x.cache = vectorCall{path: itemPath(x.Args[0], isDoc)}
			case isFullTextCall(x) && len(x.Args) > 0:
				x.cache = searchCall{path: itemPath(x.Args[0], isDoc)}
			}
		}
		return true
	})
}

// vectorFunction is the distance function a VectorDistance call uses.
func vectorFunction(c *evalCtx, x *CallExpr, a []Value) string {
	if len(a) == 4 {
		if f, ok := a[3].Get("distanceFunction").AsString(); ok {
			return strings.ToLower(f)
		}
	}
	if vc, ok := x.cache.(vectorCall); ok && vc.path != "" && c.env.vectors != nil {
		if f, ok := c.env.vectors(vc.path); ok {
			return f
		}
	}
	return "cosine"
}

// vectorDistance computes fn over two vectors.
func vectorDistance(fn string, a, b Value) (float64, bool) {
	xs, ys := a.Elems(), b.Elems()
	if len(xs) != len(ys) || len(xs) == 0 {
		return 0, false
	}
	var s sums
	for i, x := range xs {
		y := ys[i]
		if x.kind != Number || y.kind != Number {
			return 0, false
		}
		s.add(x.num, y.num)
	}
	return s.distance(fn)
}

// sums are what every distance function is computed from.
type sums struct{ dot, na, nb, sq float64 }

func (s *sums) add(x, y float64) {
	s.dot += x * y
	s.na += x * x
	s.nb += y * y
	s.sq += (x - y) * (x - y)
}

func (s sums) distance(fn string) (float64, bool) {
	switch fn {
	case "dotproduct":
		return s.dot, true
	case "euclidean":
		return math.Sqrt(s.sq), true
	case "cosine":
		if s.na == 0 || s.nb == 0 {
			return 0, false
		}
		return s.dot / (math.Sqrt(s.na) * math.Sqrt(s.nb)), true
	}
	return 0, false
}

// itemPath is the path ("/a/b") an expression reads from the item (c.a.b,
// c["a"].b), or "" when it reads something else; isDoc says whether an
// expression is the item.
func itemPath(e Expr, isDoc func(Expr) bool) string {
	var names []string
	for !isDoc(e) {
		switch x := e.(type) {
		case *PropertyExpr:
			names = append(names, x.Name)
			e = x.X
		case *IndexExpr:
			lit, ok := x.Index.(*LiteralExpr)
			if !ok || lit.Val.kind != String {
				return ""
			}
			names = append(names, lit.Val.str)
			e = x.X
		default:
			return ""
		}
	}
	if len(names) == 0 {
		return ""
	}
	var b strings.Builder
	for i := len(names) - 1; i >= 0; i-- {
		b.WriteByte('/')
		b.WriteString(names[i])
	}
	return b.String()
}

// VectorOrder is what a vector search orders by: ORDER BY
// VectorDistance(c.<Path>, <Query>) most similar first, with the
// distance function of the call's options (Function; "" for the
// container's).
type VectorOrder struct {
	Path     string
	Query    []float64
	Function string
	// BruteForce is the call's third argument: true asks for an exact
	// scan even where the path has an approximate index.
	BruteForce bool
	// SearchListMultiplier is the options' searchListSizeMultiplier
	// (the service's default, 10, when absent): an approximate search
	// explores this many candidates per result it is asked for.
	SearchListMultiplier int
	// Want is how many results the query asks for (TOP, or OFFSET plus
	// LIMIT), 0 when it does not say.
	Want int
}

// defaultSearchListMultiplier is the service's searchListSizeMultiplier
// when a query gives none (Min 1, Default 10, Max 100:
// https://learn.microsoft.com/dotnet/api/microsoft.entityframeworkcore.vectordistanceoptions).
const defaultSearchListMultiplier = 10

// VectorOrder reports whether the plan is a vector search that a source
// of the item vectors at a path can order: its one ORDER BY key is a
// VectorDistance of an item path and a constant vector, ranked most
// similar first.
func (p *Plan) VectorOrder() (VectorOrder, bool) {
	s := p.q.stmt
	if p.mode != modeOrderBy || len(s.OrderBy) != 1 {
		return VectorOrder{}, false
	}
	call, ok := s.OrderBy[0].Expr.(*CallExpr)
	if !ok || !call.vectorRank {
		return VectorOrder{}, false
	}
	vc, _ := call.cache.(vectorCall)
	if vc.path == "" {
		return VectorOrder{}, false
	}
	c := &evalCtx{params: p.params}
	for _, a := range call.Args[1:] {
		if !isConstant(a) {
			return VectorOrder{}, false
		}
	}
	q := c.eval(call.Args[1])
	if q.kind != Array || len(q.Elems()) == 0 {
		return VectorOrder{}, false
	}
	vo := VectorOrder{Path: vc.path, Query: make([]float64, len(q.Elems()))}
	for i, x := range q.Elems() {
		if x.kind != Number {
			return VectorOrder{}, false
		}
		vo.Query[i] = x.num
	}
	vo.SearchListMultiplier = defaultSearchListMultiplier
	if len(call.Args) >= 3 {
		vo.BruteForce = c.eval(call.Args[2]).IsTrue()
	}
	if len(call.Args) == 4 {
		opts := c.eval(call.Args[3])
		if f, ok := opts.Get("distanceFunction").AsString(); ok {
			vo.Function = strings.ToLower(f)
		}
		if n, ok := countValue(opts.Get("searchListSizeMultiplier")); ok && n >= 1 {
			vo.SearchListMultiplier = min(n, 100)
		}
	}
	if n := c.countOf(s.Top); n >= 0 {
		vo.Want = n
	} else if off, lim := c.countOf(s.Offset), c.countOf(s.Limit); off >= 0 && lim >= 0 {
		vo.Want = off + lim
	}
	return vo, true
}

// isConstant reports whether e is the same for every row: literals,
// parameters and arrays or objects of them.
func isConstant(e Expr) bool {
	constant := true
	walkExpr(e, func(x Expr) bool {
		switch x.(type) {
		case *LiteralExpr, *ParamExpr, *ArrayExpr, *ObjectExpr, *UnaryExpr:
			return true
		}
		constant = false
		return false
	})
	return constant
}
