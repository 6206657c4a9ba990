package engine

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/ebbdb/ebb/internal/engine/dberr"
	"github.com/ebbdb/ebb/internal/engine/document"
	"github.com/ebbdb/ebb/internal/engine/index"
	"github.com/ebbdb/ebb/internal/engine/keyspace"
	"github.com/ebbdb/ebb/internal/engine/resource"
	"github.com/ebbdb/ebb/internal/engine/throughput"
	"github.com/ebbdb/ebb/internal/keys"
	"github.com/ebbdb/ebb/internal/query"
	"github.com/ebbdb/ebb/internal/script"
	"github.com/ebbdb/ebb/internal/storage"
	"github.com/ebbdb/ebb/internal/storage/buffered"
)

// A stored procedure runs in one transaction over one logical partition:
// what it writes commits together when it returns and not at all when
// it throws. It does not hold the store's write lock while it runs (it
// may run for seconds): it reads a snapshot and buffers its writes
// (package buffered), then commits them in one short Update if nothing
// it could have read has changed meanwhile — the container's state,
// which every item write changes, its index state, its catalog entry
// and any partition delete. If something has, it runs again on a new
// snapshot; after maxOptimisticRuns such runs it runs inside the Update,
// so a procedure on a busy container still finishes — unless it takes
// too long to hold up other writes and the purger for: then it stays on
// snapshots until its time budget is spent, and answers 408.

// maxOptimisticRuns is how many times a stored procedure runs on a
// snapshot before it runs holding the write transaction; it does only if
// its last run took less than maxLockedRun, which bounds how long it can
// hold up other writes and the purger.
const (
	maxOptimisticRuns = 3
	maxLockedRun      = 50 * time.Millisecond
)

// maxCollectionSizeMB is the collection quota scripts are told
// (maxCollectionSizeInMB), the one a container read reports.
const maxCollectionSizeMB = 51200

// ProcedureCall is a stored procedure's execution request. Ref.ID is
// the procedure's id; Ref.PK the partition key it runs in.
type ProcedureCall struct {
	Ref ItemRef
	// Args is the request body: a JSON array of the arguments.
	Args []byte
}

// ProcedureResult is what a stored procedure returned.
type ProcedureResult struct {
	// Body is the response body the procedure set, as JSON; "" (a JSON
	// string) when it set none, as the service answers.
	Body []byte
	// Log is what it wrote with console.log.
	Log     string
	Charge  float64
	Session string
}

// errStale is a snapshot run whose reads changed before it could commit.
var errStale = errors.New("engine: stored procedure snapshot is stale")

// ExecuteStoredProcedure runs a stored procedure in the logical
// partition call.Ref.PK names.
func (e *Engine) ExecuteStoredProcedure(ctx context.Context, call ProcedureCall) (ProcedureResult, error) {
	return retrySplit(ctx, e, func() (ProcedureResult, error) { return e.executeStoredProcedure(ctx, call) })
}

// executeStoredProcedure is ExecuteStoredProcedure, run again by retrySplit when it finds its
// partition split.
func (e *Engine) executeStoredProcedure(ctx context.Context, call ProcedureCall) (ProcedureResult, error) {
	c, err := e.resolve(call.Ref)
	if err != nil {
		return ProcedureResult{}, err
	}
	raw, err := e.store.Get(ctx, keyspace.ScriptKey(c.rid, byte(StoredProcedure), call.Ref.ID))
	if errors.Is(err, storage.ErrNotFound) {
		return ProcedureResult{}, dberr.NotFound("Resource Not Found. The stored procedure '%s' does not exist.", call.Ref.ID)
	}
	if err != nil {
		return ProcedureResult{}, err
	}
	pk, err := c.pkFromRequest(call.Ref)
	if err != nil {
		return ProcedureResult{}, err
	}
	args, err := procedureArgs(call.Args)
	if err != nil {
		return ProcedureResult{}, err
	}
	ms, err := document.ObjectBody(raw)
	if err != nil {
		return ProcedureResult{}, err
	}
	sc := script.Call{
		Kind: StoredProcedure.what(), ID: call.Ref.ID, Args: args, Scope: c.ridStr,
		Source:  document.Unquote(document.Lookup(ms, "body")),
		Version: document.Unquote(document.Lookup(ms, "_etag")),
	}
	var out script.Result
	t, coll, err := e.scriptTx(ctx, c, pk, func(t *itemTx, coll *scriptCollection) error {
		sc.Collection = coll
		var err error
		out, err = e.scripts.Run(ctx.Done(), sc)
		return scriptError(err)
	})
	if err != nil {
		return ProcedureResult{}, err
	}
	if out.Body == nil {
		out.Body = []byte(`""`) // what the service answers when none was set
	}
	return ProcedureResult{Body: out.Body, Log: out.Log, Charge: max(coll.charge, 1), Session: sessionToken(t.st.lsn)}, nil
}

