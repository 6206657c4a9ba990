package query

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"
)

// offsetChunk bounds the heap used to skip OFFSET rows of an ORDER BY
// query: larger offsets are skipped in several passes over the source.
var offsetChunk = 1024 // a variable so tests can shrink it

// executor runs one page of a plan.
type executor struct {
	p     *Plan
	s     *SelectStmt
	c     *evalCtx
	stats Stats

	// body receives the output rows, each written once; outSize is the
	// size of the rows (without the commas between them).
	body    *Body
	outSize int64

	needDoc bool // documents must be parsed (not just copied)
	// wholeDoc: parse every document whole, even where the plan's
	// fields would do, because the rows keep the document as their value.
	wholeDoc bool
	// pp parses the documents of a streaming page, whose values do not
	// outlive their document; nil in the other modes, whose rows, sort
	// keys, groups and aggregates keep values across documents.
	pp *pageParser
	// row is the object a streaming page projects its rows into, one
	// after the other: each is encoded before the next is projected.
	row node
	// tieDesc: ORDER BY ties are broken by descending storage key.
	tieDesc bool
	err     error
	// budget is the page's, for the error that says it ran out.
	budget time.Duration

	// The reads of an OrderedSource on one page: from is where the first
	// starts (a continuation's cursor.from; nil: after the last row),
	// and haltKey is the document whose evaluation the meter halted, in
	// a later run than the read started in if haltMoved.
	from      []byte
	haltKey   []byte
	haltMoved bool
}

// haltError is the error of a page the meter halted before it had
// anything to return: the context's error, or a *BudgetError (allRows
// says the query must see every row before returning any).
func (ex *executor) haltError(allRows bool) error {
	if errors.Is(ex.c.m.halt, errBudget) {
		return &BudgetError{Budget: ex.budget, AllRows: allRows}
	}
	return ex.c.m.halt
}

// Page runs the plan for one page of results. See the package
// documentation for the paging rules of each kind of query, and for how
// the page's budget and ctx end it early. A page that ctx ends returns
// ctx's error.
func (p *Plan) Page(ctx context.Context, src Source, req PageRequest) (Page, error) {
	if req.Budget > 0 && req.Env.Elapsed == nil {
		return Page{}, errors.New("query: a page budget needs Env.Elapsed")
	}
	if err := ctx.Err(); err != nil {
		return Page{}, err
	}
	var t0 time.Duration
	if req.Env.Elapsed != nil {
		t0 = req.Env.Elapsed()
	}
	pageSize := req.MaxItemCount
	pageBytes := int64(math.MaxInt64)
	switch {
	case pageSize == -1 && p.mode == modeStream:
		pageSize, pageBytes = math.MaxInt, UnboundedPageBytes
	case pageSize == -1:
		pageSize = UnboundedMaxItemCount
	case pageSize <= 0:
		pageSize = DefaultMaxItemCount
	}
	cur, err := p.decodeCursor(req.Continuation)
	if err != nil {
		return Page{}, err
	}
	ex := &executor{p: p, s: p.q.stmt, c: newEvalCtx(p.q.nslots, p.params, req.Env), budget: req.Budget, body: newBody()}
	if p.readsCps {
		ex.c.cps, ex.c.cpVals = p.cps, make([]Value, p.cps.Len())
	}
	ex.c.m.start(ctx, req.Env.Elapsed, t0, req.Budget)
	ex.needDoc = !(ex.s.rawStar && ex.s.Where == nil)
	var next *cursor
	switch p.mode {
	case modeStream:
		next, err = ex.stream(src, cur, pageSize, pageBytes)
	case modeOrderBy:
		next, err = ex.orderBy(src, cur, pageSize)
	case modeFused:
		next, err = ex.fused(src, cur, pageSize)
	default:
		next, err = ex.materialized(src, cur, pageSize)
	}
	if err != nil {
		ex.body.Release()
		return Page{}, err
	}
	page := Page{Body: ex.body, Stats: ex.stats}
	if next != nil {
		page.Next = p.encodeCursor(next)
	}
	page.Stats.OutputDocumentCount = int64(ex.body.Len())
	page.Stats.OutputDocumentSize = ex.outSize
	if req.Env.Elapsed != nil {
		page.Stats.TotalExecutionTime = req.Env.Elapsed() - t0
	}
	return page, nil
}

