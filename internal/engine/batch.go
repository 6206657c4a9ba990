package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/ebbdb/ebb/internal/engine/dberr"
	"github.com/ebbdb/ebb/internal/engine/document"
	"github.com/ebbdb/ebb/internal/engine/keyspace"
	"github.com/ebbdb/ebb/internal/engine/throughput"
)

// Transactional batch and bulk: POST …/docs with a JSON array of
// operations. Both run every operation in one storage transaction, with
// the very operations the single-item requests use (itemTx), so a batch
// validates, conditions, indexes and logs exactly as the requests it
// stands for would.
//
// A transactional batch (atomic) is all or nothing: the first operation
// that fails aborts the transaction and the others are reported as
// failed dependencies. A bulk request (not atomic) commits the
// operations that succeed; a failed operation writes nothing (every
// itemTx operation fails before its first write), and without
// continue-on-error the operations after the first failure are not run.

// MaxBatchOperations is the service's limit per batch or bulk request.
const MaxBatchOperations = 100

// BatchOpKind is a batch operation's operationType.
type BatchOpKind int

const (
	BatchCreate BatchOpKind = iota
	BatchUpsert
	BatchReplace
	BatchRead
	BatchDelete
	BatchPatch
)

var batchOpNames = []string{"Create", "Upsert", "Replace", "Read", "Delete", "Patch"}

func (k BatchOpKind) String() string { return batchOpNames[k] }

// writeKind is the document write a Create, Upsert or Replace makes.
func (k BatchOpKind) writeKind() WriteKind {
	switch k {
	case BatchCreate:
		return Create
	case BatchUpsert:
		return Upsert
	}
	return Replace
}

// BatchOptions are a batch request's headers.
type BatchOptions struct {
	// Atomic is x-ms-cosmos-batch-atomic: a transactional batch.
	Atomic bool
	// ContinueOnError is x-ms-cosmos-batch-continue-on-error (bulk only).
	ContinueOnError bool
	// RangeID is x-ms-documentdb-partitionkeyrangeid: the range a bulk
	// client grouped the operations by (the JS and .NET SDKs send it). A
	// range the container no longer has is 410 with substatus 1002, on
	// which the SDK reads the ranges again and regroups; the operations
	// of a live one run in the partitions of their own keys.
	RangeID string
}

// BatchOpResult is the outcome of one operation.
type BatchOpResult struct {
	Kind BatchOpKind
	// Err is why the operation failed; nil when it succeeded. A Read
	// whose ifNoneMatch matched has an error of KindNotModified, which
	// does not fail the batch.
	Err error
	// Skipped: the operation did not take effect because another one
	// failed (HTTP 424).
	Skipped bool
	// Created: a Create or Upsert made a new item.
	Created bool
	// Resource is the item (Body, ETag) and the operation's charge.
	Resource Resource
}

// BatchResult is the outcome of a batch.
type BatchResult struct {
	Ops []BatchOpResult
	// Failed: an operation failed (a transactional batch then committed
	// nothing).
	Failed  bool
	Session string
	Charge  float64
}

// batchOpJSON is one operation on the wire (Go's and JS's SDKs).
type batchOpJSON struct {
	OperationType string          `json:"operationType"`
	ID            *string         `json:"id"`
	ResourceBody  json.RawMessage `json:"resourceBody"`
	IfMatch       string          `json:"ifMatch"`
	IfNoneMatch   string          `json:"ifNoneMatch"`
	// PartitionKey is JS's: the JSON text of the key, e.g. "[\"p\"]".
	PartitionKey json.RawMessage `json:"partitionKey"`
}

// batchOpFields are the names encoding/json decodes a batchOpJSON by.
var batchOpFields = document.Fields(batchOpJSON{})

// batchOp is a parsed, validated operation.
type batchOp struct {
	kind                 BatchOpKind
	id                   string
	ifMatch, ifNoneMatch string
	pkEnc                []byte
	key                  []byte
	p                    prepared     // Create, Upsert, Replace
	patch                patchRequest // Patch
	// err is the operation's validation failure.
	err error
}

// errBatchAborted rolls back a transactional batch after a failure.
var errBatchAborted = errors.New("engine: batch aborted")