// procedureArgs checks a procedure's request body: a JSON array, or
// nothing for no arguments.
func procedureArgs(body []byte) ([]byte, error) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return []byte("[]"), nil
	}
	if body[0] != '[' || !json.Valid(body) {
		return nil, dberr.BadRequest("The stored procedure's arguments must be a JSON array; the request body is %s.", document.Truncate(body, 64))
	}
	return body, nil
}

// scriptTx runs fn in one transaction over the logical partition pk of
// c, with the collection a script run in it acts on, and commits what
// it wrote, as the comment at the top of this file describes. fn may run
// more than once, for no longer than the script time budget in all.
func (e *Engine) scriptTx(ctx context.Context, c *container, pk document.PartitionKey, fn func(t *itemTx, coll *scriptCollection) error) (*itemTx, *scriptCollection, error) {
	start := e.real.Elapsed()
	budget := e.scripts.Budgets().Time
	for run := 1; ; run++ {
		began := e.real.Elapsed()
		t, coll, err := e.scriptTxOnce(ctx, c, pk, fn, run > maxOptimisticRuns)
		if !errors.Is(err, errStale) {
			return t, coll, err
		}
		now := e.real.Elapsed()
		if now-start > budget {
			return nil, nil, &Error{Kind: KindRequestTimeout, Message: fmt.Sprintf("The script ran %d times within its time budget of %v, and each time another write to the container landed before it could commit; nothing it wrote was committed. Retry it, or make it shorter.", run, budget)}
		}
		if run == maxOptimisticRuns && now-began > maxLockedRun {
			run-- // too long to hold the transaction for: stay on snapshots
		}
	}
}

// scriptTxOnce is one run of scriptTx: on a snapshot, or inside the
// write transaction when locked.
func (e *Engine) scriptTxOnce(ctx context.Context, c *container, pk document.PartitionKey, fn func(t *itemTx, coll *scriptCollection) error, locked bool) (*itemTx, *scriptCollection, error) {
	at := e.now()
	pkEnc := pk.Encode(nil)
	part := c.partitionOf(pk)
	var t *itemTx
	var coll *scriptCollection
	run := func(w storage.Writer) error {
		w = index.WithPolicyMemo(w)
		st, err := readWritableState(w, c.rid, part)
		if err != nil {
			return err
		}
		t = newItemTx(w, c, st, at)
		coll = &scriptCollection{e: e, t: t, ctx: ctx, pk: pk, pkEnc: pkEnc}
		if err := fn(t, coll); err != nil {
			return err
		}
		if t.st.equal(st) {
			return nil
		}
		return w.Set(keyspace.PartitionStateKey(c.rid, part), t.st.encode())
	}
	var err error
	if locked {
		err = e.updatePartition(ctx, c, part, run)
	} else {
		err = e.runOnSnapshot(ctx, c, part, pkEnc, run)
	}
	if err != nil {
		return nil, nil, err
	}
	e.committed(c, part, t)
	return t, coll, nil
}

