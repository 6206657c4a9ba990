package engine

import "context"

// Ebb is one region with one writer per container, so no write ever
// conflicts with another: a container's conflicts feed is always empty,
// as a single-region account's is.

// Conflicts returns the _rid of the container whose conflicts feed is
// read (none are ever stored), or the container's 404.
func (e *Engine) Conflicts(dbID, collID string) (string, error) {
	c, err := e.container(dbID, collID)
	if err != nil {
		return "", err
	}
	return c.ridStr, nil
}

// QueryConflicts runs a query over a container's conflicts, which are
// none: the query is still parsed and checked, so a bad one is refused
// as on any other feed.
func (e *Engine) QueryConflicts(ctx context.Context, dbID, collID string, body []byte) (QueryResult, error) {
	rid, err := e.Conflicts(dbID, collID)
	if err != nil {
		return QueryResult{}, err
	}
	res, err := e.queryCatalog(ctx, nil, body)
	res.RID = rid
	return res, err
}

// ReadConflict answers a read or delete of one conflict: the container's
// 404 if it does not exist, else the conflict's, since there are none.
func (e *Engine) ReadConflict(dbID, collID string) error {
	if _, err := e.Conflicts(dbID, collID); err != nil {
		return err
	}
	return ErrNotFound
}