// ExecuteBatch runs a transactional batch or a bulk request on the
// container ref names. ref.PK is the batch's partition key header.
func (e *Engine) ExecuteBatch(ctx context.Context, ref ItemRef, body []byte, opts BatchOptions) (BatchResult, error) {
	return retrySplit(ctx, e, func() (BatchResult, error) { return e.executeBatch(ctx, ref, body, opts) })
}

// executeBatch is ExecuteBatch, run again by retrySplit when it finds its
// partition split.
func (e *Engine) executeBatch(ctx context.Context, ref ItemRef, body []byte, opts BatchOptions) (BatchResult, error) {
	c, err := e.resolve(ref)
	if err != nil {
		return BatchResult{}, err
	}
	if _, live := c.parsePartitionID(opts.RangeID); opts.RangeID != "" && !live {
		return BatchResult{}, c.errNoSuchRange(opts.RangeID)
	}
	ops, err := c.parseBatch(ref, body, opts.Atomic)
	if err != nil {
		return BatchResult{}, err
	}
	res := BatchResult{Ops: make([]BatchOpResult, len(ops))}
	if opts.Atomic {
		for i := range ops {
			if ops[i].err != nil {
				return res.abort(ops, i, ops[i].err), nil
			}
		}
	}
	// A transactional batch has one partition key, so one physical
	// partition. A bulk request's operations may fall in several (a
	// client's routing can be stale); it is then one transaction over
	// those partitions.
	opParts, parts, err := c.batchPartitions(ops)
	if err != nil {
		return BatchResult{}, err
	}
	failedAt := -1
	run := func(txOf func(i int) (*itemTx, error)) error {
		failedAt = -1
		var t *itemTx
		for i := range ops {
			r := &res.Ops[i]
			*r = BatchOpResult{Kind: ops[i].kind}
			if failedAt >= 0 && !opts.ContinueOnError {
				r.Skipped = true
				continue
			}
			err := ops[i].err
			if err == nil {
				if t, err = txOf(i); err != nil {
					return err
				}
				err = t.runBatchOp(&ops[i], r)
			}
			if err == nil || IsKind(err, KindNotModified) {
				r.Err = err
				continue
			}
			if !isClientError(err) {
				return err // storage failure: the whole request fails
			}
			r.Err, r.Resource = err, Resource{Charge: throughput.Error}
			if failedAt < 0 {
				failedAt = i
			}
			if opts.Atomic {
				return errBatchAborted
			}
		}
		if t != nil {
			res.Session = sessionToken(t.st.lsn)
		}
		return nil
	}
	if len(parts) <= 1 {
		keys := make([][]byte, 0, len(ops))
		for i := range ops {
			if ops[i].key != nil {
				keys = append(keys, ops[i].key)
			}
		}
		// With no operation to run (each failed before it had a key),
		// the transaction only reads the session token: any live
		// partition's will do.
		p := c.layout.live[0].id
		if len(parts) == 1 {
			p = parts[0]
		}
		err = e.updateItemsAt(ctx, c, p, e.now(), keys, func(t *itemTx) error {
			err := run(func(int) (*itemTx, error) { return t, nil })
			if res.Session == "" {
				res.Session = sessionToken(t.st.lsn)
			}
			return err
		})
	} else {
		err = e.updateItemsIn(ctx, c, e.now(), parts, func(txFor func(p int) (*itemTx, error)) error {
			return run(func(i int) (*itemTx, error) { return txFor(opParts[i]) })
		})
	}
	if errors.Is(err, errBatchAborted) {
		return res.abort(ops, failedAt, res.Ops[failedAt].Err), nil
	}
	if err != nil {
		return BatchResult{}, err
	}
	for _, r := range res.Ops {
		res.Charge += r.Resource.Charge
		if r.Skipped || (r.Err != nil && !IsKind(r.Err, KindNotModified)) {
			res.Failed = true
		}
	}
	return res, nil
}

// batchPartitions returns the physical partition of each operation with
// a key, and the partitions they fall in, in order of first appearance.
func (c *container) batchPartitions(ops []batchOp) (opParts, parts []int, err error) {
	opParts = make([]int, len(ops))
	for i := range ops {
		if ops[i].key == nil {
			continue
		}
		if opParts[i], err = c.partitionOfKey(ops[i].key[docPrefixLen:]); err != nil {
			return nil, nil, err
		}
		if !slices.Contains(parts, opParts[i]) {
			parts = append(parts, opParts[i])
		}
	}
	return opParts, parts, nil
}

