package gateway

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/ebbdb/ebb/internal/engine"
)

func (g *Gateway) listContainers(w http.ResponseWriter, r *http.Request) error {
	rows, rid, charge, err := g.eng.Containers(r.Context(), r.PathValue("db"))
	if err != nil {
		return err
	}
	return writeFeed(w, "DocumentCollections", rid, rowList(rows), charge, "")
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
		return writePage(w, "DocumentCollections", res)
	}
	res, err := g.eng.CreateContainer(r.Context(), r.PathValue("db"), body, throughputHeaders(r))
	if err != nil {
		return err
	}
	return writeResource(w, http.StatusCreated, res)
}

func (g *Gateway) readContainer(w http.ResponseWriter, r *http.Request) error {
	quota := strings.EqualFold(r.Header.Get("x-ms-documentdb-populatequotainfo"), "true")
	res, err := g.eng.ReadContainer(r.Context(), r.PathValue("db"), r.PathValue("coll"), quota)
	if err != nil {
		return err
	}
	if res.Usage != nil {
		setQuotaHeaders(w.Header(), *res.Usage)
	}
	return writeResource(w, http.StatusOK, res)
}

// containerQuota is the service's x-ms-resource-quota for a container
// read with x-ms-documentdb-populatequotainfo: its script limits and its
// partition's storage limit (50 GB), in the service's order, units and
// trailing ";" (documentSize in MB, documentsSize and collectionSize in
// KB, documentsCount -1 for no limit). Service responses show these
// figures (e.g. "documentSize=51200;documentsSize=52428800;
// documentsCount=-1;collectionSize=52428800;"); the units are the .NET
// SDK's (ResourceResponseBase: CollectionSizeQuota, DocumentQuota in
// kilobytes).
var containerQuota = "functions=" + strconv.Itoa(engine.UserDefinedFunction.Quota()) + ";storedProcedures=" + strconv.Itoa(engine.StoredProcedure.Quota()) +
	";triggers=" + strconv.Itoa(engine.Trigger.Quota()) + ";documentSize=51200;documentsSize=52428800;documentsCount=-1;collectionSize=52428800;"

// setQuotaHeaders sets the headers of a container read with
// x-ms-documentdb-populatequotainfo (see the .NET SDK's
// ResourceResponseBase and the indexing-policy documentation, which reads
// the transformation progress this way):
//
//   - x-ms-resource-quota: containerQuota;
//   - x-ms-resource-usage: the same names with the container's figures:
//     no scripts (Ebb runs none), documentsCount its stored items,
//     documentsSize their bytes in KB (rounded down, as the service's
//     figures are), collectionSize the same (Ebb does not measure its
//     index's bytes apart), documentSize the collection's size in MB.
//     It is left out while the usage is unknown (a store from before the
//     counters, still being counted), rather than understated;
//   - x-ms-documentdb-collection-index-transformation-progress: 100, or
//     the percentage of the index rebuild done.
//
// The service also has x-ms-documentdb-collection-lazy-indexing-progress,
// for containers in lazy indexing mode; neither SDK reads it (the JS SDK
// only names it in its constants) and Ebb indexes "lazy" containers
// consistently, so it is not sent.
func setQuotaHeaders(h http.Header, u engine.Usage) {
	h.Set("x-ms-resource-quota", containerQuota)
	if u.Known {
		kb := u.Bytes / 1024
		h.Set("x-ms-resource-usage", "functions="+strconv.Itoa(u.Functions)+";storedProcedures="+strconv.Itoa(u.StoredProcedures)+
			";triggers="+strconv.Itoa(u.Triggers)+";documentSize="+strconv.FormatInt(kb/1024, 10)+
			";documentsSize="+strconv.FormatInt(kb, 10)+";documentsCount="+strconv.FormatInt(u.Items, 10)+
			";collectionSize="+strconv.FormatInt(kb, 10)+";")
	}
	h.Set("x-ms-documentdb-collection-index-transformation-progress", strconv.Itoa(u.IndexProgress))
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
// as an incremental feed (A-IM), from its If-None-Match, and stops at
// 304, which it gets once that carries the current etag; the JS SDK
// reads them whole.
func (g *Gateway) partitionKeyRanges(w http.ResponseWriter, r *http.Request) error {
	inm := r.Header.Get("If-None-Match")
	since := ""
	switch aim := r.Header.Get("A-IM"); {
	case strings.EqualFold(aim, "Incremental feed"):
		since = inm
	case aim != "":
		return &engine.Error{Kind: engine.KindBadRequest, Message: "The A-IM header " + quote(aim) + ` is not a feed of partition key ranges; send "Incremental Feed" to read the ranges made since If-None-Match, or no A-IM to read them all.`}
	}
	ranges, etag, rid, err := g.eng.PartitionKeyRangesSince(r.Context(), r.PathValue("db"), r.PathValue("coll"), since)
	if err != nil {
		return err
	}
	w.Header().Set("etag", etag)
	if inm != "" && inm == etag {
		setCharge(w, 1)
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	return writeFeed(w, "PartitionKeyRanges", rid, rowList(ranges), 1, "")
}
