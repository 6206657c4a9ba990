package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ebbdb/ebb/internal/gateway"
	"github.com/ebbdb/ebb/internal/server"
)

// PageSize is the read-feed page the workloads ask for, and what the
// stub returns when a query names no x-ms-max-item-count.
const PageSize = 100

// Canned system properties, shaped and sized like Ebb's.
const (
	stubDBRID   = "AbCdAA=="
	stubCollRID = "AbCdAKl0bWY="
	stubDocRID  = "AbCdAKl0bWYBAAAAAAAAAA=="
	stubETag    = `"00000000-0000-0000-0000-000000000001"`
	stubSession = "0:-1#1"
	stubTs      = 1795327200
	// stubQueryMetrics has every key Ebb sends, with plausible values.
	stubQueryMetrics = "totalExecutionTimeInMs=0.10;queryCompileTimeInMs=0.00;queryLogicalPlanBuildTimeInMs=0.00;queryPhysicalPlanBuildTimeInMs=0.00;queryOptimizationTimeInMs=0.00;VMExecutionTimeInMs=0.10;indexLookupTimeInMs=0.00;documentLoadTimeInMs=0.00;systemFunctionExecuteTimeInMs=0.00;userFunctionExecuteTimeInMs=0.00;retrievedDocumentCount=100;retrievedDocumentSize=122400;outputDocumentCount=100;outputDocumentSize=122400;writeOutputTimeInMs=0.00;indexUtilizationRatio=0.00"
)

// Stub is the ceiling: a Cosmos DB gateway that stores nothing and
// answers what the Go SDK sends during the workloads with canned,
// correctly shaped responses. It does not check signatures. It is served
// with Ebb's own TLS and HTTP/2 set-up, so the difference between Ebb and
// the stub is Ebb's own work.
type Stub struct {
	// URL is the endpoint clients connect to.
	URL string

	srv  *http.Server
	h    *stubHandler
	done chan error
}

// StartStub serves a fresh stub on a loopback port.
func StartStub() (*Stub, error) {
	return startStub(newStubHandler())
}

// StartDurableStub serves a stub that makes every create and upsert
// durable before answering: it appends the request body to a log in dir
// and waits for the fdatasync, with group commit (writers that arrive
// during a sync share the next one). It is the ceiling for durable
// writes: what any server that syncs each acknowledged write could do on
// this disk, through the same SDK, TLS and HTTP/2.
func StartDurableStub(dir string) (*Stub, error) {
	wal, err := newSyncLog(dir)
	if err != nil {
		return nil, err
	}
	h := newStubHandler()
	h.log = wal
	s, err := startStub(h)
	if err != nil {
		wal.close()
	}
	return s, err
}

func startStub(h *stubHandler) (*Stub, error) {
	cert, err := server.SelfSignedCert()
	if err != nil {
		return nil, fmt.Errorf("stub certificate: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	// The same http.Server settings as internal/server.
	srv := server.NewHTTPServer(h, server.TLSConfig(cert), server.DefaultTimeouts)
	srv.ErrorLog = log.New(io.Discard, "", 0)
	s := &Stub{
		URL:  fmt.Sprintf("https://%s/", ln.Addr()),
		h:    h,
		srv:  srv,
		done: make(chan error, 1),
	}
	go func() {
		err := s.srv.ServeTLS(ln, "", "")
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		s.done <- err
	}()
	return s, nil
}

// Close stops the stub, waiting for requests in flight.
func (s *Stub) Close(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	if serr := <-s.done; err == nil {
		err = serr
	}
	if s.h.log != nil {
		if cerr := s.h.log.close(); err == nil {
			err = cerr
		}
	}
	return err
}

// Unexpected returns how many requests fell outside the canned set (they
// were answered 404) and the first of them, "METHOD /path". A workload
// that makes the stub answer 404 measures nothing useful, so the harness
// fails when this is not zero.
func (s *Stub) Unexpected() (int64, string) { return s.h.unexpected() }

type stubHandler struct {
	mux *http.ServeMux
	// doc is the canned document: a 1 KB item with system properties.
	doc []byte
	// page is a canned page of PageSize documents.
	page []byte
	// log, if set, makes every document write durable before the reply.
	log *syncLog
	// lsn numbers the document writes, for their etags and session
	// tokens.
	lsn atomic.Uint64

	// mu guards misses, the number of unexpected requests, and the
	// first of them.
	mu              sync.Mutex
	misses          int64
	firstUnexpected string
}

func newStubHandler() *stubHandler {
	h := &stubHandler{mux: http.NewServeMux()}
	h.doc = withSystemProperties(Item(ItemID(0), 0))
	h.page = h.buildPage(PageSize)
	h.mux.HandleFunc("GET /{$}", h.account)
	h.mux.HandleFunc("POST /dbs", h.createDatabase)
	h.mux.HandleFunc("POST /dbs/{db}/colls", h.createContainer)
	h.mux.HandleFunc("GET /dbs/{db}/colls/{coll}", h.readContainer)
	h.mux.HandleFunc("GET /dbs/{db}/colls/{coll}/pkranges", h.pkranges)
	h.mux.HandleFunc("GET /dbs/{db}/colls/{coll}/docs/{id}", h.readItem)
	h.mux.HandleFunc("POST /dbs/{db}/colls/{coll}/docs", h.postItems)
	h.mux.HandleFunc("/", h.notFound)
	return h
}

// ServeHTTP does what Ebb's wrapper does for every request: echo the
// activity id (or make one up), then route.
func (h *stubHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	activity := r.Header.Get("x-ms-activity-id")
	if activity == "" {
		activity = "00000000-0000-4000-8000-000000000000"
	}
	w.Header().Set("x-ms-activity-id", activity)
	h.mux.ServeHTTP(w, r)
}

func (h *stubHandler) unexpected() (int64, string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.misses, h.firstUnexpected
}

// withSystemProperties appends Cosmos system properties to a JSON object,
// as Ebb stores them.
func withSystemProperties(item []byte) []byte {
	b := append([]byte(nil), item[:len(item)-1]...)
	b = append(b, `,"_rid":"`+stubDocRID+`","_self":"dbs/`+stubDBRID+`/colls/`+stubCollRID+`/docs/`+stubDocRID+`/","_etag":`...)
	b = strconv.AppendQuote(b, stubETag)
	b = append(b, `,"_attachments":"attachments/","_ts":`...)
	b = strconv.AppendInt(b, stubTs, 10)
	return append(b, '}')
}

func (h *stubHandler) buildPage(n int) []byte {
	b := make([]byte, 0, 64+n*(len(h.doc)+1))
	b = append(b, `{"_rid":"`+stubCollRID+`","Documents":[`...)
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, h.doc...)
	}
	b = append(b, `],"_count":`...)
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, '}')
}