func (ex *executor) emitRaw(b []byte) {
	ex.body.appendRaw(b)
	ex.outSize += int64(len(b))
}

func (ex *executor) emitValue(v Value) {
	ex.body.appendValue(v)
	ex.outSize += int64(len(ex.body.rows[len(ex.body.rows)-1]))
}

// bindDoc makes doc the current document. It reports false (and records
// the error) if the document is not valid JSON.
func (ex *executor) bindDoc(key, doc []byte) bool {
	ex.stats.RetrievedDocumentCount++
	ex.stats.RetrievedDocumentSize += int64(len(doc))
	if !ex.needDoc {
		return true
	}
	var v Value
	var err error
	if p := ex.p; ex.pp != nil {
		v, err = ex.pp.parse(doc, p.fields, p.wholeDoc)
	} else if p.wholeDoc || ex.wholeDoc {
		v, err = parseJSONString(string(doc))
	} else {
		v, err = parseDocFields(doc, p.fields)
	}
	if err != nil {
		ex.err = fmt.Errorf("query: stored document %q: %w", key, err)
		return false
	}
	ex.c.doc, ex.c.cpHave = v, 0
	return true
}

// projectRow computes the current row's output: raw document bytes for
// SELECT * over the document, else a value. ok is false for a SELECT VALUE
// whose value is undefined (no row).
func (ex *executor) projectRow() (v Value, ok bool) {
	if s := ex.s; ex.p.mode == modeStream && !s.Star && !s.Value {
		v = ex.c.projectInto(s, &ex.row)
	} else {
		v = ex.c.project(s)
	}
	return v, v.kind != Undefined
}

// forDocRows calls fn for each row of the current document (rows that pass
// WHERE). For a raw SELECT * without WHERE there is exactly one row and
// nothing is evaluated.
func (ex *executor) forDocRows(fn func() bool) {
	if !ex.needDoc {
		fn()
		return
	}
	ex.c.forEachRow(ex.s, 0, fn)
}

