// Package gateway is Ebb's Cosmos DB REST surface: routing, the
// master-key check, request headers in and response headers out, JSON
// envelopes, and the one table that turns engine errors into HTTP.
//
// Handlers are thin: parse the request, call one engine method, write the
// result. Everything every request needs (activity ids, auth, panic
// recovery, trailing-slash folding, logging) is the wrapper in Handler,
// written once.
package gateway

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ebbdb/ebb/internal/auth"
	"github.com/ebbdb/ebb/internal/clock"
	"github.com/ebbdb/ebb/internal/engine"
	"github.com/ebbdb/ebb/internal/engine/resource"
	"github.com/ebbdb/ebb/internal/metrics"
)

// Options configure a gateway.
type Options struct {
	Engine   *engine.Engine
	Verifier *auth.Verifier
	// WallClock checks x-ms-date; it stays the system clock even when the
	// engine runs on a manual clock, because clients sign with real time.
	WallClock clock.Clock
	// ManualClock is set when clock control is on (POST /_ebb/clock).
	ManualClock *clock.Manual
	// Advertise is the endpoint GET / advertises; empty means the scheme
	// and Host of each request.
	Advertise string
	// AccountID is the account document's id.
	AccountID string
	// CertPEM is served at /_explorer/emulator.pem, like the emulator's.
	CertPEM []byte
	// Explorer serves /_explorer/ (nil: not mounted).
	Explorer http.Handler
	// Metrics receives request metrics; served at GET /metrics to the
	// master key's holder unless NoMetricsRoute is set (the server then
	// serves them elsewhere).
	Metrics        *metrics.Registry
	NoMetricsRoute bool
	// AccessLog logs every request at info, not only rejected ones.
	AccessLog bool
	// StoreBackend names the kind of store in readiness answers
	// ("pebble", "memory", "postgres"); never its address.
	StoreBackend string
	Logger       *slog.Logger
}

// Gateway serves the REST API.
type Gateway struct {
	opts Options
	eng  *engine.Engine
	log  *slog.Logger
	// series are the metric series each (operation, status) records
	// into, looked up once (observe).
	series sync.Map // seriesKey → *opSeries
}

// New returns a gateway.
func New(opts Options) *Gateway {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.WallClock == nil {
		opts.WallClock = clock.NewSystem()
	}
	if opts.AccountID == "" {
		opts.AccountID = "ebb"
	}
	return &Gateway{opts: opts, eng: opts.Engine, log: opts.Logger}
}

// handler is a request handler that reports failure by returning an
// error, which the wrapper turns into the Cosmos error response.
type handler func(w http.ResponseWriter, r *http.Request) error

// access says what a route asks of a request before its handler runs.
type access int

const (
	// accessOpen asks nothing: health, the certificate, unknown paths.
	accessOpen access = iota
	// accessSigned asks for a master-key signature, as Cosmos does.
	accessSigned
	// accessKey asks for a master-key signature or "Bearer <master
	// key>", for scrapers that cannot sign requests.
	accessKey
	// accessAdmin asks for a signature with a read-write master key:
	// Ebb's own administration (the clock, TTL status, import, backup).
	accessAdmin
)

// route is one entry of the gateway's table.
type route struct {
	pattern string
	h       handler
	access  access
}

