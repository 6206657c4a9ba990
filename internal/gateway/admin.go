package gateway

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/ebbdb/ebb/internal/clock"
	"github.com/ebbdb/ebb/internal/engine"
)

// setClock serves POST /_ebb/clock: move the server's manual clock so a
// user's own tests can make TTL fire without sleeping. It exists only
// when the server runs with --clock-control.
func (g *Gateway) setClock(w http.ResponseWriter, r *http.Request) error {
	m := g.opts.ManualClock
	if m == nil {
		return &engine.Error{Kind: engine.KindNotFound, Message: "Clock control is off; start the server with --clock-control to use POST /_ebb/clock."}
	}
	body, err := readBody(w, r, 4096)
	if err != nil {
		return err
	}
	var in struct {
		AdvanceSeconds *float64 `json:"advanceSeconds"`
		Set            *string  `json:"set"`
	}
	if err := json.Unmarshal(body, &in); err != nil || (in.AdvanceSeconds == nil) == (in.Set == nil) {
		return &engine.Error{Kind: engine.KindBadRequest, Message: `Send exactly one of {"advanceSeconds": n} (n >= 0) or {"set": "<RFC 3339 time>"}.`}
	}
	switch {
	case in.AdvanceSeconds != nil:
		// A time.Duration holds some 292 years; 9e9 seconds is 285.
		if !(*in.AdvanceSeconds >= 0 && *in.AdvanceSeconds <= 9e9) {
			return &engine.Error{Kind: engine.KindBadRequest, Message: "advanceSeconds must be between 0 and 9e9 (about 285 years); the clock only moves forward by advancing (use \"set\" to step it)."}
		}
		m.Advance(time.Duration(*in.AdvanceSeconds * float64(time.Second)))
	default:
		t, err := time.Parse(time.RFC3339Nano, *in.Set)
		if err != nil {
			return &engine.Error{Kind: engine.KindBadRequest, Message: "set must be an RFC 3339 time such as 2026-11-22T05:00:00Z: " + err.Error()}
		}
		m.Set(t)
	}
	return writeClock(w, m.Now())
}

// readClock serves GET /_ebb/clock: the manual clock's reading, 404 when
// clock control is off (so clients can tell whether it is on).
func (g *Gateway) readClock(w http.ResponseWriter, r *http.Request) error {
	if g.opts.ManualClock == nil {
		return &engine.Error{Kind: engine.KindNotFound, Message: "Clock control is off; start the server with --clock-control to use /_ebb/clock."}
	}
	return writeClock(w, g.opts.ManualClock.Now())
}

func writeClock(w http.ResponseWriter, now time.Time) error {
	return writeJSON(w, map[string]any{"now": now.UTC().Format(time.RFC3339Nano), "epochSeconds": now.Unix()}, 1)
}

// ttlStatus serves GET /_ebb/containers/{db}/{coll}/ttl.
func (g *Gateway) ttlStatus(w http.ResponseWriter, r *http.Request) error {
	body, err := g.eng.ContainerTTL(r.Context(), r.PathValue("db"), r.PathValue("coll"))
	if err != nil {
		return err
	}
	return writeResource(w, http.StatusOK, engine.Resource{Body: body, Charge: 1})
}

// partitionDeletes serves GET /_ebb/containers/{db}/{coll}/partitiondeletes:
// the container's deletes by partition key still in progress, each with
// its partition key, when it was asked for and how many items are left.
func (g *Gateway) partitionDeletes(w http.ResponseWriter, r *http.Request) error {
	ds, err := g.eng.PartitionDeletes(r.Context(), r.PathValue("db"), r.PathValue("coll"))
	if err != nil {
		return err
	}
	type entry struct {
		PartitionKey json.RawMessage `json:"partitionKey"`
		RequestedAt  int64           `json:"requestedAt"`
		Remaining    int             `json:"remainingItems"`
		Capped       bool            `json:"remainingCapped,omitempty"`
	}
	out := struct {
		Deletes []entry `json:"partitionKeyDeletes"`
	}{Deletes: make([]entry, 0, len(ds))}
	for _, d := range ds {
		out.Deletes = append(out.Deletes, entry{PartitionKey: d.PartitionKey, RequestedAt: d.RequestedAt, Remaining: d.Remaining, Capped: d.Capped})
	}
	return writeJSON(w, out, 1)
}

