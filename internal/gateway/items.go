package gateway

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/ebbdb/ebb/internal/engine"
)

// postItems serves POST …/docs, which carries five different operations:
// a query plan request, a query, a batch, an upsert or a create.
func (g *Gateway) postItems(w http.ResponseWriter, r *http.Request) error {
	body, err := readBody(w, r, bodyLimit)
	if err != nil {
		return err
	}
	switch {
	case header(r.Header, "X-Ms-Cosmos-Is-Query-Plan-Request") != "":
		hybrid := slices.ContainsFunc(strings.Split(header(r.Header, "X-Ms-Cosmos-Supported-Query-Features"), ","),
			func(f string) bool { return strings.TrimSpace(f) == "HybridSearch" })
		plan, err := g.eng.QueryPlan(r.Context(), itemRef(r), body, hybrid)
		if err != nil {
			return err
		}
		return writeResource(w, http.StatusOK, engine.Resource{Body: plan, Charge: 1})
	case isQuery(r):
		return g.queryItems(w, r, body)
	case header(r.Header, "X-Ms-Cosmos-Is-Batch-Request") != "":
		return g.batch(w, r, body)
	}
	kind := engine.Create
	if strings.EqualFold(header(r.Header, "X-Ms-Documentdb-Is-Upsert"), "true") {
		kind = engine.Upsert
	}
	res, err := g.eng.WriteItem(r.Context(), itemRef(r), kind, body, header(r.Header, "If-Match"))
	if err != nil {
		return err
	}
	status := http.StatusCreated
	if kind == engine.Upsert && !res.Created {
		status = http.StatusOK
	}
	return writeItem(w, r, status, res)
}

// writeItem writes a document write's result, without the document when
// the client asked for a minimal reply.
func writeItem(w http.ResponseWriter, r *http.Request, status int, res engine.Resource) error {
	if minimal(r) {
		res.Body = nil
	}
	return writeResource(w, status, res)
}

// readItem writes the item out while the store lends it (ReadItemTo),
// so that the document is copied once, into the response.
func (g *Gateway) readItem(w http.ResponseWriter, r *http.Request) error {
	res, err := g.eng.ReadItemTo(r.Context(), itemRef(r), header(r.Header, "If-None-Match"), func(res engine.Resource) error {
		return writeResource(w, http.StatusOK, res)
	})
	if engine.IsKind(err, engine.KindNotModified) {
		setHeader(w, hEtag, res.ETag)
		setHeader(w, hSession, res.Session)
	}
	return err
}

func (g *Gateway) replaceItem(w http.ResponseWriter, r *http.Request) error {
	body, err := readBody(w, r, bodyLimit)
	if err != nil {
		return err
	}
	res, err := g.eng.WriteItem(r.Context(), itemRef(r), engine.Replace, body, header(r.Header, "If-Match"))
	if err != nil {
		return err
	}
	return writeItem(w, r, http.StatusOK, res)
}

func (g *Gateway) patchItem(w http.ResponseWriter, r *http.Request) error {
	body, err := readBody(w, r, bodyLimit)
	if err != nil {
		return err
	}
	res, err := g.eng.PatchItem(r.Context(), itemRef(r), body, header(r.Header, "If-Match"))
	if err != nil {
		return err
	}
	return writeItem(w, r, http.StatusOK, res)
}

func (g *Gateway) deleteItem(w http.ResponseWriter, r *http.Request) error {
	res, err := g.eng.DeleteItem(r.Context(), itemRef(r), header(r.Header, "If-Match"))
	if err != nil {
		return err
	}
	return writeResource(w, http.StatusNoContent, res)
}

// deletePartition serves POST …/operations/partitionkeydelete: delete
// every item of the logical partition in the partition key header. The
// items are invisible when it answers 200 and deleted in the background.
func (g *Gateway) deletePartition(w http.ResponseWriter, r *http.Request) error {
	res, err := g.eng.DeletePartition(r.Context(), itemRef(r))
	if err != nil {
		return err
	}
	return writeResource(w, http.StatusOK, res)
}

// readFeed serves GET …/docs: the read feed, paged, or with A-IM the
// change feed.
func (g *Gateway) readFeed(w http.ResponseWriter, r *http.Request) error {
	if r.Header.Get("A-IM") != "" {
		return g.changeFeed(w, r)
	}
	req, err := queryRequest(r, nil)
	if err != nil {
		return err
	}
	res, err := g.eng.ReadFeed(r.Context(), req)
	if err != nil {
		return err
	}
	return writeQueryResult(w, r, res)
}

func (g *Gateway) queryItems(w http.ResponseWriter, r *http.Request, body []byte) error {
	req, err := queryRequest(r, body)
	if err != nil {
		return err
	}
	res, err := g.eng.QueryItems(r.Context(), req)
	if err != nil {
		return err
	}
	return writeQueryResult(w, r, res)
}

// queryRequest reads the paging and routing headers of a query or feed.
func queryRequest(r *http.Request, body []byte) (engine.QueryRequest, error) {
	req := engine.QueryRequest{
		Ref:            itemRef(r),
		Body:           body,
		Continuation:   r.Header.Get("x-ms-continuation"),
		CrossPartition: strings.EqualFold(r.Header.Get("x-ms-documentdb-query-enablecrosspartition"), "true"),
		RangeID:        r.Header.Get("x-ms-documentdb-partitionkeyrangeid"),
		StartEPK:       r.Header.Get("x-ms-start-epk"),
		EndEPK:         r.Header.Get("x-ms-end-epk"),
	}
	if v := r.Header.Get("x-ms-max-item-count"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < -1 {
			return req, &engine.Error{Kind: engine.KindBadRequest, Message: "The x-ms-max-item-count header " + strconv.Quote(v) + " is invalid; send a positive integer, or -1 for the server's choice."}
		}
		req.MaxItemCount = n
	}
	return req, nil
}

// writeQueryResult writes a page of a query or feed with its metrics.
func writeQueryResult(w http.ResponseWriter, r *http.Request, res engine.QueryResult) error {
	h := w.Header()
	if strings.EqualFold(r.Header.Get("x-ms-documentdb-populatequerymetrics"), "true") {
		h.Set("x-ms-documentdb-query-metrics", res.Metrics)
	}
	if strings.EqualFold(r.Header.Get("x-ms-cosmos-populateindexmetrics"), "true") ||
		strings.EqualFold(r.Header.Get("x-ms-cosmos-populateindexmetrics-V2"), "true") {
		h.Set("x-ms-cosmos-index-utilization", res.IndexMetrics)
	}
	if res.Session != "" {
		h.Set("x-ms-session-token", res.Session)
	}
	return writePage(w, "Documents", res)
}
