package gateway

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/ebbdb/ebb/internal/engine"
)

// Stored procedures, triggers and user-defined functions: stored,
// listed, queried, replaced and deleted as the service does
// (engine/scripts.go). Stored procedures run (engine/sprocs.go);
// triggers and user-defined functions do not yet.

// scriptRoutes are the routes of one kind of script under a container.
func (g *Gateway) scriptRoutes(family string, kind engine.ScriptKind) []route {
	base := "/dbs/{db}/colls/{coll}/" + family
	return []route{
		{"GET " + base, g.listScripts(kind), accessSigned},
		{"POST " + base, g.createOrQueryScripts(kind), accessSigned},
		{"GET " + base + "/{id}", g.readScript(kind), accessSigned},
		{"PUT " + base + "/{id}", g.replaceScript(kind), accessSigned},
		{"DELETE " + base + "/{id}", g.deleteScript(kind), accessSigned},
	}
}

func (g *Gateway) listScripts(kind engine.ScriptKind) handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		rows, rid, err := g.eng.Scripts(r.Context(), r.PathValue("db"), r.PathValue("coll"), kind)
		if err != nil {
			return err
		}
		return writeFeed(w, kind.Feed(), rid, rowList(rows), 1, "")
	}
}

func (g *Gateway) createOrQueryScripts(kind engine.ScriptKind) handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		body, err := readBody(w, r, bodyLimit)
		if err != nil {
			return err
		}
		if isQuery(r) {
			res, err := g.eng.QueryScripts(r.Context(), r.PathValue("db"), r.PathValue("coll"), kind, body)
			if err != nil {
				return err
			}
			return writePage(w, kind.Feed(), res)
		}
		res, err := g.eng.CreateScript(r.Context(), r.PathValue("db"), r.PathValue("coll"), kind, body)
		if err != nil {
			return err
		}
		return writeResource(w, http.StatusCreated, res)
	}
}

func (g *Gateway) readScript(kind engine.ScriptKind) handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		res, err := g.eng.ReadScript(r.Context(), r.PathValue("db"), r.PathValue("coll"), kind, r.PathValue("id"))
		if err != nil {
			return err
		}
		return writeResource(w, http.StatusOK, res)
	}
}

func (g *Gateway) replaceScript(kind engine.ScriptKind) handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		body, err := readBody(w, r, bodyLimit)
		if err != nil {
			return err
		}
		res, err := g.eng.ReplaceScript(r.Context(), r.PathValue("db"), r.PathValue("coll"), kind, r.PathValue("id"), body, header(r.Header, "If-Match"))
		if err != nil {
			return err
		}
		return writeResource(w, http.StatusOK, res)
	}
}

func (g *Gateway) deleteScript(kind engine.ScriptKind) handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		res, err := g.eng.DeleteScript(r.Context(), r.PathValue("db"), r.PathValue("coll"), kind, r.PathValue("id"), header(r.Header, "If-Match"))
		if err != nil {
			return err
		}
		return writeResource(w, http.StatusNoContent, res)
	}
}

// executeStoredProcedure answers POST .../sprocs/{id}: it runs the
// procedure in the logical partition the partition key header names.
// With x-ms-documentdb-script-enable-logging, what the procedure wrote
// with console.log comes back URL-encoded in
// x-ms-documentdb-script-log-results, as the service sends it.
func (g *Gateway) executeStoredProcedure(w http.ResponseWriter, r *http.Request) error {
	body, err := readBody(w, r, bodyLimit)
	if err != nil {
		return err
	}
	res, err := g.eng.ExecuteStoredProcedure(r.Context(), engine.ProcedureCall{Ref: itemRef(r), Args: body})
	if err != nil {
		return err
	}
	if strings.EqualFold(header(r.Header, "X-Ms-Documentdb-Script-Enable-Logging"), "true") && res.Log != "" {
		w.Header()["X-Ms-Documentdb-Script-Log-Results"] = []string{url.PathEscape(res.Log)}
	}
	return writeResource(w, http.StatusOK, engine.Resource{Body: res.Body, Charge: res.Charge, Session: res.Session})
}