// routes is the gateway's table: every pattern it serves through the
// wrapper, with the access it asks (TestEveryRouteChecksAccess goes
// through all of them).
func (g *Gateway) routes() []route {
	rs := []route{
		{"GET /{$}", g.account, accessSigned},

		{"GET /dbs", g.listDatabases, accessSigned},
		{"POST /dbs", g.createOrQueryDatabases, accessSigned},
		{"GET /dbs/{db}", g.readDatabase, accessSigned},
		{"DELETE /dbs/{db}", g.deleteDatabase, accessSigned},

		{"GET /dbs/{db}/colls", g.listContainers, accessSigned},
		{"POST /dbs/{db}/colls", g.createOrQueryContainers, accessSigned},
		{"GET /dbs/{db}/colls/{coll}", g.readContainer, accessSigned},
		{"PUT /dbs/{db}/colls/{coll}", g.replaceContainer, accessSigned},
		{"DELETE /dbs/{db}/colls/{coll}", g.deleteContainer, accessSigned},
		{"GET /dbs/{db}/colls/{coll}/pkranges", g.partitionKeyRanges, accessSigned},
		{"POST /dbs/{db}/colls/{coll}/" + auth.PartitionKeyDeleteOp, g.deletePartition, accessSigned},

		{"GET /dbs/{db}/colls/{coll}/docs", g.readFeed, accessSigned},
		{"POST /dbs/{db}/colls/{coll}/docs", g.postItems, accessSigned},
		{"GET /dbs/{db}/colls/{coll}/docs/{id}", g.readItem, accessSigned},
		{"PUT /dbs/{db}/colls/{coll}/docs/{id}", g.replaceItem, accessSigned},
		{"PATCH /dbs/{db}/colls/{coll}/docs/{id}", g.patchItem, accessSigned},
		{"DELETE /dbs/{db}/colls/{coll}/docs/{id}", g.deleteItem, accessSigned},

		{"GET /offers", g.listOffers, accessSigned},
		{"POST /offers", g.queryOffers, accessSigned},
		{"GET /offers/{id}", g.readOffer, accessSigned},
		{"PUT /offers/{id}", g.replaceOffer, accessSigned},
		{"/offers/{id}/{rest...}", g.badOfferPath, accessSigned},

		{"GET /dbs/{db}/colls/{coll}/conflicts", g.listConflicts, accessSigned},
		{"POST /dbs/{db}/colls/{coll}/conflicts", g.queryConflicts, accessSigned},
		{"GET /dbs/{db}/colls/{coll}/conflicts/{id}", g.readConflict, accessSigned},
		{"DELETE /dbs/{db}/colls/{coll}/conflicts/{id}", g.readConflict, accessSigned},

		{"GET /_ebb/backup", g.backup, accessAdmin},
		{"GET /_ebb/clock", g.readClock, accessAdmin},
		{"POST /_ebb/clock", g.setClock, accessAdmin},
		{"GET /_ebb/health", g.live, accessOpen},
		{"GET /_ebb/health/live", g.live, accessOpen},
		{"GET /_ebb/health/ready", g.ready, accessOpen},
		{"GET /_ebb/containers/{db}/{coll}/ttl", g.ttlStatus, accessAdmin},
		{importRoute, g.importItems, accessAdmin},
		{"GET /_ebb/containers/{db}/{coll}/partitiondeletes", g.partitionDeletes, accessAdmin},
		{"GET /_ebb/containers/{db}/{coll}/partitions", g.partitions, accessAdmin},
		{"POST /_ebb/containers/{db}/{coll}/split", g.splitPartition, accessAdmin},
		{"GET /_explorer/emulator.pem", g.certificate, accessOpen},
	}
	rs = append(rs, g.scriptRoutes("sprocs", engine.StoredProcedure)...)
	rs = append(rs, g.scriptRoutes("triggers", engine.Trigger)...)
	rs = append(rs, g.scriptRoutes("udfs", engine.UserDefinedFunction)...)
	rs = append(rs, route{"POST /dbs/{db}/colls/{coll}/sprocs/{id}", g.executeStoredProcedure, accessSigned})
	rs = append(rs, g.userRoutes()...)
	if g.opts.Metrics != nil && !g.opts.NoMetricsRoute {
		// The figures name every database and container with traffic, so
		// on the API listener they are for the key holder only.
		rs = append(rs, route{"GET /metrics", serve(g.opts.Metrics.Handler()), accessKey})
	}
	return append(rs, route{"/", g.unknownPath, accessOpen})
}

// Handler returns the HTTP handler for the whole API.
func (g *Gateway) Handler() http.Handler {
	mux := http.NewServeMux()
	for _, r := range g.routes() {
		mux.Handle(r.pattern, g.wrap(r.pattern, r.h, r.access))
	}
	if g.opts.Explorer != nil {
		// Static files: the page signs its own requests.
		mux.Handle("/_explorer/", g.opts.Explorer)
	}
	var h http.Handler = foldTrailingSlash(mux, g.wrap("/", g.unknownPath, accessOpen))
	if g.opts.Explorer != nil {
		h = toExplorer(h)
	}
	return withGrownStack(h)
}

