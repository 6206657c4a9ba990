package gateway

import (
	"net/http"
)

func (g *Gateway) listContainers(w http.ResponseWriter, r *http.Request) error {
	rows, rid, charge, err := g.eng.Containers(r.Context(), r.PathValue("db"))
	if err != nil {
		return err
	}
	return writeFeed(w, "DocumentCollections", rid, rows, charge, "")
}

func (g *Gateway) createOrQueryContainers(w http.ResponseWriter, r *http.Request) error {
	body, err := readBody(w, r, bodyLimit)
	if err != nil {
		return err
	}
	if isQuery(r) {
		res, err := g.eng.QueryContainers(r.Context(), r.PathValue("db"), body)
		if err != nil {
			return err
		}
		return writeFeed(w, "DocumentCollections", res.RID, res.Rows, res.Charge, res.Continuation)
	}
	res, err := g.eng.CreateContainer(r.Context(), r.PathValue("db"), body, throughputHeaders(r))
	if err != nil {
		return err
	}
	return writeResource(w, http.StatusCreated, res)
}

func (g *Gateway) readContainer(w http.ResponseWriter, r *http.Request) error {
	res, err := g.eng.ReadContainer(r.Context(), r.PathValue("db"), r.PathValue("coll"))
	if err != nil {
		return err
	}
	return writeResource(w, http.StatusOK, res)
}

func (g *Gateway) replaceContainer(w http.ResponseWriter, r *http.Request) error {
	body, err := readBody(w, r, bodyLimit)
	if err != nil {
		return err
	}
	res, err := g.eng.ReplaceContainer(r.Context(), r.PathValue("db"), r.PathValue("coll"), body, r.Header.Get("If-Match"))
	if err != nil {
		return err
	}
	return writeResource(w, http.StatusOK, res)
}

func (g *Gateway) deleteContainer(w http.ResponseWriter, r *http.Request) error {
	res, err := g.eng.DeleteContainer(r.Context(), r.PathValue("db"), r.PathValue("coll"))
	if err != nil {
		return err
	}
	return writeResource(w, http.StatusNoContent, res)
}

// partitionKeyRanges serves the container's ranges. The Go SDK reads them
// as an incremental feed and stops at 304, which it gets once its
// If-None-Match carries the current etag.
func (g *Gateway) partitionKeyRanges(w http.ResponseWriter, r *http.Request) error {
	body, etag, rid, err := g.eng.PartitionKeyRanges(r.Context(), r.PathValue("db"), r.PathValue("coll"))
	if err != nil {
		return err
	}
	w.Header().Set("etag", etag)
	if inm := r.Header.Get("If-None-Match"); inm != "" && inm == etag {
		setCharge(w, 1)
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	return writeFeed(w, "PartitionKeyRanges", rid, [][]byte{body}, 1, "")
}
