package engine

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ebbdb/ebb/internal/engine/dberr"
	"github.com/ebbdb/ebb/internal/engine/document"
	"github.com/ebbdb/ebb/internal/engine/index"
	"github.com/ebbdb/ebb/internal/engine/keyspace"
	"github.com/ebbdb/ebb/internal/engine/resource"
	"github.com/ebbdb/ebb/internal/engine/throughput"
	"github.com/ebbdb/ebb/internal/keys"
	"github.com/ebbdb/ebb/internal/query"
	"github.com/ebbdb/ebb/internal/storage"
)

// QueryRequest is a query or read-feed page request.
type QueryRequest struct {
	Ref ItemRef
	// Body is the application/query+json body; nil for a read feed.
	Body         []byte
	MaxItemCount int
	Continuation string
	// CrossPartition is x-ms-documentdb-query-enablecrosspartition.
	CrossPartition bool
	// RangeID is x-ms-documentdb-partitionkeyrangeid.
	RangeID string
	// StartEPK and EndEPK are x-ms-start-epk and x-ms-end-epk: with a
	// RangeID, the part of that range the request reads (an SDK's feed
	// range narrower than a partition).
	StartEPK, EndEPK string
}

// QueryResult is one page of results.
type QueryResult struct {
	// Body holds the rows, written once by the query executor; whoever
	// sends them releases it (query.Body.Release).
	Body         *query.Body
	Continuation string
	Charge       float64
	// RID is the _rid of the envelope (the container's).
	RID string
	// Metrics is x-ms-documentdb-query-metrics; IndexMetrics is
	// x-ms-cosmos-index-utilization.
	Metrics, IndexMetrics string
	Session               string
}

// Rows returns the page's rows; they are valid until the Body is
// released.
func (r QueryResult) Rows() [][]byte { return r.Body.Rows() }

// readFeedQuery is what a read feed is: every visible item in key order.
const readFeedQuery = "SELECT * FROM c"

// readFeedPlan is readFeedQuery parsed and bound once: a read feed page
// neither parses nor binds, nor looks in the engine's plan cache. A plan
// is immutable, so one serves concurrent pages.
var readFeedPlan = sync.OnceValues(func() (*query.Plan, error) { return bind(query.Parse(readFeedQuery)) })

// The bounds of the engine's cache of parsed queries (query.Cache): the
// texts of the queries an application sends, several SDK clients'
// worth, without letting long texts pin much memory.
const (
	planCacheEntries = 512
	planCacheBytes   = 512 << 10
)

// queryRequestBody is the body of a query: {"query": "...", "parameters":
// [{"name","value"}]}.
type queryRequestBody struct {
	Query      *string          `json:"query"`
	Parameters []queryParameter `json:"parameters"`
}

type queryParameter struct {
	Name  string          `json:"name"`
	Value json.RawMessage `json:"value"`
}

// The names encoding/json decodes a query body's objects by.
var (
	queryBodyFields      = document.Fields(queryRequestBody{})
	queryParameterFields = document.Fields(queryParameter{})
)

// parseQueryBody reads a queryRequestBody. A parameter's value gets the query
// engine's strict parser, which refuses a name repeated in an object; the
// body and its parameters may not name one of their fields twice either.
func parseQueryBody(body []byte) (string, []query.Param, error) {
	var in queryRequestBody
	if err := json.Unmarshal(body, &in); err != nil {
		return "", nil, dberr.BadRequest("The query body is invalid: %v. Send {\"query\": \"SELECT …\", \"parameters\": [{\"name\": \"@p\", \"value\": …}]}.", err)
	}
	if err := checkQueryBodyFields(body); err != nil {
		return "", nil, err
	}
	if in.Query == nil {
		return "", nil, dberr.BadRequest("The query body has no \"query\" property.")
	}
	if err := query.CheckParameterCount(len(in.Parameters)); err != nil {
		return "", nil, queryError(err)
	}
	params := make([]query.Param, 0, len(in.Parameters))
	for _, p := range in.Parameters {
		if !strings.HasPrefix(p.Name, "@") {
			return "", nil, dberr.BadRequest("The query parameter name '%s' is invalid; parameter names start with '@'.", p.Name)
		}
		var v query.Value
		if p.Value != nil {
			var err error
			if v, err = query.ParseJSON(p.Value); err != nil {
				return "", nil, dberr.BadRequest("The value of query parameter %s is invalid: %v.", p.Name, err)
			}
		}
		params = append(params, query.Param{Name: p.Name, Value: v})
	}
	return *in.Query, params, nil
}