// foldTrailingSlash routes "/dbs/x/" like "/dbs/x": the SDKs address some
// resources by their _self link, which ends in a slash. A path with an
// empty, "." or ".." segment addresses no resource and goes to unclean,
// where net/http's mux would answer it with a redirect, which no SDK
// expects.
func foldTrailingSlash(next, unclean http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.URL.Path; len(p) > 1 && strings.HasSuffix(p, "/") && !strings.HasPrefix(p, "/_explorer/") {
			r.URL.Path = strings.TrimRight(p, "/")
			if r.URL.RawPath != "" {
				r.URL.RawPath = strings.TrimRight(r.URL.RawPath, "/")
			}
			if r.URL.Path == "" {
				r.URL.Path = "/"
			}
		}
		if !cleanPath(r.URL.EscapedPath()) { // the path the mux cleans
			unclean.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// cleanPath reports whether p has no empty, "." or ".." segment; a
// trailing slash (the explorer's directory) is not an empty segment.
func cleanPath(p string) bool {
	t := strings.TrimSuffix(p, "/")
	return t == "" || path.Clean(t) == t
}

// serve is h as a handler of this package, so that the wrapper's checks
// apply to it.
func serve(h http.Handler) handler {
	return func(w http.ResponseWriter, r *http.Request) error {
		h.ServeHTTP(w, r)
		return nil
	}
}

// wrap is what every request goes through, written once: activity id,
// the check access asks for, throughput admission and charging, panic
// recovery, error mapping, metrics. operation is the route pattern, which
// labels the request's metrics.
func (g *Gateway) wrap(operation string, h handler, a access) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		start := g.opts.WallClock.Elapsed()
		if g.eng != nil { // nil in tests of the wrapper alone
			g.eng.RequestStarted()
			defer g.eng.RequestDone()
		}
		w := &recorder{ResponseWriter: rw}
		activity := header(r.Header, "X-Ms-Activity-Id")
		if activity == "" {
			activity = newActivityID()
		}
		setHeader(w, hActivity, activity)
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					// A handler cutting a response it has begun: the
					// server closes the connection without a log line.
					panic(p)
				}
				g.log.Error("panic serving request", "activity", activity, "method", r.Method, "path", r.URL.Path, "panic", p)
				g.writeError(w, r, errors.New("internal error"))
			}
			g.observe(operation, r, w, g.opts.WallClock.Elapsed()-start)
		}()
		var readOnly bool
		var err error
		if a == accessSigned && isResourceToken(r) {
			err = g.checkResourceToken(r)
		} else {
			readOnly, err = g.checkAuth(r, a)
		}
		if err == nil && readOnly && (a == accessAdmin || writes(r)) {
			err = errReadOnlyKey
		}
		if err == nil && a != accessOpen {
			err = checkRequestOptions(r)
		}
		db, coll := r.PathValue("db"), r.PathValue("coll")
		// Only an admitted request is charged: one refused before (a bad
		// signature, say) cost its container nothing.
		admitted := false
		if err == nil && coll != "" && metered(operation, a) {
			err = g.eng.Admit(db, coll)
			admitted = err == nil
		}
		if err == nil {
			err = h(w, r)
		}
		if err != nil {
			g.writeError(w, r, err)
		}
		if admitted {
			g.eng.Charge(db, coll, w.charge)
		}
	})
}

// importRoute is the one route of Ebb's administration that writes
// items.
const importRoute = "POST /_ebb/containers/{db}/{coll}/import"

// metered reports whether a request on the route operation, with access
// a, counts against its container's throughput (and is refused with 429
// beyond it). Every request of the API does. Ebb's own administration
// (a container's TTL status, its partitions, a split) has no counterpart
// on the service's data plane and does not, so that its tools answer
// under load; an import writes items and does.
func metered(operation string, a access) bool {
	return a != accessAdmin || operation == importRoute
}

// recorder remembers the status a handler wrote and the request charge
// it reported through setCharge, and holds the values setHeader gives
// the response's headers.
type recorder struct {
	http.ResponseWriter
	status int
	charge float64
	// values back the one-value slices of the response's headers (see
	// setHeader); used counts those given out.
	values [8]string
	used   int
}