// stream runs a query whose rows come out in source order; a page ends
// after pageSize rows, once they make pageBytes of output, or when the
// meter halts it. A page that ends inside a document (its page filled up,
// or its budget ran out, in the middle of a JOIN) resumes at the
// FROM/JOIN combination where it stopped, which has not produced its row.
func (ex *executor) stream(src Source, cur *cursor, pageSize int, pageBytes int64) (*cursor, error) {
	p, c := ex.p, ex.c
	if p.max >= 0 && cur.emitted >= p.max {
		return nil, nil
	}
	skipLeft, emitted := cur.skipLeft, cur.emitted
	var after []byte
	if cur.hasAfter {
		after = cur.afterKey
	}
	// prevKey is the key of the last document fully consumed (where a
	// page that ends inside a document resumes from).
	prevKey, hasPrev := append([]byte(nil), after...), cur.hasAfter
	c.track, c.pos = ex.s, make([]int, len(ex.s.From))
	if ex.needDoc {
		ex.pp = new(pageParser)
	}
	var next *cursor
	done := false
	var doc []byte
	count := 0 // rows on this page
	// Per document: whether the page is full and, once it is, whether the
	// document has another row (more), at combination stopAt.
	var full, more bool
	var stopAt []int
	// Where the meter halted: in the document at haltKey, at combination
	// haltPos, if it halted inside one.
	var haltKey []byte
	var haltPos []int
	fn := func() bool {
		if full {
			more, stopAt = true, slices.Clone(c.pos)
			return false
		}
		var v Value
		if !ex.s.rawStar {
			var ok bool
			v, ok = ex.projectRow()
			if c.m.halted() {
				return false
			}
			if !ok {
				return true
			}
		}
		if skipLeft > 0 {
			skipLeft--
			return true
		}
		if ex.s.rawStar {
			ex.emitRaw(doc)
		} else {
			ex.emitValue(v)
		}
		count++
		emitted++
		if p.max >= 0 && emitted >= p.max {
			done = true
			return false
		}
		if count == pageSize || ex.outSize >= pageBytes {
			full = true
		}
		return true
	}
	err := src.Scan(after, func(key, d []byte) bool {
		if !c.m.spend(docCost(len(d))) || !ex.bindDoc(key, d) {
			return false
		}
		doc = d
		full, more = false, false
		c.resume = nil
		if cur.hasPartial && bytes.Equal(key, cur.partialKey) {
			c.resume = cur.partialPos
		}
		ex.forDocRows(fn)
		switch {
		case done:
			return false
		case full && more:
			next = &cursor{skipLeft: skipLeft, emitted: emitted, hasAfter: hasPrev, afterKey: prevKey,
				hasPartial: true, partialKey: append([]byte(nil), key...), partialPos: stopAt}
			return false
		case c.m.halted():
			haltKey, haltPos = append([]byte(nil), key...), c.resume
			if haltPos == nil {
				haltPos = slices.Clone(c.pos)
			}
			return false
		case full:
			next = &cursor{skipLeft: skipLeft, emitted: emitted, hasAfter: true, afterKey: append([]byte(nil), key...)}
			return false
		}
		prevKey, hasPrev = append(prevKey[:0], key...), true
		c.steps++
		return true
	})
	if ex.err != nil {
		return nil, ex.err
	}
	if err != nil {
		return nil, fmt.Errorf("query: scan: %w", err)
	}
	if c.m.halted() {
		// The page returns what it has if the budget ran out after some
		// progress; a page that made none would be asked for again and
		// again, and a client that went away needs no rows.
		if !errors.Is(c.m.halt, errBudget) || c.steps == 0 {
			return nil, ex.haltError(false)
		}
		next = &cursor{skipLeft: skipLeft, emitted: emitted, hasAfter: hasPrev, afterKey: prevKey}
		if slices.ContainsFunc(haltPos, func(i int) bool { return i != 0 }) {
			next.hasPartial, next.partialKey, next.partialPos = true, haltKey, haltPos
		}
	}
	return next, nil
}

// position orders the rows of an ORDER BY query totally: by sort keys,
// then storage key (descending when the first sort key is, or when an
// ordered source walks its keys backwards: tieDesc), then the row's
// index within its document.
type position struct {
	keys []Value
	key  []byte
	idx  int
}

func (ex *executor) cmpPos(a, b *position) int {
	if r := compareSortKeys(ex.s.OrderBy, a.keys, b.keys); r != 0 {
		return r
	}
	if r := bytes.Compare(a.key, b.key); r != 0 {
		if ex.tieDesc {
			return -r
		}
		return r
	}
	return cmpInt(a.idx, b.idx)
}

// topK keeps the k smallest entries seen, in a max-heap (largest on top).
type topK struct {
	k   int
	cmp func(a, b *heapEntry) int
	h   []*heapEntry
}

type heapEntry struct {
	pos position
	row []byte
}

// wants reports whether an entry at pos would be kept.
func (t *topK) wants(pos *position, cmp func(a, b *position) int) bool {
	return len(t.h) < t.k || cmp(pos, &t.h[0].pos) < 0
}

func (t *topK) push(e *heapEntry) {
	if len(t.h) < t.k {
		t.h = append(t.h, e)
		// sift up
		i := len(t.h) - 1
		for i > 0 {
			parent := (i - 1) / 2
			if t.cmp(t.h[i], t.h[parent]) <= 0 {
				break
			}
			t.h[i], t.h[parent] = t.h[parent], t.h[i]
			i = parent
		}
		return
	}
	t.h[0] = e
	// sift down
	i := 0
	for {
		l, r, big := 2*i+1, 2*i+2, i
		if l < len(t.h) && t.cmp(t.h[l], t.h[big]) > 0 {
			big = l
		}
		if r < len(t.h) && t.cmp(t.h[r], t.h[big]) > 0 {
			big = r
		}
		if big == i {
			return
		}
		t.h[i], t.h[big] = t.h[big], t.h[i]
		i = big
	}
}

