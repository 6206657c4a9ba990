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
// smaller the more similar. Ebb computes every distance exactly, so
// bruteForce changes nothing (and neither do the options that tune the
// service's approximate indexes). Anything but two arrays of numbers of
// one length is undefined.
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
			case x.fn != nil && x.fn.name == "VectorDistance" && len(x.Args) > 0:
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
	var dot, na, nb, sq float64
	for i, x := range xs {
		y := ys[i]
		if x.kind != Number || y.kind != Number {
			return 0, false
		}
		dot += x.num * y.num
		na += x.num * x.num
		nb += y.num * y.num
		sq += (x.num - y.num) * (x.num - y.num)
	}
	switch fn {
	case "dotproduct":
		return dot, true
	case "euclidean":
		return math.Sqrt(sq), true
	case "cosine":
		if na == 0 || nb == 0 {
			return 0, false
		}
		return dot / (math.Sqrt(na) * math.Sqrt(nb)), true
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
