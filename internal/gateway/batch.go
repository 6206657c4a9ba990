package gateway

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/ebbdb/ebb/internal/engine"
)

// batch serves POST …/docs with x-ms-cosmos-is-batch-request: a
// transactional batch (x-ms-cosmos-batch-atomic true, Go and JS) or a
// bulk request (false, JS). The answer is 200 with one result per
// operation, or 207 when one failed; a failed transactional batch
// committed nothing, and its other operations report 424.
func (g *Gateway) batch(w http.ResponseWriter, r *http.Request, body []byte) error {
	opts := engine.BatchOptions{
		Atomic:          !strings.EqualFold(r.Header.Get("x-ms-cosmos-batch-atomic"), "false"),
		ContinueOnError: !strings.EqualFold(r.Header.Get("x-ms-cosmos-batch-continue-on-error"), "false"),
		RangeID:         r.Header.Get("x-ms-documentdb-partitionkeyrangeid"),
	}
	res, err := g.eng.ExecuteBatch(r.Context(), itemRef(r), body, opts)
	if err != nil {
		return err
	}
	omitWrites := minimal(r)
	b := make([]byte, 0, 256*len(res.Ops))
	b = append(b, '[')
	for i, op := range res.Ops {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendBatchResult(b, op, omitWrites)
	}
	b = append(b, ']')
	h := w.Header()
	h.Set("Content-Type", "application/json")
	setCharge(w, res.Charge)
	if res.Session != "" {
		h.Set("x-ms-session-token", res.Session)
	}
	h.Set("Content-Length", strconv.Itoa(len(b)))
	status := http.StatusOK
	if res.Failed {
		status = http.StatusMultiStatus
	}
	w.WriteHeader(status)
	_, err = w.Write(b)
	return err
}

// appendBatchResult appends one operation's result as the SDKs read it:
// {statusCode, requestCharge, eTag?, resourceBody?} or, for a failure,
// {statusCode, requestCharge, message, subStatusCode?}.
func appendBatchResult(b []byte, op engine.BatchOpResult, omitWrites bool) []byte {
	status := batchSuccessStatus(op)
	var msg string
	var sub int
	switch {
	case op.Skipped:
		status, msg = http.StatusFailedDependency, "The operation was not performed because another operation in the batch failed."
	case op.Err != nil:
		status, _, msg, sub, _ = classify(op.Err)
	}
	b = append(b, `{"statusCode":`...)
	b = strconv.AppendInt(b, int64(status), 10)
	b = append(b, `,"requestCharge":`...)
	b = strconv.AppendFloat(b, op.Resource.Charge, 'f', -1, 64)
	if op.Resource.ETag != "" && status < 300 {
		b = append(b, `,"eTag":`...)
		b = appendJSONString(b, op.Resource.ETag)
	}
	if msg != "" {
		b = append(b, `,"message":`...)
		b = appendJSONString(b, msg)
	}
	if sub != 0 {
		b = append(b, `,"subStatusCode":`...)
		b = strconv.AppendInt(b, int64(sub), 10)
	}
	if op.Resource.Body != nil && status < 300 && (op.Kind == engine.BatchRead || !omitWrites) {
		b = append(b, `,"resourceBody":`...)
		b = append(b, op.Resource.Body...)
	}
	return append(b, '}')
}

// batchSuccessStatus is the status a successful operation reports, as
// the single-item request would.
func batchSuccessStatus(op engine.BatchOpResult) int {
	switch op.Kind {
	case engine.BatchCreate:
		return http.StatusCreated
	case engine.BatchUpsert:
		if op.Created {
			return http.StatusCreated
		}
	case engine.BatchDelete:
		return http.StatusNoContent
	}
	return http.StatusOK
}