// write sends a resource with the headers Ebb sends (the canned etag
// unless one is set); a nil body sends none.
func write(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h.Set("x-ms-request-charge", "1")
	if _, ok := h["Etag"]; !ok {
		h.Set("etag", stubETag)
	}
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	if len(body) > 0 {
		_, _ = w.Write(body)
	}
}

// writeDocument adds the document headers: the etag and session token
// of item version lsn, and the content paths. A real server's differ
// from one item or version to the next, as Ebb's do, so HTTP/2 sends
// them in full each time (HPACK can index only a value seen before):
// canned ones would make the ceiling's headers cheaper than any
// server's.
func writeDocument(w http.ResponseWriter, r *http.Request, status int, body []byte, lsn uint64) {
	h := w.Header()
	var etag [38]byte
	copy(etag[:], stubETag)
	for i, v := 36, lsn; i > 24 && v > 0; i, v = i-1, v>>4 {
		etag[i] = "0123456789abcdef"[v&15]
	}
	h.Set("etag", string(etag[:]))
	h.Set("x-ms-session-token", "0:-1#"+strconv.FormatUint(lsn, 10))
	h.Set("x-ms-content-path", stubCollRID)
	h.Set("x-ms-alt-content-path", "dbs/"+r.PathValue("db")+"/colls/"+r.PathValue("coll"))
	write(w, status, body)
}

func (h *stubHandler) account(w http.ResponseWriter, r *http.Request) {
	endpoint := "http://" + r.Host + "/"
	if r.TLS != nil {
		endpoint = "https://" + r.Host + "/"
	}
	body, _ := gateway.AccountDocument("ebb-ceiling", endpoint)
	write(w, http.StatusOK, body)
}

// resourceBody decodes the request body as a JSON object and adds
// system properties; the stub keeps nothing.
func resourceBody(r *http.Request, rid, self string, extra map[string]any) ([]byte, error) {
	var res map[string]any
	if err := json.NewDecoder(r.Body).Decode(&res); err != nil {
		return nil, err
	}
	for k, v := range extra {
		if _, ok := res[k]; !ok {
			res[k] = v
		}
	}
	res["_rid"], res["_self"], res["_etag"], res["_ts"] = rid, self, stubETag, stubTs
	return json.Marshal(res)
}

func (h *stubHandler) createDatabase(w http.ResponseWriter, r *http.Request) {
	body, err := resourceBody(r, stubDBRID, "dbs/"+stubDBRID+"/", map[string]any{"_colls": "colls/", "_users": "users/"})
	if err != nil {
		badRequest(w, err)
		return
	}
	write(w, http.StatusCreated, body)
}

var containerDefaults = map[string]any{
	"indexingPolicy": map[string]any{
		"indexingMode": "consistent", "automatic": true,
		"includedPaths": []any{map[string]any{"path": "/*"}},
		"excludedPaths": []any{map[string]any{"path": `/"_etag"/?`}},
	},
	"conflictResolutionPolicy": map[string]any{"mode": "LastWriterWins", "conflictResolutionPath": "/_ts", "conflictResolutionProcedure": ""},
	"geospatialConfig":         map[string]any{"type": "Geography"},
	"_docs":                    "docs/", "_sprocs": "sprocs/", "_triggers": "triggers/", "_udfs": "udfs/", "_conflicts": "conflicts/",
}