// Unwrap lets http.ResponseController reach the connection (deadlines,
// flushes) through the recorder.
func (w *recorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *recorder) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *recorder) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// observe records a finished request in the metrics and the log.
func (g *Gateway) observe(operation string, r *http.Request, w *recorder, took time.Duration) {
	status := w.status
	if status == 0 {
		status = http.StatusOK
	}
	if m := g.opts.Metrics; m != nil {
		s := g.seriesOf(m, operation, status)
		s.duration.Observe(took.Seconds())
		if w.charge > 0 {
			s.units.Add(w.charge)
		}
		if status == http.StatusTooManyRequests {
			m.Throttled.WithLabelValues(operation).Inc()
		}
	}
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		// Operators see who is turned away at the default level; the
		// request's authorization header is never logged.
		g.log.Info("request rejected", "method", r.Method, "path", r.URL.Path, "status", status, "remote", r.RemoteAddr)
	case g.opts.AccessLog:
		g.log.Info("request", "method", r.Method, "path", r.URL.Path, "status", status, "took", took, "remote", r.RemoteAddr)
	case g.log.Enabled(r.Context(), slog.LevelDebug):
		g.log.Debug("request", "method", r.Method, "path", r.URL.Path, "status", status, "took", took)
	}
}

type seriesKey struct {
	operation string
	status    int
}

// opSeries are the series of one (operation, status).
type opSeries struct {
	duration prometheus.Observer
	units    prometheus.Counter
}

// seriesOf returns the series of operation and status, looked up in the
// registry the first time only: a label lookup hashes the label values
// and formats the status on every request otherwise.
func (g *Gateway) seriesOf(m *metrics.Registry, operation string, status int) *opSeries {
	key := seriesKey{operation, status}
	if s, ok := g.series.Load(key); ok {
		return s.(*opSeries)
	}
	s := &opSeries{
		duration: m.RequestDuration.WithLabelValues(operation, strconv.Itoa(status)),
		units:    m.RequestUnits.WithLabelValues(operation),
	}
	actual, _ := g.series.LoadOrStore(key, s)
	return actual.(*opSeries)
}

// checkAuth checks what access a asks of r; readOnly says r was signed
// with a read-only key.
func (g *Gateway) checkAuth(r *http.Request, a access) (readOnly bool, err error) {
	switch a {
	case accessOpen:
		return false, nil
	case accessKey:
		if h := header(r.Header, "Authorization"); auth.IsBearer(h) {
			return false, g.opts.Verifier.VerifyBearer(h)
		}
	}
	resType, link, err := auth.ResourceOf(r.URL.EscapedPath())
	if err != nil {
		return false, &engine.Error{Kind: engine.KindBadRequest, Message: "The request path is not a valid escaped URL path."}
	}
	date := header(r.Header, "X-Ms-Date")
	if date == "" {
		date = header(r.Header, "Date")
	}
	return g.opts.Verifier.Verify(r.Method, resType, link, date, header(r.Header, "Authorization"), g.opts.WallClock.Now())
}

// writes reports whether r changes anything: what a read-only key may
// not do. Queries (and the SDKs' query-plan requests) are POSTs that
// read.
func writes(r *http.Request) bool {
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		return false
	case http.MethodPost:
		return !isQuery(r)
	}
	return true
}

// errReadOnlyKey answers a write signed with a read-only key. The
// service answers such requests as it does a wrong key, with 401 and
// this text (reported for a delete and a stored procedure run with a
// read-only key: azure-cosmos-dotnet-v2 issue 123); the last sentence is
// Ebb's, saying what to change.
var errReadOnlyKey = &auth.Error{Message: "The input authorization token can't serve the request. Please check that the expected payload is built as per the protocol, and check the key being used. A read-only key may read, query and read feeds; sign writes (and Ebb's /_ebb administration) with a read-write key."}

func newActivityID() string { return resource.NewUUID() }