// orderBy runs an ORDER BY query: each page reads an ordered source up to
// the rows it needs, or scans any other source once (more for large
// OFFSETs), keeping only the rows it needs in a bounded heap.
func (ex *executor) orderBy(src Source, cur *cursor, pageSize int) (*cursor, error) {
	p := ex.p
	need := pageSize
	if p.max >= 0 {
		if left := p.max - cur.emitted; left < need {
			need = left
		}
	}
	if need <= 0 {
		return nil, nil
	}
	last, hasLast := cur.last, cur.hasLast
	topK := ex.topKOf(src)
	if cur.from != nil {
		if _, ok := src.(OrderedSource); !ok {
			return nil, badToken("an ordered read's position for a source that is not ordered")
		}
		ex.from = cur.from
	}
	// Only an OrderedSource returns rows once the meter halts its read,
	// each of them final, and with every final row of the runs before
	// the one it halted in (fewer than it asked for, or it would have
	// stopped by itself). The next page takes up after the last of them
	// and reads on from the halted document's run (cursor.from).
	// Progress is a row, or a run read to its end.
	//
	// Skip OFFSET rows in passes of at most offsetChunk rows.
	for skip := cur.skipLeft; skip > 0; {
		k := min(skip, offsetChunk)
		h, err := topK(k, &last, hasLast, false)
		if err != nil {
			return nil, err
		}
		if ex.c.m.halted() {
			if len(h) > 0 {
				last, hasLast, skip = h[len(h)-1].pos, true, skip-len(h)
			}
			if !errors.Is(ex.c.m.halt, errBudget) || (skip == cur.skipLeft && !ex.haltMoved) {
				return nil, ex.haltError(true)
			}
			return &cursor{skipLeft: skip, emitted: cur.emitted, hasLast: hasLast, last: last, from: ex.haltKey}, nil
		}
		if len(h) < k {
			return nil, nil // fewer rows than the offset
		}
		last, hasLast = h[len(h)-1].pos, true
		skip -= k
	}
	h, err := topK(need+1, &last, hasLast, true)
	if err != nil {
		return nil, err
	}
	n := min(len(h), need)
	for _, e := range h[:n] {
		ex.emitRaw(e.row)
	}
	emitted := cur.emitted + n
	if ex.c.m.halted() {
		// This page skipped the offset, if it had one left.
		switch {
		case !errors.Is(ex.c.m.halt, errBudget) || (n == 0 && cur.skipLeft == 0 && !ex.haltMoved):
			return nil, ex.haltError(true)
		case p.max >= 0 && emitted >= p.max:
			return nil, nil
		case n > 0:
			last, hasLast = h[n-1].pos, true
		}
		return &cursor{emitted: emitted, hasLast: hasLast, last: last, from: ex.haltKey}, nil
	}
	if len(h) <= need || (p.max >= 0 && emitted >= p.max) {
		return nil, nil
	}
	return &cursor{emitted: emitted, hasLast: true, last: h[n-1].pos}, nil
}

// topKFunc returns the k smallest rows strictly after last (if hasLast),
// in order; with project, each row carries its output bytes.
type topKFunc func(k int, last *position, hasLast bool, project bool) ([]*heapEntry, error)

// topKOf returns how src finds the next rows: by reading it in order when
// it is an OrderedSource, else by scanning it whole.
func (ex *executor) topKOf(src Source) topKFunc {
	ex.needDoc = true // ORDER BY evaluates keys even for SELECT *
	ex.tieDesc = ex.s.OrderBy[0].Desc
	if os, ok := src.(OrderedSource); ok {
		ex.tieDesc = os.Descending()
		return func(k int, last *position, hasLast bool, project bool) ([]*heapEntry, error) {
			return ex.orderedTopK(os, k, last, hasLast, project)
		}
	}
	return func(k int, last *position, hasLast bool, project bool) ([]*heapEntry, error) {
		return ex.scanTopK(src, k, last, hasLast, project)
	}
}