// runOnSnapshot runs fn on a snapshot with its writes buffered, then
// applies them if the keys that decide what fn read (snapshotGuards) are
// unchanged, or fails with errStale.
func (e *Engine) runOnSnapshot(ctx context.Context, c *container, part int, pkEnc []byte, fn func(storage.Writer) error) error {
	guards := snapshotGuards(c, part, pkEnc)
	seen := make([][]byte, len(guards))
	var buf *buffered.Writer
	err := e.store.View(ctx, func(r storage.Reader) error {
		for i, k := range guards {
			v, err := r.Get(k)
			if err != nil && !errors.Is(err, storage.ErrNotFound) {
				return err
			}
			seen[i] = v
		}
		buf = buffered.New(r)
		return fn(buf)
	})
	if err != nil || buf.Bytes() == 0 {
		return err
	}
	if e.afterSnapshotRun != nil {
		e.afterSnapshotRun()
	}
	return e.updatePartition(ctx, c, part, func(w storage.Writer) error {
		for i, k := range guards {
			v, err := w.Get(k)
			if err != nil && !errors.Is(err, storage.ErrNotFound) {
				return err
			}
			if !bytes.Equal(v, seen[i]) {
				return errStale
			}
		}
		return buf.Apply(w)
	})
}

// snapshotGuards are the keys whose values decide what a stored
// procedure in partition pkEnc of c reads and how its writes are made.
func snapshotGuards(c *container, part int, pkEnc []byte) [][]byte {
	return [][]byte{
		keyspace.PartitionStateKey(c.rid, part),
		keyspace.IndexStateKey(c.rid),
		keyspace.CatCollKey(c.dbRID, c.id),
		keyspace.PKDeleteKey(c.rid, pkEnc),
	}
}

// scriptError is a failed run as the client gets it.
func scriptError(err error) error {
	if err == nil {
		return nil
	}
	var se *script.Error
	if !errors.As(err, &se) {
		return err
	}
	kind, ok := dberr.KindOf(se.Status)
	if !ok {
		kind = KindBadRequest
	}
	return &Error{Kind: kind, SubStatus: se.SubStatus, Message: se.Message}
}

// scriptCollection is a script's collection: one logical partition of a
// container, in the run's transaction.
type scriptCollection struct {
	e      *Engine
	t      *itemTx
	ctx    context.Context
	pk     document.PartitionKey
	pkEnc  []byte
	charge float64
}

func (s *scriptCollection) SelfLink() string { return s.t.c.self }
func (s *scriptCollection) AltLink() string  { return "dbs/" + s.t.c.dbID + "/colls/" + s.t.c.id }
func (s *scriptCollection) SizeInMB() int    { return int(s.t.st.bytes >> 20) }
func (s *scriptCollection) MaxSizeInMB() int { return maxCollectionSizeMB }

// opError is an engine error as a script's callback sees it; any other
// error is not the script's and ends the run.
func opError(err error) error {
	var ee *Error
	if !errors.As(err, &ee) {
		return err
	}
	status, _ := ee.Kind.Status()
	return &script.OpError{Status: status, Message: ee.Message}
}

// checkCollectionLink refuses a link that does not name this collection.
func (s *scriptCollection) checkCollectionLink(link string) error {
	l := strings.Trim(link, "/")
	if l == strings.Trim(s.SelfLink(), "/") || l == s.AltLink() {
		return nil
	}
	return &script.OpError{Status: 400, Message: fmt.Sprintf("The collection link '%s' is not this collection's ('%s' or '%s'); a script acts on its own collection only.", link, s.AltLink(), s.SelfLink())}
}

