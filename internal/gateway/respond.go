package gateway

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/ebbdb/ebb/internal/engine"
)

// Response header keys in canonical form, set directly in the header map:
// http.Header.Set would canonicalize them again on every response.
const (
	hCharge      = "X-Ms-Request-Charge"
	hEtag        = "Etag"
	hSession     = "X-Ms-Session-Token"
	hContentPath = "X-Ms-Content-Path"
	hAltPath     = "X-Ms-Alt-Content-Path"
	hContentType = "Content-Type"
	hLength      = "Content-Length"
	hItemCount   = "X-Ms-Item-Count"
	hCont        = "X-Ms-Continuation"
	hActivity    = "X-Ms-Activity-Id"
)

var jsonContentType = []string{"application/json"}

// writeResource writes a single resource with the headers the SDKs read.
// A nil body (Prefer: return=minimal, or a delete) writes no content.
func writeResource(w http.ResponseWriter, status int, res engine.Resource) error {
	setCharge(w, res.Charge)
	h := w.Header()
	if res.ETag != "" {
		h[hEtag] = []string{res.ETag}
	}
	if res.Session != "" {
		h[hSession] = []string{res.Session}
	}
	if res.ContentPath != "" {
		h[hContentPath] = []string{res.ContentPath}
		h[hAltPath] = []string{res.AltContentPath}
	}
	if res.Body == nil || status == http.StatusNoContent {
		if status != http.StatusNoContent {
			h[hContentType] = jsonContentType
			h[hLength] = []string{"0"}
		}
		w.WriteHeader(status)
		return nil
	}
	h[hContentType] = jsonContentType
	h[hLength] = []string{strconv.Itoa(len(res.Body))}
	w.WriteHeader(status)
	_, err := w.Write(res.Body)
	return err
}

// writeFeed writes a list of resources in the envelope the SDKs expect,
// e.g. {"_rid":"…","Documents":[…],"_count":n}.
func writeFeed(w http.ResponseWriter, envelope, rid string, rows [][]byte, charge float64, continuation string) error {
	size := 64
	for _, r := range rows {
		size += len(r) + 1
	}
	b := make([]byte, 0, size)
	b = append(b, `{"_rid":`...)
	b = appendJSONString(b, rid)
	b = append(b, `,"`...)
	b = append(b, envelope...)
	b = append(b, `":[`...)
	for i, r := range rows {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, r...)
	}
	b = append(b, `],"_count":`...)
	b = strconv.AppendInt(b, int64(len(rows)), 10)
	b = append(b, '}')
	h := w.Header()
	h[hContentType] = jsonContentType
	setCharge(w, charge)
	h[hItemCount] = []string{strconv.Itoa(len(rows))}
	if continuation != "" {
		h[hCont] = []string{continuation}
	}
	h[hLength] = []string{strconv.Itoa(len(b))}
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(b)
	return err
}

// setCharge is how every response gets its request charge: it sets the
// x-ms-request-charge header and reports the number to the request's
// recorder, which charges the container and feeds the metrics. A charge
// of zero or less is written as 1, the least a request costs.
func setCharge(w http.ResponseWriter, c float64) {
	if c <= 0 {
		c = 1
	}
	w.Header()[hCharge] = []string{strconv.FormatFloat(c, 'f', -1, 64)}
	if rec, ok := w.(*recorder); ok {
		rec.charge = c
	}
}

func appendJSONString(dst []byte, s string) []byte {
	b, _ := json.Marshal(s)
	return append(dst, b...)
}

// header returns the first value of the request header key, which is in
// canonical form (TestHeaderKeysCanonical): Header.Get canonicalizes its
// argument on every call, which allocates for Cosmos's lower-case names.
func header(h http.Header, key string) string {
	if v := h[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// itemRef reads the item address and partition key of a request.
func itemRef(r *http.Request) engine.ItemRef {
	ref := engine.ItemRef{DB: r.PathValue("db"), Coll: r.PathValue("coll"), ID: r.PathValue("id")}
	if v, ok := r.Header["X-Ms-Documentdb-Partitionkey"]; ok && len(v) > 0 {
		ref.PK, ref.HasPK = v[0], true
	}
	return ref
}

// minimal reports whether the client asked for no content in the reply.
func minimal(r *http.Request) bool {
	return header(r.Header, "Prefer") == "return=minimal"
}

func throughputHeaders(r *http.Request) engine.ThroughputHeaders {
	return engine.ThroughputHeaders{
		Offer:     header(r.Header, "X-Ms-Offer-Throughput"),
		Autopilot: header(r.Header, "X-Ms-Cosmos-Offer-Autopilot-Settings"),
	}
}