// classify maps any error to status, code, message and substatus.
func classify(err error) (status int, code, msg string, sub int, retryAfter time.Duration) {
	err = engine.ClientError(err)
	var ee *engine.Error
	var ae *auth.Error
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &ee):
		status, code := ee.Kind.Status()
		if status == http.StatusInternalServerError {
			return status, code, "An internal error occurred.", 0, 0
		}
		return status, code, ee.Message, ee.SubStatus, ee.RetryAfter
	case errors.As(err, &ae):
		return http.StatusUnauthorized, "Unauthorized", ae.Message, 0, 0
	case errors.As(err, &mbe):
		return http.StatusRequestEntityTooLarge, "RequestEntityTooLarge", "Request size is too large: the body is over " + strconv.FormatInt(mbe.Limit, 10) + " bytes.", 0, 0
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return http.StatusRequestTimeout, "RequestTimeout", "The request was cancelled or timed out.", 0, 0
	case errors.Is(err, os.ErrDeadlineExceeded):
		// The server's read timeout ended the body before it all came.
		return http.StatusRequestTimeout, "RequestTimeout", "The request body did not arrive within the server's read timeout.", 0, 0
	}
	return http.StatusInternalServerError, "InternalServerError", "An internal error occurred.", 0, 0
}

// writeError writes the Cosmos error response for err. What the client
// is not told (an internal error, or why the store is unavailable, which
// names the database's user, host and port) is logged here, once per
// failed request, with the activity id the client also has.
func (g *Gateway) writeError(w http.ResponseWriter, r *http.Request, err error) {
	status, code, msg, sub, retryAfter := classify(err)
	h := w.Header()
	switch status {
	case http.StatusInternalServerError:
		g.log.Error("internal error", "activity", h.Get(hActivity), "method", r.Method, "path", r.URL.Path, "err", err)
	case http.StatusServiceUnavailable:
		g.log.Warn("store unavailable", "activity", h.Get(hActivity), "method", r.Method, "path", r.URL.Path, "err", err)
	}
	setCharge(w, 1)
	if sub != 0 {
		h.Set("x-ms-substatus", strconv.Itoa(sub))
	}
	if retryAfter > 0 {
		h.Set("x-ms-retry-after-ms", strconv.FormatInt(retryAfter.Milliseconds(), 10))
	}
	if status == http.StatusNotModified {
		w.WriteHeader(status)
		return
	}
	h.Set("Content-Type", "application/json")
	w.WriteHeader(status)
	body := []byte(`{"code":`)
	body = appendJSONString(body, code)
	body = append(body, `,"message":`...)
	var ee *engine.Error
	if errors.As(err, &ee) && ee.AdditionalInfo != nil {
		body = appendJSONString(body, msg+"\r\nActivityId: "+h.Get(hActivity))
		body = append(body, `,"additionalErrorInfo":`...)
		body = append(body, ee.AdditionalInfo...)
	} else {
		body = appendJSONString(body, cosmosMessage(msg, h.Get(hActivity), r.URL.RequestURI()))
	}
	body = append(body, '}')
	_, _ = w.Write(body)
}

// cosmosMessage wraps a message the way the service's gateway does, so
// clients that look inside "Errors" find the text.
func cosmosMessage(msg, activity, uri string) string {
	errs := appendJSONString([]byte(`{"Errors":[`), msg)
	return "Message: " + string(errs) + "]}\r\nActivityId: " + activity + ", Request URI: " + uri
}

// readBody reads a request body of at most limit bytes.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	body := http.MaxBytesReader(w, r.Body, limit)
	// With a Content-Length (the SDKs always send one) the body is read
	// into one buffer of its size, rather than grown by io.ReadAll's
	// doublings; net/http ends the body there and reports a short one.
	if n := r.ContentLength; n >= 0 && n <= limit {
		buf := make([]byte, n)
		if _, err := io.ReadFull(body, buf); err != nil {
			return nil, err
		}
		return buf, nil
	}
	return io.ReadAll(body)
}

// bodyLimit caps request bodies: a maximal document plus headroom for
// the JSON around it in patches and batches.
const bodyLimit = engine.MaxDocumentSize + 64<<10

func (g *Gateway) unknownPath(w http.ResponseWriter, r *http.Request) error {
	return &engine.Error{Kind: engine.KindNotFound, Message: "No resource at " + r.Method + " " + r.URL.Path + "."}
}

func (g *Gateway) certificate(w http.ResponseWriter, r *http.Request) error {
	if g.opts.CertPEM == nil {
		return &engine.Error{Kind: engine.KindNotFound, Message: "This server does not serve TLS, so it has no certificate."}
	}
	w.Header().Set("Content-Type", "application/x-pem-file")
	_, err := w.Write(g.opts.CertPEM)
	return err
}