// documentID resolves a document link — by name
// (dbs/db/colls/c/docs/id) or by _self (dbs/…/colls/…/docs/rid/) — to
// the document's id.
func (s *scriptCollection) documentID(link string) (string, error) {
	l := strings.Trim(link, "/")
	bad := &script.OpError{Status: 400, Message: fmt.Sprintf("The document link '%s' does not name a document of this collection: use its _self or %s/docs/{id}.", link, s.AltLink())}
	i := strings.LastIndex(l, "/docs/")
	if i < 0 {
		return "", bad
	}
	coll, last := l[:i], l[i+len("/docs/"):]
	if last == "" || strings.Contains(last, "/") {
		return "", bad
	}
	switch coll {
	case s.AltLink():
		if id, err := url.PathUnescape(last); err == nil {
			return id, nil
		}
		return last, nil
	case strings.Trim(s.SelfLink(), "/"):
		return s.idByRID(last)
	}
	return "", bad
}

// idByRID finds the id of the visible document whose _rid is rid in the
// partition: a scan of the partition, as items are keyed by id.
func (s *scriptCollection) idByRID(rid string) (string, error) {
	raw, err := resource.DecodeRID(rid, 16)
	if err != nil || !bytes.Equal(raw[:8], s.t.c.rid[:]) {
		return "", &script.OpError{Status: 400, Message: fmt.Sprintf("'%s' is not a document _rid of this collection.", rid)}
	}
	seq := binary.LittleEndian.Uint64(raw[8:])
	prefix := keyspace.CollPrefix(keyspace.Doc, s.t.c.rid)
	prefix = append(prefix, s.pkEnc...)
	// The scan of a large partition is bounded as the script is.
	budget := s.e.scripts.Budgets().Time
	m := s.e.workMeter(s.ctx, s.e.queryClock.Elapsed(), budget, fmt.Sprintf("Finding the document whose _rid is '%s' took the script's time budget of %v (--script-time-budget): it reads the partition's documents in turn. Address the document by id (%s/docs/{id}) instead.", rid, budget, s.AltLink()))
	var id string
	var stopped error
	err = s.t.items.scan(prefix, keys.PrefixEnd(prefix), false, func(_ []byte, it storedItem) bool {
		if stopped = m.step(); stopped != nil {
			return false
		}
		if it.h.Seq != seq {
			return true
		}
		if ms, ok := document.ObjectMembers(it.doc); ok {
			id = document.Unquote(document.Lookup(ms, "id"))
		}
		return false
	})
	if err == nil {
		err = opError(stopped)
	}
	if err != nil {
		return "", err
	}
	if id == "" {
		return "", opError(ErrNotFound)
	}
	return id, nil
}

// prepare validates a document a script writes as a client write is
// validated, in the run's partition; autoID gives one without an id a
// new one, as createDocument does unless told not to.
func (s *scriptCollection) prepare(kind WriteKind, doc []byte, id string, autoID bool) (prepared, error) {
	if autoID {
		if ms, ok := document.ObjectMembers(doc); ok && document.Lookup(ms, "id") == nil {
			doc = withID(doc, resource.NewUUID()) // a UUID needs no escaping
		}
	}
	return s.t.c.prepareWrite(kind, doc, id, s.pk)
}

// withID is the JSON object doc with an id member added first.
func withID(doc []byte, id string) []byte {
	rest := bytes.TrimSpace(doc)[1:]
	out := append([]byte(`{"id":"`), id...)
	out = append(out, '"')
	if len(bytes.TrimSpace(rest)) > 1 { // not "}"
		out = append(out, ',')
	}
	return append(out, rest...)
}

func (s *scriptCollection) write(kind WriteKind, doc []byte, id string, autoID bool, ifMatch string) ([]byte, error) {
	p, err := s.prepare(kind, doc, id, autoID)
	if err != nil {
		return nil, opError(err)
	}
	w, err := s.t.write(kind, keyspace.DocKey(s.t.c.rid, p.pkEnc, p.id), p, ifMatch)
	if err != nil {
		return nil, opError(err)
	}
	s.charge += throughput.Write(len(w.doc))
	return w.doc, nil
}

