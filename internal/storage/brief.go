package storage

import "context"

// Brief returns ctx marked for a brief transaction: one whose fn makes a
// few reads and writes, with no waiting and no long computation between
// them (a point write). A backend may run the brief transactions of
// different lock domains together in one transaction of its own, which
// each of them then waits for (the PostgreSQL store's groups). A
// transaction that can run long (a stored procedure, a bulk request, a
// purge batch) is not marked, so that it holds no other up.
func Brief(ctx context.Context) context.Context {
	return context.WithValue(ctx, briefKey{}, true)
}

// IsBrief reports whether ctx is marked by Brief.
func IsBrief(ctx context.Context) bool {
	b, _ := ctx.Value(briefKey{}).(bool)
	return b
}

type briefKey struct{}