// checkQueryBodyFields runs document.CheckFields on a query body and on
// each of its parameters.
// REQUIRES: json.Valid(body).
func checkQueryBodyFields(body []byte) error {
	if err := document.CheckFields(body, 0, queryBodyFields); err != nil {
		return err
	}
	ms, _ := document.ObjectMembers(body)
	for _, m := range ms {
		if strings.EqualFold(m.Key, "parameters") {
			if err := document.CheckFieldsOfEach(body, m.End-len(m.Val), queryParameterFields); err != nil {
				return err
			}
		}
	}
	return nil
}

// compile binds a query over items with computed properties cs (nil:
// none, as for the catalog's resources) to params, parsing it only if
// the engine's plan cache does not hold it, and turns its errors into
// 400s. Computed properties and parameters are bound for each request;
// they do not change what Parse builds, so the text alone is the key.
func (e *Engine) compile(text string, params []query.Param, cs *query.Computed) (*query.Plan, error) {
	q, err := e.plans.Parse(text)
	if err != nil {
		return nil, queryError(err)
	}
	p, err := q.BindComputed(params, cs)
	if err != nil {
		return nil, queryError(err)
	}
	return p, nil
}

// bind binds a query parsed by query.Parse without parameters or
// computed properties.
func bind(q *query.Query, err error) (*query.Plan, error) {
	if err != nil {
		return nil, queryError(err)
	}
	p, err := q.Bind(nil)
	if err != nil {
		return nil, queryError(err)
	}
	return p, nil
}

func queryError(err error) error {
	var qe *query.Error
	if errors.As(err, &qe) {
		return dberr.BadRequest("%s", qe.Error())
	}
	var be *query.BudgetError
	if errors.As(err, &be) {
		return budgetError(be)
	}
	if errors.Is(err, query.ErrBadContinuation) {
		// "Invalid Continuation Token" is the service's message for a
		// token it cannot use (azure-cosmos-dotnet-v2 issue 657).
		return dberr.BadRequest("Invalid Continuation Token: the token is malformed or belongs to a different query. Start the query again without x-ms-continuation.")
	}
	return err
}

// budgetError is a query page that ran out of its budget with nothing it
// could return. The service answers a request it could not finish in
// time with 408 RequestTimeout ("Azure Cosmos DB for NoSQL returned an
// HTTP 408 request time out", learn.microsoft.com/azure/cosmos-db/nosql/
// troubleshoot-request-timeout); for a query it never needs to, since
// its pages stop at 5 s with a continuation and it combines partial
// aggregates across pages, which Ebb's single-pass executor cannot.
// The Go SDK (azcosmos v1.5.0, clientRetryPolicy) sends a read that got
// a 408 once more after a second, so such a query spends two budgets
// before its caller sees the error.
func budgetError(be *query.BudgetError) error {
	msg := fmt.Sprintf("The query could not return a page within the server's query page budget of %v (--query-page-budget): ", be.Budget)
	if be.AllRows {
		msg += "it must see every item before it can return any row (an ORDER BY that no index serves, an aggregate, GROUP BY or DISTINCT), so it cannot return part of its result with a continuation. Narrow it with a filter or a partition key, add an index that serves its ORDER BY, or raise the budget."
	} else {
		msg += "evaluating a single row took all of it. Simplify the query (fewer JOINs over large arrays, smaller subqueries) or raise the budget."
	}
	return &Error{Kind: KindRequestTimeout, Message: msg}
}