// abort reports a transactional batch that committed nothing: operation
// i failed with err, every other one is a failed dependency.
func (res BatchResult) abort(ops []batchOp, i int, err error) BatchResult {
	for j := range ops {
		res.Ops[j] = BatchOpResult{Kind: ops[j].kind, Skipped: true}
	}
	res.Ops[i] = BatchOpResult{Kind: ops[i].kind, Err: err, Resource: Resource{Charge: throughput.Error}}
	res.Failed, res.Charge, res.Session = true, throughput.Error, ""
	return res
}

// isClientError reports whether err is one the client caused (an
// operation's failure) rather than an internal one.
func isClientError(err error) bool {
	var ee *Error
	return errors.As(err, &ee)
}

// runBatchOp runs one operation in the batch's transaction and fills r.
func (t *itemTx) runBatchOp(op *batchOp, r *BatchOpResult) error {
	switch op.kind {
	case BatchCreate, BatchUpsert, BatchReplace:
		w, err := t.write(op.kind.writeKind(), op.key, op.p, op.ifMatch)
		if err != nil {
			return err
		}
		r.Created, r.Resource = w.created, Resource{Body: w.doc, ETag: itemEtag(w.hdr.LSN), Charge: throughput.Write(len(w.doc))}
	case BatchPatch:
		w, err := t.patch(op.key, op.patch, op.ifMatch)
		if err != nil {
			return err
		}
		r.Resource = Resource{Body: w.doc, ETag: itemEtag(w.hdr.LSN), Charge: throughput.Write(len(w.doc))}
	case BatchRead:
		it, err := t.items.read(op.key, op.ifNoneMatch)
		r.Resource = Resource{ETag: itemEtag(it.h.LSN), Charge: throughput.Read(len(it.doc))}
		if err != nil {
			return err
		}
		// The result outlives the transaction, which owns what it read.
		r.Resource.Body = bytes.Clone(it.doc)
	case BatchDelete:
		n, err := t.delete(op.key, op.pkEnc, op.id, op.ifMatch)
		if err != nil {
			return err
		}
		r.Resource = Resource{Charge: throughput.Write(n)}
	}
	return nil
}

// parseBatch reads and validates a batch body. Problems with the request
// as a whole (its shape, an unknown operation, a missing id, partition
// keys that differ in a transactional batch) fail it with 400; problems
// with one operation's item (its size, ttl, patch) are that operation's
// failure, in op.err.
func (c *container) parseBatch(ref ItemRef, body []byte, atomic bool) ([]batchOp, error) {
	var in []batchOpJSON
	if err := json.Unmarshal(body, &in); err != nil {
		if !json.Valid(body) {
			return nil, dberr.BadRequest("The batch body is not valid JSON. %s", document.JSONErrorDetail(body))
		}
		return nil, dberr.BadRequest("The batch body must be a JSON array of operations such as [{\"operationType\": \"Create\", \"resourceBody\": {…}}]: %v.", err)
	}
	// An operation that names a field twice would be decoded by its last
	// occurrence; refuse it instead (the resource bodies get the
	// document's own checks in prepare).
	if err := document.CheckFieldsOfEach(body, 0, batchOpFields); err != nil {
		return nil, err
	}
	switch {
	case len(in) == 0:
		return nil, dberr.BadRequest("The batch has no operations.")
	case len(in) > MaxBatchOperations:
		return nil, dberr.BadRequest("The batch has %d operations; at most %d are allowed in one request.", len(in), MaxBatchOperations)
	}
	var batchPK document.PartitionKey
	if atomic {
		var err error
		if batchPK, err = c.pkFromRequest(ref); err != nil {
			return nil, err
		}
	}
	ops := make([]batchOp, len(in))
	for i, o := range in {
		op, err := c.parseBatchOp(i, o, batchPK)
		if err != nil {
			return nil, err
		}
		ops[i] = op
	}
	return ops, nil
}