// rowSorter turns the rows of documents into positioned heap entries:
// bind evaluates the rows of one document and hands each row after last
// that wants accepts to add.
type rowSorter struct {
	ex      *executor
	last    *position
	hasLast bool
	project bool
	wants   func(*position) bool
	add     func(*heapEntry)

	key, doc []byte
	rowIdx   int
	pos      position
	scratch  []byte
}

func (ex *executor) newRowSorter(last *position, hasLast, project bool) *rowSorter {
	return &rowSorter{ex: ex, last: last, hasLast: hasLast, project: project,
		pos: position{keys: make([]Value, len(ex.s.OrderBy))}}
}

// bind evaluates the rows of one document; false means the document is
// not valid JSON (ex.err says why) or the meter halted.
func (rs *rowSorter) bind(key, doc []byte) bool {
	if !rs.ex.c.m.spend(docCost(len(doc))) || !rs.ex.bindDoc(key, doc) {
		return false
	}
	rs.key, rs.doc, rs.rowIdx = key, doc, 0
	return rs.ex.c.forEachRow(rs.ex.s, 0, rs.row)
}

func (rs *rowSorter) row() bool {
	ex := rs.ex
	idx := rs.rowIdx
	rs.rowIdx++
	for i, o := range ex.s.OrderBy {
		rs.pos.keys[i] = ex.c.eval(o.Expr)
	}
	if ex.c.m.halted() {
		return false
	}
	rs.pos.key, rs.pos.idx = rs.key, idx
	if rs.hasLast && ex.cmpPos(&rs.pos, rs.last) <= 0 {
		return true
	}
	if !rs.wants(&rs.pos) {
		return true
	}
	e := &heapEntry{pos: position{keys: slices.Clone(rs.pos.keys), key: append([]byte(nil), rs.key...), idx: idx}}
	if ex.s.rawStar {
		if rs.project {
			e.row = append([]byte(nil), rs.doc...)
		}
	} else {
		v, ok := ex.projectRow()
		if ex.c.m.halted() {
			return false
		}
		if !ok {
			return true // SELECT VALUE undefined: not a row at all
		}
		if rs.project {
			rs.scratch = v.AppendJSON(rs.scratch[:0])
			e.row = append([]byte(nil), rs.scratch...)
		}
	}
	rs.add(e)
	return true
}

// scanTopK scans the whole source and returns, in order, the k smallest
// rows strictly after last (if hasLast).
func (ex *executor) scanTopK(src Source, k int, last *position, hasLast bool, project bool) ([]*heapEntry, error) {
	t := &topK{k: k, cmp: func(a, b *heapEntry) int { return ex.cmpPos(&a.pos, &b.pos) }}
	rs := ex.newRowSorter(last, hasLast, project)
	rs.wants = func(pos *position) bool { return t.wants(pos, ex.cmpPos) }
	rs.add = t.push
	err := src.Scan(nil, func(k, d []byte) bool { return rs.bind(k, d) })
	if ex.err != nil {
		return nil, ex.err
	}
	if err != nil {
		return nil, fmt.Errorf("query: scan: %w", err)
	}
	if ex.c.m.halted() {
		// No row is final before the scan has seen them all.
		return nil, ex.haltError(true)
	}
	slices.SortFunc(t.h, t.cmp)
	return t.h, nil
}