// docSource is the Source of a container's items (optionally one logical
// partition, or a prefix of a hierarchical key): every item visible at
// the request's instant, in key order. The index sources that serve a
// query in its place read at the same instant.
type docSource struct {
	e      *Engine
	c      *container
	prefix []byte
	// at is the request's one instant: for visibility and for the query
	// environment (GetCurrentTimestamp() and the like).
	at  time.Time
	ctx context.Context
	// start is when the request began on the query clock's scale: the
	// page budget of the work done for it outside the executor
	// (workmeter.go) runs from there.
	start time.Duration
	// store is what the source reads: the engine's store, or a stored
	// procedure's transaction (pinnedStore).
	store storage.Store
	// udfs are the user-defined functions the query calls (udfs.go);
	// textStats the full-text statistics its FullTextScore calls rank
	// by, by path (fulltext.go).
	udfs      query.UDFs
	textStats map[string]*query.TextStats
	// scoped: the request names one physical partition, part (by its
	// partition key range id), and sees only its items; those whose
	// encoded partition key epkIn accepts, when it is set (x-ms-start-epk
	// and x-ms-end-epk).
	scoped bool
	part   int
	epkIn  func(pkEnc []byte) bool
}

// meter returns a meter for work named what done for the source's
// request outside the executor.
func (s *docSource) meter(what string) *workMeter {
	e := s.e
	return e.workMeter(s.ctx, s.start, e.pageBudget, fmt.Sprintf("The query could not return a page within the server's query page budget of %v (--query-page-budget): %s took all of it. Raise the budget.", e.pageBudget, what))
}

// items reads the source's container at its instant in snapshot r.
func (s *docSource) items(r storage.Reader) itemReader {
	ir := itemReader{r: r, c: s.c, now: s.at.Unix(), scoped: s.scoped, part: s.part, epkIn: s.epkIn}
	if s.scoped {
		ir.meter = s.meter("reading the other partition key ranges' items to find this range's")
	}
	return ir
}

func (s *docSource) Scan(after []byte, yield func(key, doc []byte) bool) error {
	start := s.prefix
	if after != nil {
		if !strings.HasPrefix(string(after), string(s.prefix)) {
			return query.ErrBadContinuation
		}
		start = append(append([]byte(nil), after...), 0)
	}
	return s.store.View(s.ctx, func(r storage.Reader) error {
		return s.items(r).scan(start, keys.PrefixEnd(s.prefix), false, func(key []byte, it storedItem) bool {
			return yield(key, it.doc)
		})
	})
}

// scope resolves which items a query or feed request may see.
func (e *Engine) scope(ctx context.Context, req QueryRequest, c *container, requirePK bool) (*docSource, error) {
	src := &docSource{e: e, c: c, at: e.now(), ctx: ctx, start: e.queryClock.Elapsed(), store: e.store}
	var err error
	if req.RangeID != "" {
		p, ok := c.parsePartitionID(req.RangeID)
		if !ok {
			return nil, c.errNoSuchRange(req.RangeID)
		}
		src.scoped, src.part = c.multi(), p
		if src.epkIn, err = c.pk.EPKFilter(req.StartEPK, req.EndEPK); err != nil {
			return nil, err
		}
		src.scoped = src.scoped || src.epkIn != nil
	} else if req.StartEPK != "" || req.EndEPK != "" {
		return nil, dberr.BadRequest("x-ms-start-epk and x-ms-end-epk narrow the partition key range that x-ms-documentdb-partitionkeyrangeid names; this request names none.")
	}
	prefix := keyspace.CollPrefix(keyspace.Doc, c.rid)
	if req.Ref.HasPK {
		pk, err := document.ParsePKHeader(req.Ref.PK)
		if err != nil {
			return nil, err
		}
		if len(pk) > len(c.pk.Paths) {
			return nil, dberr.BadRequest("The partition key has %d values but the container's partition key %s has %d paths.", len(pk), resource.PKPaths(c.pk), len(c.pk.Paths))
		}
		prefix = pk.Encode(prefix)
	} else if requirePK && !req.CrossPartition && req.RangeID == "" {
		return nil, dberr.BadRequest("Cross partition query is required but disabled. Please set x-ms-documentdb-query-enablecrosspartition to true, specify x-ms-documentdb-partitionkey, or revise your query to avoid this exception.")
	}
	src.prefix = prefix
	return src, nil
}

