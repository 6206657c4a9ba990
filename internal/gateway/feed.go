package gateway

import (
	"net/http"
	"strings"
	"time"

	"github.com/ebbdb/ebb/internal/engine"
)

// changeFeed serves GET …/docs with an A-IM header: one page of the
// change feed. The etag of the response is the continuation; when
// nothing changed after the one the client sent, the answer is 304 with
// the current etag.
func (g *Gateway) changeFeed(w http.ResponseWriter, r *http.Request) error {
	req, err := changeFeedRequest(r)
	if err != nil {
		return err
	}
	res, err := g.eng.ChangeFeed(r.Context(), req)
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("etag", res.ETag)
	h.Set("x-ms-session-token", res.Session)
	if res.NotModified {
		setCharge(w, res.Charge)
		h.Set("x-ms-item-count", "0")
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	return writeFeed(w, "Documents", res.RID, rowList(res.Rows), res.Charge, "")
}

// changeFeedRequest reads the change feed headers of a request.
func changeFeedRequest(r *http.Request) (engine.ChangeFeedRequest, error) {
	q, err := queryRequest(r, nil)
	if err != nil {
		return engine.ChangeFeedRequest{}, err
	}
	req := engine.ChangeFeedRequest{
		Ref:          q.Ref,
		IfNoneMatch:  r.Header.Get("If-None-Match"),
		MaxItemCount: q.MaxItemCount,
		RangeID:      q.RangeID,
		StartEPK:     q.StartEPK,
		EndEPK:       q.EndEPK,
	}
	switch aim := r.Header.Get("A-IM"); {
	case strings.EqualFold(aim, "Incremental Feed"):
		req.Mode = engine.LatestVersion
	case strings.EqualFold(aim, "Full-Fidelity Feed"):
		req.Mode = engine.AllVersionsAndDeletes
	default:
		return req, &engine.Error{Kind: engine.KindBadRequest, Message: "The A-IM header " + quote(aim) + " is not a change feed mode; send \"Incremental Feed\" (latest version) or \"Full-Fidelity Feed\" (all versions and deletes)."}
	}
	if v := r.Header.Get("If-Modified-Since"); v != "" {
		t, err := parseHTTPTime(v)
		if err != nil {
			return req, &engine.Error{Kind: engine.KindBadRequest, Message: "The If-Modified-Since header " + quote(v) + " is not an RFC 1123 date such as \"Sun, 22 Nov 2026 06:00:00 GMT\"."}
		}
		req.Since = t
	}
	return req, nil
}

// parseHTTPTime reads an RFC 1123 date. Go's SDK writes the zone as
// "UTC", JavaScript's toUTCString as "GMT"; both are UTC.
func parseHTTPTime(v string) (time.Time, error) {
	for _, layout := range []string{time.RFC1123, time.RFC1123Z, time.RFC850, time.ANSIC} {
		if t, err := time.Parse(layout, v); err == nil {
			return t.UTC(), nil
		}
	}
	_, err := time.Parse(time.RFC1123, v)
	return time.Time{}, err
}

func quote(s string) string {
	if len(s) > 64 {
		s = s[:64] + "…"
	}
	return `"` + s + `"`
}