// orderedTopK returns, in order, the k smallest rows strictly after last
// (if hasLast), reading src in its order only until it has them: the
// rows of a sorted run are final as they come; those of an unsorted run
// go through a heap of at most k entries, final when the run ends.
func (ex *executor) orderedTopK(src OrderedSource, k int, last *position, hasLast bool, project bool) ([]*heapEntry, error) {
	out := make([]*heapEntry, 0, min(k, 1024))
	t := &topK{cmp: func(a, b *heapEntry) int { return ex.cmpPos(&a.pos, &b.pos) }}
	// endRun moves the rows of the run just read to out.
	endRun := func() {
		slices.SortFunc(t.h, t.cmp)
		out = append(out, t.h[:min(len(t.h), k-len(out))]...)
		t.h = t.h[:0]
	}
	var run []byte
	started, sorted := false, false
	rs := ex.newRowSorter(last, hasLast, project)
	rs.wants = func(pos *position) bool {
		if sorted {
			return len(out) < k
		}
		return t.wants(pos, ex.cmpPos)
	}
	rs.add = func(e *heapEntry) {
		if sorted {
			out = append(out, e)
		} else {
			t.push(e)
		}
	}
	var after []byte
	if hasLast {
		after = last.key
	}
	if ex.from != nil {
		after, ex.from = ex.from, nil
	}
	var firstRun []byte
	err := src.ScanOrdered(after, func(r []byte, s bool, key, doc []byte) bool {
		if !started || !bytes.Equal(r, run) {
			endRun()
			if len(out) >= k {
				return false
			}
			if !started {
				firstRun = append([]byte(nil), r...)
			}
			started, sorted = true, s
			run = append(run[:0], r...)
			t.k = k - len(out)
		}
		if !rs.bind(key, doc) {
			if ex.c.m.halted() {
				ex.haltKey, ex.haltMoved = append([]byte(nil), key...), !bytes.Equal(r, firstRun)
			}
			return false
		}
		return len(out) < k
	})
	if ex.err != nil {
		return nil, ex.err
	}
	if err != nil {
		return nil, fmt.Errorf("query: scan: %w", err)
	}
	if ex.c.m.halted() {
		// The rows of the run under way are final only in a sorted run,
		// where they are in out already; those in the heap are not.
		return out, nil
	}
	endRun()
	return out, nil
}

// scanAllRows calls row for every row of every document of src, with
// the document's storage key. No part of a result built so is known
// before every row has been seen: a halt is an error.
func (ex *executor) scanAllRows(src Source, row func(key []byte) bool) error {
	ex.needDoc = true
	err := src.Scan(nil, func(key, d []byte) bool {
		if !ex.c.m.spend(docCost(len(d))) || !ex.bindDoc(key, d) {
			return false
		}
		return ex.c.forEachRow(ex.s, 0, func() bool { return row(key) })
	})
	switch {
	case ex.err != nil:
		return ex.err
	case err != nil:
		return fmt.Errorf("query: scan: %w", err)
	case ex.c.m.halted():
		return ex.haltError(true)
	}
	return nil
}

// materialized computes the whole result (aggregates, GROUP BY, DISTINCT,
// queries without FROM) and returns the page at the cursor's offset.
func (ex *executor) materialized(src Source, cur *cursor, pageSize int) (*cursor, error) {
	s := ex.s
	col := newCollector(s)
	add := func() bool { col.add(ex.c); return true }
	if ex.p.mode == modeNoFrom {
		ex.c.forEachRow(s, 0, add)
		if ex.c.m.halted() {
			return nil, ex.haltError(true)
		}
	} else if err := ex.scanAllRows(src, func([]byte) bool { return add() }); err != nil {
		return nil, err
	}
	rows := col.finish(ex.c)
	if ex.c.m.halted() {
		return nil, ex.haltError(true)
	}
	if dc := ex.p.q.dcount; dc != nil {
		rows = []Value{dc.result(rows)}
	}
	return ex.emitResult(rows, cur, pageSize), nil
}

// emitResult emits the page at the cursor's offset of a whole result,
// after its OFFSET and within its TOP or LIMIT, and returns the cursor of
// the next page (nil after the last).
func (ex *executor) emitResult(rows []Value, cur *cursor, pageSize int) *cursor {
	skip := min(ex.p.skip, len(rows))
	rows = rows[skip:]
	if ex.p.max >= 0 && len(rows) > ex.p.max {
		rows = rows[:ex.p.max]
	}
	start := min(cur.offset, len(rows))
	end := min(start+pageSize, len(rows))
	for _, v := range rows[start:end] {
		ex.emitValue(v)
	}
	if end < len(rows) {
		return &cursor{offset: end}
	}
	return nil
}
