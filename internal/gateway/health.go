// The health endpoints answer without a key, because orchestrators call
// them, so they say what was checked and how it went, never where the
// store is or what its driver said.

package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/ebbdb/ebb/internal/storage"
)

// readyTimeout bounds the store read behind GET /_ebb/health/ready, so a
// store that hangs makes the probe fail instead of hang. Orchestrators
// should give the probe a little longer than this.
const readyTimeout = 2 * time.Second

// live serves GET /_ebb/health and /_ebb/health/live: the process is up
// and serving HTTP. It touches nothing else, so an orchestrator does not
// restart Ebb because its database is away.
func (g *Gateway) live(w http.ResponseWriter, r *http.Request) error {
	w.Header()[hContentType] = jsonContentType
	_, err := w.Write([]byte(`{"status":"ok"}`))
	return err
}

// readiness is the body of GET /_ebb/health/ready.
type readiness struct {
	Status string `json:"status"`
	Checks struct {
		Store storeCheck `json:"store"`
	} `json:"checks"`
}

type storeCheck struct {
	Status    string  `json:"status"`
	Backend   string  `json:"backend"`
	LatencyMs float64 `json:"latencyMs"`
	// Reason says why a failed check failed, in one word: "unreachable",
	// "timeout", "closed" or "error".
	Reason string `json:"reason,omitempty"`
}

// ready serves GET /_ebb/health/ready: 200 when a read through the
// engine reaches the store within readyTimeout, 503 otherwise. The
// store's error is logged with the activity id, not sent.
func (g *Gateway) ready(w http.ResponseWriter, r *http.Request) error {
	ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
	defer cancel()
	start := g.opts.WallClock.Elapsed()
	err := g.eng.CheckStore(ctx)
	took := g.opts.WallClock.Elapsed() - start

	var out readiness
	out.Status = "ok"
	out.Checks.Store = storeCheck{Status: "ok", Backend: g.opts.StoreBackend, LatencyMs: float64(took.Microseconds()) / 1000}
	status := http.StatusOK
	if err != nil {
		out.Status, out.Checks.Store.Status, out.Checks.Store.Reason = "unavailable", "unavailable", storeFailure(err)
		status = http.StatusServiceUnavailable
		g.log.Warn("readiness: store check failed", "activity", w.Header().Get(hActivity), "backend", g.opts.StoreBackend, "err", err)
	}
	body, _ := json.Marshal(out)
	w.Header()[hContentType] = jsonContentType
	w.WriteHeader(status)
	_, err = w.Write(body)
	return err
}

// storeFailure names the kind of a failed store check.
func storeFailure(err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, storage.ErrUnavailable):
		return "unreachable"
	case errors.Is(err, storage.ErrClosed):
		return "closed"
	}
	return "error"
}