// partitions serves GET /_ebb/containers/{db}/{coll}/partitions: the
// container's physical partitions, each with its range, its items and
// their bytes, and the size past which one is split.
func (g *Gateway) partitions(w http.ResponseWriter, r *http.Request) error {
	st, err := g.eng.Partitions(r.Context(), r.PathValue("db"), r.PathValue("coll"))
	if err != nil {
		return err
	}
	return writeJSON(w, st, 1)
}

// splitPartition serves POST /_ebb/containers/{db}/{coll}/split: it
// splits the partition key range the body names,
// {"partitionKeyRangeId": "0"}, in two while clients read and write
// (engine.SplitPartition), and answers the ranges it made.
func (g *Gateway) splitPartition(w http.ResponseWriter, r *http.Request) error {
	body, err := readBody(w, r, 1<<10)
	if err != nil {
		return err
	}
	var in struct {
		RangeID *string `json:"partitionKeyRangeId"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields() // nothing in the body is ignored
	if err := dec.Decode(&in); err != nil || in.RangeID == nil || dec.More() {
		return &engine.Error{Kind: engine.KindBadRequest, Message: `The body must name the range to split, and nothing else: {"partitionKeyRangeId": "0"}.`}
	}
	res, err := g.eng.SplitPartition(r.Context(), r.PathValue("db"), r.PathValue("coll"), *in.RangeID)
	if err != nil {
		return err
	}
	return writeJSON(w, struct {
		Parent   string   `json:"partitionKeyRangeId"`
		Children []string `json:"children"`
	}{res.Parent, res.Children}, 1)
}

// backup serves GET /_ebb/backup: a tar archive of a consistent snapshot
// of the embedded store, taken while Ebb serves, which `ebb restore`
// turns back into a data directory. Its size goes ahead in x-ebb-backup-bytes,
// for progress. The write deadline moves on with
// every write, so a large backup is bounded by a stalled client, not by
// its size.
func (g *Gateway) backup(w http.ResponseWriter, r *http.Request) error {
	out := &deadlineWriter{w: w, rc: http.NewResponseController(w), clock: g.opts.WallClock}
	err := g.eng.Backup(r.Context(), out, func(size int64) {
		w.Header().Set("content-type", "application/x-tar")
		w.Header().Set("x-ebb-backup-bytes", strconv.FormatInt(size, 10))
	})
	if err != nil && out.wrote {
		// The status is sent; only a cut connection tells the client.
		g.log.Error("backup failed while sending", "err", err)
		panic(http.ErrAbortHandler)
	}
	return err
}

// backupIdle is how long a backup's client may take to accept more bytes.
const backupIdle = time.Minute

type deadlineWriter struct {
	w     http.ResponseWriter
	rc    *http.ResponseController
	clock clock.Clock
	wrote bool
}

func (d *deadlineWriter) Write(p []byte) (int, error) {
	d.wrote = true
	_ = d.rc.SetWriteDeadline(d.clock.Now().Add(backupIdle))
	return d.w.Write(p)
}

// maxImportBody bounds one import request: the client sends a large file
// as many of them.
const maxImportBody = 16 << 20

// importItems serves POST /_ebb/containers/{db}/{coll}/import: items as
// newline-delimited JSON, written in one transaction through the engine
// with their own _ts (engine.ImportItems). ?mode=create keeps items that
// exist; the default, upsert, replaces them. ebb import sends a file as a
// series of these.
func (g *Gateway) importItems(w http.ResponseWriter, r *http.Request) error {
	mode := engine.ImportUpsert
	switch m := r.URL.Query().Get("mode"); m {
	case "", "upsert":
	case "create":
		mode = engine.ImportCreateOnly
	default:
		return &engine.Error{Kind: engine.KindBadRequest, Message: "mode must be upsert (the default) or create; got " + strconv.Quote(m) + "."}
	}
	body, err := readBody(w, r, maxImportBody)
	if err != nil {
		return err
	}
	var docs [][]byte
	for line := range bytes.Lines(body) {
		if line = bytes.TrimSpace(line); len(line) > 0 {
			docs = append(docs, line)
		}
	}
	res, err := g.eng.ImportItems(r.Context(), r.PathValue("db"), r.PathValue("coll"), docs, mode)
	if err != nil {
		return err
	}
	return writeJSON(w, res, res.Charge)
}

// writeJSON answers an administrative request with v as JSON, at charge
// request units.
func writeJSON(w http.ResponseWriter, v any, charge float64) error {
	body, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return writeResource(w, http.StatusOK, engine.Resource{Body: body, Charge: charge})
}