func (s *scriptCollection) Create(link string, doc []byte, autoID bool) ([]byte, error) {
	if err := s.checkCollectionLink(link); err != nil {
		return nil, err
	}
	return s.write(Create, doc, "", autoID, "")
}

func (s *scriptCollection) Upsert(link string, doc []byte, autoID bool, ifMatch string) ([]byte, error) {
	if err := s.checkCollectionLink(link); err != nil {
		return nil, err
	}
	return s.write(Upsert, doc, "", autoID, ifMatch)
}

func (s *scriptCollection) Replace(docLink string, doc []byte, ifMatch string) ([]byte, error) {
	id, err := s.documentID(docLink)
	if err != nil {
		return nil, err
	}
	return s.write(Replace, doc, id, false, ifMatch)
}

func (s *scriptCollection) Delete(docLink string, ifMatch string) error {
	id, err := s.documentID(docLink)
	if err != nil {
		return err
	}
	n, err := s.t.delete(keyspace.DocKey(s.t.c.rid, s.pkEnc, id), s.pkEnc, id, ifMatch)
	if err != nil {
		return opError(err)
	}
	s.charge += throughput.Write(n)
	return nil
}

func (s *scriptCollection) Read(docLink string, ifNoneMatch string) ([]byte, error) {
	id, err := s.documentID(docLink)
	if err != nil {
		return nil, err
	}
	it, err := s.t.items.read(keyspace.DocKey(s.t.c.rid, s.pkEnc, id), ifNoneMatch)
	s.charge += throughput.Read(len(it.doc))
	if err != nil {
		return nil, opError(err)
	}
	return bytes.Clone(it.doc), nil
}

// Query runs one page of a query (or, with q nil, of the read feed) over
// the run's partition, its own writes included.
func (s *scriptCollection) Query(link string, q []byte, pageSize int, continuation string) ([]byte, string, error) {
	if err := s.checkCollectionLink(link); err != nil {
		return nil, "", err
	}
	c := s.t.c
	src := &docSource{e: s.e, c: c, prefix: append(keyspace.CollPrefix(keyspace.Doc, c.rid), s.pkEnc...),
		at: s.t.at, ctx: s.ctx, start: s.e.queryClock.Elapsed(), store: pinnedStore{s.t.w}}
	req := QueryRequest{Body: q, MaxItemCount: pageSize, Continuation: continuation}
	var res QueryResult
	var err error
	if q == nil {
		plan, perr := readFeedPlan()
		if perr != nil {
			return nil, "", perr
		}
		res, err = s.e.page(s.ctx, plan, src, req)
	} else {
		var plan *query.Plan
		if plan, err = s.e.compileQueryBody(q, c); err == nil {
			res, err = s.e.pageItemsWithUDFs(s.ctx, plan, src, req)
		}
	}
	if err != nil {
		return nil, "", opError(err)
	}
	defer res.Body.Release()
	s.charge += res.Charge
	out := []byte{'['}
	for i, row := range res.Rows() {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, row...)
	}
	return append(out, ']'), res.Continuation, nil
}

// pinnedStore is a storage.Store that reads one Reader: the queries of
// a stored procedure read its transaction, its own writes included.
type pinnedStore struct{ r storage.Reader }

func (p pinnedStore) Get(_ context.Context, key []byte) ([]byte, error) { return p.r.Get(key) }
func (p pinnedStore) Lend(_ context.Context, key []byte, fn func([]byte) error) error {
	return p.r.Lend(key, fn)
}
func (p pinnedStore) View(_ context.Context, fn func(storage.Reader) error) error { return fn(p.r) }
func (p pinnedStore) Update(context.Context, func(storage.Writer) error) error {
	return errors.New("engine: a stored procedure's query cannot write")
}
func (p pinnedStore) UpdateLocked(ctx context.Context, _ [][]byte, fn func(storage.Writer) error) error {
	return p.Update(ctx, fn)
}
func (p pinnedStore) Close() error { return nil }
