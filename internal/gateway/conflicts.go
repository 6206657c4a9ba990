package gateway

import (
	"net/http"

	"github.com/ebbdb/ebb/internal/engine"
)

// A container's conflicts: Ebb is one region, so there are never any
// (engine/conflicts.go). The feed and queries answer empty, a conflict by
// id is 404, as on a single-region account.

func (g *Gateway) listConflicts(w http.ResponseWriter, r *http.Request) error {
	rid, err := g.eng.Conflicts(r.PathValue("db"), r.PathValue("coll"))
	if err != nil {
		return err
	}
	return writeFeed(w, "Conflicts", rid, rowList(nil), 1, "")
}

func (g *Gateway) queryConflicts(w http.ResponseWriter, r *http.Request) error {
	if !isQuery(r) {
		return &engine.Error{Kind: engine.KindBadRequest, Message: "Conflicts cannot be created: the service records them when writes in several regions collide, which never happens on Ebb's one region. To query them, send x-ms-documentdb-isquery: true."}
	}
	body, err := readBody(w, r, bodyLimit)
	if err != nil {
		return err
	}
	res, err := g.eng.QueryConflicts(r.Context(), r.PathValue("db"), r.PathValue("coll"), body)
	if err != nil {
		return err
	}
	return writePage(w, "Conflicts", res)
}

func (g *Gateway) readConflict(w http.ResponseWriter, r *http.Request) error {
	return g.eng.ReadConflict(r.PathValue("db"), r.PathValue("coll"))
}