// parseBatchOp validates operation i. batchPK is a transactional batch's
// partition key (nil for bulk, whose operations each carry their own).
func (c *container) parseBatchOp(i int, o batchOpJSON, batchPK document.PartitionKey) (batchOp, error) {
	var op batchOp
	kind, ok := -1, false
	for k, name := range batchOpNames {
		if strings.EqualFold(o.OperationType, name) {
			kind, ok = k, true
		}
	}
	if !ok {
		return op, dberr.BadRequest("Batch operation %d: the operationType '%s' is not one of Create, Upsert, Replace, Read, Delete, Patch.", i+1, o.OperationType)
	}
	op.kind, op.ifMatch, op.ifNoneMatch = BatchOpKind(kind), o.IfMatch, o.IfNoneMatch
	hasBody := o.ResourceBody != nil && string(o.ResourceBody) != "null"
	switch op.kind {
	case BatchCreate, BatchUpsert, BatchReplace, BatchPatch:
		if !hasBody {
			return op, dberr.BadRequest("Batch operation %d (%s) has no resourceBody.", i+1, op.kind)
		}
	}
	if o.ID != nil {
		op.id = *o.ID
	}
	if op.id == "" && op.kind != BatchCreate && op.kind != BatchUpsert {
		return op, dberr.BadRequest("Batch operation %d (%s) has no id.", i+1, op.kind)
	}
	pk, err := c.batchOpPK(i, o.PartitionKey, batchPK)
	if err != nil {
		return op, err
	}
	switch op.kind {
	case BatchCreate, BatchUpsert, BatchReplace:
		hdr := pk
		if batchPK != nil {
			hdr = nil // compared below: a mismatch fails the whole batch
		}
		if op.p, op.err = c.prepareWrite(op.kind.writeKind(), o.ResourceBody, op.id, hdr); op.err != nil {
			return op, nil
		}
		if batchPK != nil && !batchPK.Equal(op.p.pk) {
			return op, dberr.BadRequest("%s Operation %d (%s): the document's partition key is %s, the request's %s.", errOtherPK, i+1, op.kind, op.p.pk.AppendJSON(nil), batchPK.AppendJSON(nil))
		}
		op.id, op.pkEnc = op.p.id, op.p.pkEnc
	case BatchPatch:
		op.patch, op.err = c.parsePatchRequest(o.ResourceBody)
		fallthrough
	default:
		if pk == nil {
			pk = c.nonePK()
		}
		op.pkEnc = pk.Encode(nil)
	}
	op.key = keyspace.DocKey(c.rid, op.pkEnc, op.id)
	return op, nil
}

// batchOpPK resolves an operation's partition key: its own (raw, JS's
// JSON text of the key) or the batch's. It returns nil when neither
// names one (a bulk write then takes the document's).
func (c *container) batchOpPK(i int, raw json.RawMessage, batchPK document.PartitionKey) (document.PartitionKey, error) {
	if raw == nil || string(raw) == "null" {
		return batchPK, nil
	}
	text := string(raw)
	if raw[0] == '"' {
		if err := json.Unmarshal(raw, &text); err != nil {
			return nil, dberr.BadRequest("Batch operation %d: the partitionKey is invalid: %v.", i+1, err)
		}
	}
	pk, err := c.pkFromRequest(ItemRef{PK: text, HasPK: true})
	if err != nil {
		return nil, err
	}
	if batchPK != nil && !batchPK.Equal(pk) {
		return nil, dberr.BadRequest("%s Operation %d: its partition key is %s, the request's %s.", errOtherPK, i+1, pk.AppendJSON(nil), batchPK.AppendJSON(nil))
	}
	return pk, nil
}

// errOtherPK begins the message of a transactional batch whose operation
// has another partition key than the request: the service's words (400),
// which the JS SDK's tests look for (azure-sdk-for-js, sdk/cosmosdb/cosmos/
// test/public/functional/item/batch.item.spec.ts).
const errOtherPK = "One or more operations within the batch request have a different partition key value than the request."

// nonePK is the key of an item that lacks every partition key path,
// what JS's bulk sends for a Read, Delete or Patch without a key.
func (c *container) nonePK() document.PartitionKey {
	pk := make(document.PartitionKey, len(c.pk.Paths))
	for i := range pk {
		pk[i] = document.PKComponent{Kind: document.PKNone}
	}
	return pk
}