// QueryItems runs one page of a query over a container's items.
func (e *Engine) QueryItems(ctx context.Context, req QueryRequest) (QueryResult, error) {
	c, err := e.resolve(req.Ref)
	if err != nil {
		return QueryResult{}, err
	}
	plan, err := e.compileQueryBody(req.Body, c)
	if err != nil {
		return QueryResult{}, err
	}
	if req.CrossPartition && !req.Ref.HasPK && req.RangeID == "" {
		if msg := plan.DistributionError(); msg != "" {
			return QueryResult{}, dberr.BadRequest("%s", msg)
		}
		if !gatewayServes(plan.QueryInfo()) {
			return QueryResult{}, &Error{Kind: KindBadRequest, SubStatus: 1004, Message: errNotServableByGateway, AdditionalInfo: queryPlanJSON(plan)}
		}
	}
	src, err := e.scope(ctx, req, c, true)
	if err != nil {
		return QueryResult{}, err
	}
	return e.pageItemsWithUDFs(ctx, plan, src, req)
}

// compileQueryBody parses a query request body and compiles its query
// over c's items.
func (e *Engine) compileQueryBody(body []byte, c *container) (*query.Plan, error) {
	text, params, err := parseQueryBody(body)
	if err != nil {
		return nil, err
	}
	plan, err := e.compile(text, params, c.computed)
	if err != nil {
		return nil, err
	}
	plan.SetVectors(c.vectorFunctions())
	return plan, nil
}

// errNotServableByGateway is the service's answer (400, substatus 1004)
// to a cross-partition query that needs its results merged across
// partitions, sent without a query plan (no partition key range id), as
// SDKs without a query engine (the Go SDK) send them. The SDKs that fetch
// a plan first (JS, .NET, Java, Python) query each partition key range
// instead, which Ebb serves. The body carries the plan in
// additionalErrorInfo. See https://learn.microsoft.com/rest/api/cosmos-db/querying-cosmosdb-resources-using-the-rest-api#queries-that-cannot-be-served-by-gateway
// and the service's answer quoted in https://github.com/Azure/azure-sdk-for-go/issues/23128.
const errNotServableByGateway = "The provided cross partition query can not be directly served by the gateway. This is a first chance (internal) exception that all newer clients will know how to handle gracefully. This exception is traced, but unless you see it bubble up as an exception (which only happens on older SDK clients), then you can safely ignore this message."

// gatewayServes reports whether the service's gateway runs a
// cross-partition query with this plan directly: only projections and
// filters, nothing that keeps state across partitions (TOP, ORDER BY,
// OFFSET LIMIT, aggregates, DISTINCT, GROUP BY).
func gatewayServes(qi query.QueryInfo) bool {
	return qi.DistinctType == "None" && qi.Top == nil && qi.Offset == nil && qi.Limit == nil &&
		len(qi.OrderBy) == 0 && len(qi.GroupByExpressions) == 0 && len(qi.Aggregates) == 0 &&
		len(qi.GroupByAliasToAggregateType) == 0
}

// queryPlanJSON is the partitioned query execution info of a plan over
// Ebb's one partition key range, as the query plan request returns it.
func queryPlanJSON(plan *query.Plan) []byte {
	b, _ := json.Marshal(map[string]any{
		"partitionedQueryExecutionInfoVersion": 2,
		"queryInfo":                            plan.QueryInfo(),
		"queryRanges":                          wholeRange,
	})
	return b
}

// wholeRange is the query ranges of a plan: every partition key.
var wholeRange = []map[string]any{{"min": "", "max": "FF", "isMinInclusive": true, "isMaxInclusive": false}}

