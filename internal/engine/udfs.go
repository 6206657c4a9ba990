package engine

import (
	"context"
	"errors"

	"github.com/ebbdb/ebb/internal/engine/dberr"
	"github.com/ebbdb/ebb/internal/engine/document"
	"github.com/ebbdb/ebb/internal/engine/keyspace"
	"github.com/ebbdb/ebb/internal/query"
	"github.com/ebbdb/ebb/internal/script"
	"github.com/ebbdb/ebb/internal/storage"
)

// A query that calls udf.<name>(…) runs the container's user-defined
// function of that id in JavaScript (package script), once per row it
// evaluates the call for: each page loads the functions the query names
// from the store (so a replaced function takes effect at once, on every
// node) and runs them in one runtime; the runner compiles each version
// once. The planner never serves a call from an index: an index source
// narrows only the conditions it understands, and the function runs on
// each item those leave.

// pageItemsWithUDFs is pageItems with the user-defined functions the
// plan calls, loaded from src's store, and the full-text statistics its
// FullTextScore calls rank by.
func (e *Engine) pageItemsWithUDFs(ctx context.Context, plan *query.Plan, src *docSource, req QueryRequest) (QueryResult, error) {
	if textSourceFor(plan, src) == nil { // a full-text source counts them itself
		if err := e.countText(ctx, plan, src); err != nil {
			return QueryResult{}, err
		}
	}
	names := plan.UDFs()
	if len(names) == 0 {
		return e.pageItems(ctx, plan, src, req)
	}
	defs := make([]script.FunctionDef, 0, len(names))
	for _, name := range names {
		raw, err := src.store.Get(ctx, keyspace.ScriptKey(src.c.rid, byte(UserDefinedFunction), name))
		if errors.Is(err, storage.ErrNotFound) {
			return QueryResult{}, dberr.BadRequest("The query calls udf.%s, but the container has no user-defined function '%s'.", name, name)
		}
		if err != nil {
			return QueryResult{}, err
		}
		ms, err := document.ObjectBody(raw)
		if err != nil {
			return QueryResult{}, err
		}
		defs = append(defs, script.FunctionDef{
			ID:      name,
			Source:  document.Unquote(document.Lookup(ms, "body")),
			Version: document.Unquote(document.Lookup(ms, "_etag")),
		})
	}
	fs := e.scripts.Functions(ctx.Done(), defs)
	defer fs.Close()
	src.udfs = udfCaller{fs}
	return e.pageItems(ctx, plan, src, req)
}

// udfCaller is a script.Functions as the query executor calls it: its
// errors are the engine's.
type udfCaller struct{ fs *script.Functions }

func (u udfCaller) Call(name string, args []query.Value) (query.Value, error) {
	v, err := u.fs.Call(name, args)
	return v, scriptError(err)
}

// queryEnv is the query environment of a page over ds: its instant, its
// user-defined functions, its container's vector distance functions.
func (e *Engine) queryEnv(ds *docSource) query.Env {
	env := e.env(ds.at)
	env.UDFs = ds.udfs
	env.Vectors = ds.c.vectorFunctions()
	if text := ds.c.text; text != nil {
		env.FullText = text.Covers
	}
	// Read when a score is computed: a full-text source sets them as it
	// starts reading (textindex.go).
	env.TextStats = func(path string) *query.TextStats { return ds.textStats[path] }
	return env
}

// vectorFunctions returns the distance function of c's vector embedding
// at a path; nil when c has no vectorEmbeddingPolicy.
func (c *container) vectorFunctions() func(path string) (string, bool) {
	vs := c.vectors
	if vs == nil {
		return nil
	}
	return func(path string) (string, bool) {
		emb, ok := vs.Lookup(path)
		return emb.DistanceFunction, ok
	}
}

// countText counts the full-text statistics plan's FullTextScore calls
// rank by: over every item of the container visible at src's instant,
// whatever partition the query reads, so that a score is the same in a
// partition's query as across partitions, and an expired item never
// counts.
func (e *Engine) countText(ctx context.Context, plan *query.Plan, src *docSource) error {
	qs := plan.FullTextQueries()
	if len(qs) == 0 {
		return nil
	}
	whole := *src
	whole.prefix = keyspace.CollPrefix(keyspace.Doc, src.c.rid)
	stats, err := query.FullTextStats(meteredSource{&whole, src.meter("counting the full-text statistics over the container's items")}, qs)
	if err != nil {
		return err
	}
	src.textStats = stats
	return nil
}
