package gateway

import (
	"net/http"

	"github.com/ebbdb/ebb/internal/engine"
)

func resourceOf(body []byte, charge float64) engine.Resource {
	return engine.Resource{Body: body, Charge: charge}
}

func (g *Gateway) listDatabases(w http.ResponseWriter, r *http.Request) error {
	rows, charge := g.eng.Databases(r.Context())
	return writeFeed(w, "Databases", "", rowList(rows), charge, "")
}

// createOrQueryDatabases serves POST /dbs: a query when the body is a
// query (the Go SDK queries databases this way), else a create.
func (g *Gateway) createOrQueryDatabases(w http.ResponseWriter, r *http.Request) error {
	body, err := readBody(w, r, bodyLimit)
	if err != nil {
		return err
	}
	if isQuery(r) {
		res, err := g.eng.QueryDatabases(r.Context(), body)
		if err != nil {
			return err
		}
		return writePage(w, "Databases", res)
	}
	res, err := g.eng.CreateDatabase(r.Context(), body, throughputHeaders(r))
	if err != nil {
		return err
	}
	return writeResource(w, http.StatusCreated, res)
}

func (g *Gateway) readDatabase(w http.ResponseWriter, r *http.Request) error {
	res, err := g.eng.ReadDatabase(r.Context(), r.PathValue("db"))
	if err != nil {
		return err
	}
	return writeResource(w, http.StatusOK, res)
}

func (g *Gateway) deleteDatabase(w http.ResponseWriter, r *http.Request) error {
	res, err := g.eng.DeleteDatabase(r.Context(), r.PathValue("db"))
	if err != nil {
		return err
	}
	return writeResource(w, http.StatusNoContent, res)
}

// isQuery reports whether a POST to a feed is a query. The Go SDK marks
// queries with x-ms-documentdb-query, the JS SDK with
// x-ms-documentdb-isquery; both send application/query+json.
func isQuery(r *http.Request) bool {
	return header(r.Header, "Content-Type") == "application/query+json" ||
		header(r.Header, "X-Ms-Documentdb-Isquery") != "" ||
		header(r.Header, "X-Ms-Documentdb-Query") != ""
}