// pageItems runs one page of an items query over an index when one
// serves it: reading in ORDER BY order (index.OrderedFor), or narrowing
// a filter (index.SourceFor); else over src. A continuation resumes the
// access path that issued it.
func (e *Engine) pageItems(ctx context.Context, plan *query.Plan, src *docSource, req QueryRequest) (QueryResult, error) {
	tok, kind, fp, err := splitToken(req.Continuation)
	if err != nil {
		return QueryResult{}, err
	}
	if vs := vectorSourceFor(plan, src); vs != nil && kind == 0 {
		// A vector search: the items ranked by their stored vectors
		// (vectors.go). The plan is chosen the same way on every page.
		return e.runPage(ctx, plan, vs, src, req.MaxItemCount, tok, nil, nil)
	}
	if ts := textSourceFor(plan, src); ts != nil && kind == 0 {
		// A full-text ranking: the items ranked from the path's index
		// (textindex.go), chosen the same way on every page.
		return e.runPage(ctx, plan, ts, src, req.MaxItemCount, tok, nil, nil)
	}
	if fs := textFilterSourceFor(plan, src); fs != nil && kind == 0 {
		// A full-text filter: the items holding its terms, from the
		// path's index (textindex.go), chosen the same way on every page.
		return e.runPage(ctx, plan, fs, src, req.MaxItemCount, tok, nil, nil)
	}
	// try runs the page over an index source, if there is one; done is
	// false when the page is still to run.
	try := func(ix indexed, ixErr error, kind byte) (res QueryResult, done bool, err error) {
		if ixErr != nil {
			return QueryResult{}, true, ixErr
		}
		if ix == nil {
			if tok != nil {
				return QueryResult{}, true, errIndexContinuation
			}
			return QueryResult{}, false, nil
		}
		res, err = e.runPage(ctx, plan, ix, src, req.MaxItemCount, tok, index.TokenPrefix(kind, ix.Index().Fingerprint()), nil)
		switch {
		case errors.Is(err, index.ErrChanged) && tok != nil:
			return QueryResult{}, true, errIndexContinuation
		case errors.Is(err, index.ErrChanged):
			return QueryResult{}, false, nil // rebuilt between planning and reading: plan again
		}
		return res, true, err
	}
	if kind == index.OrderedToken || tok == nil {
		os, err := index.OrderedFor(ctx, src.indexQuery(), plan, fp)
		var ix indexed
		if os != nil {
			ix = os
		}
		if res, done, err := try(ix, err, index.OrderedToken); done {
			return res, err
		}
	}
	var potential []string
	if kind == index.FilterToken || tok == nil {
		var fs *index.Source
		fs, potential, err = index.SourceFor(ctx, src.indexQuery(), plan, fp)
		var ix indexed
		if fs != nil {
			ix = fs
		}
		if res, done, err := try(ix, err, index.FilterToken); done {
			return res, err
		}
	}
	return e.runPage(ctx, plan, src, src, req.MaxItemCount, tok, nil, potential)
}

// indexed is a query source that walks an index: an *index.Source or
// an *index.Ordered.
type indexed interface {
	query.Source
	Index() *index.Source
}

// errIndexContinuation refuses an index plan's continuation after the
// index it walked was rebuilt or dropped.
var errIndexContinuation = dberr.BadRequest("Invalid Continuation Token: the container's indexing policy changed since the query started. Start the query again without x-ms-continuation.")

// ReadFeed returns one page of a container's items.
func (e *Engine) ReadFeed(ctx context.Context, req QueryRequest) (QueryResult, error) {
	c, err := e.resolve(req.Ref)
	if err != nil {
		return QueryResult{}, err
	}
	// A feed returns the items as stored: no computed property.
	plan, err := readFeedPlan()
	if err != nil {
		return QueryResult{}, err
	}
	src, err := e.scope(ctx, req, c, false)
	if err != nil {
		return QueryResult{}, err
	}
	return e.page(ctx, plan, src, req)
}

