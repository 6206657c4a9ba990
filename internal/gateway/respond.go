package gateway

import (
	"encoding/json"
	"io"
	"math"
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
		setHeader(w, hEtag, res.ETag)
	}
	if res.Session != "" {
		setHeader(w, hSession, res.Session)
	}
	if res.ContentPath != "" {
		setHeader(w, hContentPath, res.ContentPath)
		setHeader(w, hAltPath, res.AltContentPath)
	}
	if res.Body == nil || status == http.StatusNoContent {
		if status != http.StatusNoContent {
			h[hContentType] = jsonContentType
			setHeader(w, hLength, "0")
		}
		w.WriteHeader(status)
		return nil
	}
	h[hContentType] = jsonContentType
	setHeader(w, hLength, strconv.Itoa(len(res.Body)))
	w.WriteHeader(status)
	_, err := w.Write(res.Body)
	return err
}

// feedRows are the rows of a feed: a page of query results
// (*query.Body) or a list of resources (rowList).
type feedRows interface {
	Len() int
	// Size is the size of the rows joined by commas, which WriteTo
	// writes.
	Size() int
	WriteTo(w io.Writer) (int64, error)
}

// rowList is a list of resources as the rows of a feed.
type rowList [][]byte

func (l rowList) Len() int { return len(l) }

func (l rowList) Size() int {
	n := max(len(l)-1, 0)
	for _, r := range l {
		n += len(r)
	}
	return n
}

func (l rowList) WriteTo(w io.Writer) (int64, error) {
	var n int64
	for i, r := range l {
		if i > 0 {
			m, err := w.Write(comma)
			n += int64(m)
			if err != nil {
				return n, err
			}
		}
		m, err := w.Write(r)
		n += int64(m)
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

var comma = []byte{','}

// writeFeed writes the rows of a feed in the envelope the SDKs expect,
// e.g. {"_rid":"…","Documents":[…],"_count":n}. The rows go to w as
// they are: the response is never assembled in memory.
func writeFeed(w http.ResponseWriter, envelope, rid string, rows feedRows, charge float64, continuation string) error {
	head := make([]byte, 0, 32+len(envelope)+len(rid))
	head = append(head, `{"_rid":`...)
	head = appendJSONString(head, rid)
	head = append(head, `,"`...)
	head = append(head, envelope...)
	head = append(head, `":[`...)
	n := rows.Len()
	tail := make([]byte, 0, 32)
	tail = append(tail, `],"_count":`...)
	tail = strconv.AppendInt(tail, int64(n), 10)
	tail = append(tail, '}')
	h := w.Header()
	h[hContentType] = jsonContentType
	setCharge(w, charge)
	setHeader(w, hItemCount, strconv.Itoa(n))
	if continuation != "" {
		setHeader(w, hCont, continuation)
	}
	setHeader(w, hLength, strconv.Itoa(len(head)+rows.Size()+len(tail)))
	w.WriteHeader(http.StatusOK)
	if _, err := w.Write(head); err != nil {
		return err
	}
	if _, err := rows.WriteTo(w); err != nil {
		return err
	}
	_, err := w.Write(tail)
	return err
}

// writePage writes a page of query results as a feed, then gives its
// body back to the pool it was written into.
func writePage(w http.ResponseWriter, envelope string, res engine.QueryResult) error {
	defer res.Body.Release()
	return writeFeed(w, envelope, res.RID, res.Body, res.Charge, res.Continuation)
}

// setCharge is how every response gets its request charge: it sets the
// x-ms-request-charge header and reports the number to the request's
// recorder, which charges the container and feeds the metrics. A charge
// of zero or less is written as 1, the least a request costs.
func setCharge(w http.ResponseWriter, c float64) {
	if c <= 0 {
		c = 1
	}
	setHeader(w, hCharge, formatCharge(c))
	if rec, ok := w.(*recorder); ok {
		rec.charge = c
	}
}

// formatCharge renders a request charge as strconv.FormatFloat(c, 'f',
// -1, 64) does. A whole charge (a point read's 1, most writes') takes
// the integer path, which for the small ones is a constant string: the
// shortest-float formatting is a good part of a point read's header
// work.
func formatCharge(c float64) string {
	if c == math.Trunc(c) && c < 1<<53 {
		return strconv.FormatInt(int64(c), 10)
	}
	return strconv.FormatFloat(c, 'f', -1, 64)
}

// setHeader sets the response header key, in canonical form, to the one
// value v. Through the recorder the value's slice is taken from the
// recorder's own array, so the headers of a response cost no allocation
// each; the slice's capacity is one, so an append to it copies.
func setHeader(w http.ResponseWriter, key, v string) {
	if rec, ok := w.(*recorder); ok && rec.used < len(rec.values) {
		i := rec.used
		rec.used++
		rec.values[i] = v
		w.Header()[key] = rec.values[i : i+1 : i+1]
		return
	}
	w.Header()[key] = []string{v}
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
	// checkRequestOptions lets these through only to the item writes.
	ref.Triggers = engine.Triggers{Pre: header(r.Header, hPreTrigger), Post: header(r.Header, hPostTrigger)}
	return ref
}

// The headers that name an item write's triggers.
const (
	hPreTrigger  = "X-Ms-Documentdb-Pre-Trigger-Include"
	hPostTrigger = "X-Ms-Documentdb-Post-Trigger-Include"
)

// minimal reports whether the client asked for no content in the reply.
func minimal(r *http.Request) bool {
	return header(r.Header, "Prefer") == "return=minimal"
}

func throughputHeaders(r *http.Request) engine.ThroughputHeaders {
	return engine.ThroughputHeaders{
		Offer:     header(r.Header, "X-Ms-Offer-Throughput"),
		Autopilot: header(r.Header, "X-Ms-Cosmos-Offer-Autopilot-Settings"),
		// Ebb's own: the physical partitions of a new container.
		Partitions: header(r.Header, "X-Ebb-Partition-Count"),
	}
}