func (h *stubHandler) createContainer(w http.ResponseWriter, r *http.Request) {
	body, err := resourceBody(r, stubCollRID, "dbs/"+stubDBRID+"/colls/"+stubCollRID+"/", containerDefaults)
	if err != nil {
		badRequest(w, err)
		return
	}
	write(w, http.StatusCreated, body)
}

func (h *stubHandler) readContainer(w http.ResponseWriter, r *http.Request) {
	res := map[string]any{
		"id":           r.PathValue("coll"),
		"partitionKey": map[string]any{"paths": []string{PartitionKeyPath}, "kind": "Hash", "version": 2},
		"_rid":         stubCollRID, "_self": "dbs/" + stubDBRID + "/colls/" + stubCollRID + "/", "_etag": stubETag, "_ts": stubTs,
	}
	for k, v := range containerDefaults {
		res[k] = v
	}
	body, _ := json.Marshal(res)
	write(w, http.StatusOK, body)
}

func (h *stubHandler) pkranges(w http.ResponseWriter, r *http.Request) {
	body := []byte(`{"_rid":"` + stubCollRID + `","PartitionKeyRanges":[{"id":"0","_rid":"AbCdAKl0bWYCAAAAAAAAUA==","_self":"dbs/` + stubDBRID + `/colls/` + stubCollRID + `/pkranges/AbCdAKl0bWYCAAAAAAAAUA==/","_etag":` + strconv.Quote(stubETag) + `,"minInclusive":"","maxExclusive":"FF","ridPrefix":0,"throughputFraction":1,"status":"online","parents":[],"_ts":` + strconv.Itoa(stubTs) + `}],"_count":1}`)
	write(w, http.StatusOK, body)
}

// readItem answers with the canned document, as the version of the
// item named that a preload would have written: item n's first.
func (h *stubHandler) readItem(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	n, _ := strconv.ParseUint(strings.TrimLeft(id[strings.LastIndexByte(id, '-')+1:], "0"), 10, 64)
	writeDocument(w, r, http.StatusOK, h.doc, n+1)
}

// postItems answers creates, upserts and queries on …/docs. It reads the
// whole body first, as a real server must.
func (h *stubHandler) postItems(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		badRequest(w, err)
		return
	}
	if r.Header.Get("x-ms-cosmos-is-query-plan-request") != "" || r.Header.Get("x-ms-cosmos-is-batch-request") != "" {
		h.notFound(w, r)
		return
	}
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/query+json") || r.Header.Get("x-ms-documentdb-query") != "" {
		h.queryPage(w, r)
		return
	}
	if h.log != nil {
		if err := h.log.commit(body); err != nil {
			writeError(w, http.StatusInternalServerError, "InternalServerError", err.Error())
			return
		}
	}
	status := http.StatusCreated
	if strings.EqualFold(r.Header.Get("x-ms-documentdb-is-upsert"), "true") {
		// Most upserts in the workload replace an existing item.
		status = http.StatusOK
	}
	var reply []byte
	if r.Header.Get("Prefer") != "return=minimal" {
		reply = h.doc
	}
	writeDocument(w, r, status, reply, h.lsn.Add(1))
}

// queryPage answers a query with a canned full page: x-ms-max-item-count
// documents (PageSize when unset), a continuation, and query metrics.
func (h *stubHandler) queryPage(w http.ResponseWriter, r *http.Request) {
	n := PageSize
	if v, err := strconv.Atoi(r.Header.Get("x-ms-max-item-count")); err == nil && v > 0 {
		n = v
	}
	body := h.page
	if n != PageSize {
		body = h.buildPage(n)
	}
	hd := w.Header()
	if strings.EqualFold(r.Header.Get("x-ms-documentdb-populatequerymetrics"), "true") {
		hd.Set("x-ms-documentdb-query-metrics", stubQueryMetrics)
	}
	hd.Set("x-ms-session-token", stubSession)
	hd.Set("x-ms-item-count", strconv.Itoa(n))
	hd.Set("x-ms-continuation", `{"token":"canned"}`)
	write(w, http.StatusOK, body)
}

func (h *stubHandler) notFound(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	if h.misses++; h.misses == 1 {
		h.firstUnexpected = r.Method + " " + r.URL.Path
	}
	h.mu.Unlock()
	writeError(w, http.StatusNotFound, "NotFound", "The ceiling stub does not serve "+r.Method+" "+r.URL.Path+".")
}

func badRequest(w http.ResponseWriter, err error) {
	writeError(w, http.StatusBadRequest, "BadRequest", err.Error())
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	body, _ := json.Marshal(map[string]string{"code": code, "message": msg})
	h := w.Header()
	h.Set("x-ms-request-charge", "1")
	h.Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