// page runs one page of plan over a scan of src.
func (e *Engine) page(ctx context.Context, plan *query.Plan, src *docSource, req QueryRequest) (QueryResult, error) {
	tok, err := decodeToken(req.Continuation)
	if err != nil {
		return QueryResult{}, err
	}
	return e.runPage(ctx, plan, src, src, req.MaxItemCount, tok, nil, nil)
}

// decodeToken decodes an x-ms-continuation header ("" for none).
func decodeToken(cont string) ([]byte, error) {
	if cont == "" {
		return nil, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(cont)
	if err != nil {
		return nil, queryError(query.ErrBadContinuation)
	}
	return b, nil
}

// runPage runs one page of plan over src (ds, or an index source serving
// ds) from query token tok, at ds's instant, within the engine's page
// budget and until ctx is done; the next page's token is prefixed with
// tokPrefix. potential names the indexes the index metrics suggest.
func (e *Engine) runPage(ctx context.Context, plan *query.Plan, src query.Source, ds *docSource, maxItems int, tok, tokPrefix []byte, potential []string) (QueryResult, error) {
	c := ds.c
	page, err := plan.Page(ctx, src, query.PageRequest{
		MaxItemCount: maxItems,
		Continuation: tok,
		Env:          e.queryEnv(ds),
		Budget:       e.pageBudget,
	})
	if err != nil {
		return QueryResult{}, queryError(err)
	}
	res := QueryResult{Body: page.Body, RID: c.ridStr}
	if page.Next != nil {
		res.Continuation = base64.RawURLEncoding.EncodeToString(append(slices.Clip(tokPrefix), page.Next...))
	}
	st := page.Stats
	res.Charge = throughput.Query(int(st.RetrievedDocumentCount), int(st.RetrievedDocumentSize), int(st.OutputDocumentSize))
	var ix *index.Source
	if s, ok := src.(indexed); ok {
		ix = s.Index()
	}
	res.Metrics = queryMetrics(st, ix)
	switch {
	case ix != nil:
		res.IndexMetrics = index.Utilization(ix, nil)
	case len(potential) > 0:
		res.IndexMetrics = index.Utilization(nil, potential)
	default:
		res.IndexMetrics = indexMetrics
	}
	return res, nil
}

// queryMetrics renders x-ms-documentdb-query-metrics; every segment is
// key=value, as the JS SDK's parser requires. When an index served the
// page (ix non-nil), indexLookupTimeInMs and documentLoadTimeInMs are
// the time spent walking its entries and fetching their items, and
// indexUtilizationRatio the share of the documents loaded that yielded
// rows (1 when the index was exact for the filter).
func queryMetrics(st query.Stats, ix *index.Source) string {
	ms := float64(st.TotalExecutionTime.Microseconds()) / 1000
	var lookup, load, ratio float64
	if ix != nil {
		l, d := ix.Times()
		lookup = float64(l.Microseconds()) / 1000
		load = float64(d.Microseconds()) / 1000
		ratio = 1
		if st.RetrievedDocumentCount > 0 {
			ratio = min(1, float64(st.OutputDocumentCount)/float64(st.RetrievedDocumentCount))
		}
	}
	return fmt.Sprintf("totalExecutionTimeInMs=%.2f;queryCompileTimeInMs=0.00;queryLogicalPlanBuildTimeInMs=0.00;queryPhysicalPlanBuildTimeInMs=0.00;queryOptimizationTimeInMs=0.00;VMExecutionTimeInMs=%.2f;indexLookupTimeInMs=%.2f;documentLoadTimeInMs=%.2f;systemFunctionExecuteTimeInMs=0.00;userFunctionExecuteTimeInMs=0.00;retrievedDocumentCount=%d;retrievedDocumentSize=%d;outputDocumentCount=%d;outputDocumentSize=%d;writeOutputTimeInMs=0.00;indexUtilizationRatio=%.2f",
		ms, ms, lookup, load, st.RetrievedDocumentCount, st.RetrievedDocumentSize, st.OutputDocumentCount, st.OutputDocumentSize, ratio)
}

// indexMetrics is x-ms-cosmos-index-utilization of a page no index
// served.
var indexMetrics = index.Utilization(nil, nil)

// QueryPlan answers the JS SDK's query plan request with the query's
// PartitionedQueryExecutionInfo; hybrid says whether the SDK runs
// hybrid search (query.HybridSearch) itself.
func (e *Engine) QueryPlan(ctx context.Context, ref ItemRef, body []byte, hybrid bool) ([]byte, error) {
	c, err := e.resolve(ref)
	if err != nil {
		return nil, err
	}
	plan, err := e.compileQueryBody(body, c)
	if err != nil {
		return nil, err
	}
	if msg := plan.DistributionError(); msg != "" {
		return nil, dberr.BadRequest("%s", msg)
	}
	if info, ok := plan.HybridSearch(c.text.Covers); ok && hybrid {
		b, _ := json.Marshal(map[string]any{
			"partitionedQueryExecutionInfoVersion": 2,
			"hybridSearchQueryInfo":                info,
			"queryRanges":                          wholeRange,
		})
		return b, nil
	}
	return queryPlanJSON(plan), nil
}

// catalogSource serves catalog resources (databases, containers, offers)
// to the query executor, keyed by their position.
type catalogSource [][]byte

func (s catalogSource) Scan(after []byte, yield func(key, doc []byte) bool) error {
	start := 0
	if after != nil {
		n, _, err := keys.DecodeUint64(after)
		if err != nil {
			return query.ErrBadContinuation
		}
		start = int(n) + 1
	}
	for i := start; i < len(s); i++ {
		if !yield(keys.AppendUint64(nil, uint64(i)), s[i]) {
			break
		}
	}
	return nil
}

func (e *Engine) queryCatalog(ctx context.Context, rows [][]byte, body []byte) (QueryResult, error) {
	text, params, err := parseQueryBody(body)
	if err != nil {
		return QueryResult{}, err
	}
	plan, err := e.compile(text, params, nil)
	if err != nil {
		return QueryResult{}, err
	}
	page, err := plan.Page(ctx, catalogSource(rows), query.PageRequest{MaxItemCount: -1, Env: e.env(e.now()), Budget: e.pageBudget})
	if err != nil {
		return QueryResult{}, queryError(err)
	}
	if page.Next != nil {
		page.Body.Release()
		// A catalog query is answered in one page, without a
		// continuation: rather than drop the rest, say so.
		return QueryResult{}, &Error{Kind: KindRequestTimeout, Message: fmt.Sprintf("The query over databases, containers or offers did not fit in one page (the server's query page budget of %v, --query-page-budget, or %d MB of output), and such queries are answered in one page. Simplify the query.", e.pageBudget, query.UnboundedPageBytes>>20)}
	}
	return QueryResult{Body: page.Body, Charge: throughput.CatalogRead}, nil
}

// QueryDatabases runs a query over the databases.
func (e *Engine) QueryDatabases(ctx context.Context, body []byte) (QueryResult, error) {
	rows, _ := e.Databases(ctx)
	return e.queryCatalog(ctx, rows, body)
}

// QueryContainers runs a query over a database's containers.
func (e *Engine) QueryContainers(ctx context.Context, dbID string, body []byte) (QueryResult, error) {
	rows, rid, _, err := e.Containers(ctx, dbID)
	return e.queryResources(ctx, rows, rid, err, body)
}

// queryResources runs a query over the resources rows of a feed whose
// envelope's _rid is rid; err is the error of reading them.
func (e *Engine) queryResources(ctx context.Context, rows [][]byte, rid string, err error, body []byte) (QueryResult, error) {
	if err != nil {
		return QueryResult{}, err
	}
	res, err := e.queryCatalog(ctx, rows, body)
	res.RID = rid
	return res, err
}

// QueryOffers runs a query over the offers.
func (e *Engine) QueryOffers(ctx context.Context, body []byte) (QueryResult, error) {
	rows, _ := e.Offers(ctx)
	return e.queryCatalog(ctx, rows, body)
}
