package postgres

import (
	"bytes"
	"context"
	"errors"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ebbdb/ebb/internal/storage"
)

// Statements. Keys and values are never NULL: nil slices are sent as
// empty ones, because pgx encodes a nil []byte as NULL.
const (
	sqlGet         = `SELECT value FROM ebb_kv WHERE key = $1`
	sqlLock        = `SELECT key, value FROM ebb_kv WHERE key = ANY($1::bytea[]) ORDER BY key FOR UPDATE`
	sqlTouch       = `UPDATE ebb_kv SET value = value WHERE key = ANY($1::bytea[])`
	sqlGetMany     = `SELECT key, value FROM ebb_kv WHERE key = ANY($1::bytea[]) ORDER BY key`
	sqlScanAsc     = `SELECT key, value FROM ebb_kv WHERE key >= $1 AND key < $2 ORDER BY key LIMIT $3`
	sqlScanAscAll  = `SELECT key, value FROM ebb_kv WHERE key >= $1 ORDER BY key LIMIT $2`
	sqlScanDesc    = `SELECT key, value FROM ebb_kv WHERE key >= $1 AND key < $2 ORDER BY key DESC LIMIT $3`
	sqlScanDescAll = `SELECT key, value FROM ebb_kv WHERE key >= $1 ORDER BY key DESC LIMIT $2`
	sqlUpsertOne   = `INSERT INTO ebb_kv (key, value) VALUES ($1, $2)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`
	sqlUpsertMany = `INSERT INTO ebb_kv (key, value) SELECT * FROM unnest($1::bytea[], $2::bytea[])
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`
	sqlDeleteMany  = `DELETE FROM ebb_kv WHERE key = ANY($1::bytea[])`
	sqlDeleteRange = `DELETE FROM ebb_kv WHERE key >= $1 AND key < $2`
	// Planned once (preferGenericPlans), an unbounded delete is a
	// sequential scan, as PostgreSQL estimates a third of the table for
	// key >= $1; the engine's ranges are prefixes, always bounded, so
	// only the storage contract's tests send it.
	sqlDeleteRangeAll = `DELETE FROM ebb_kv WHERE key >= $1`
	sqlCommit         = `COMMIT`
)

// Scan page sizes: small first, so that a scan read for its first key
// fetches little, then larger for throughput on long ranges.
const (
	firstPage = 16
	maxPage   = 256
)

// txn is one attempt at a View or an Update: the storage.Reader or
// storage.Writer handed to fn. It is used by one goroutine.
type txn struct {
	s     *Store
	ctx   context.Context
	begin string // sent ahead of the first statement

	conn  *pgxpool.Conn // acquired for the first round trip
	begun bool          // BEGIN has been sent
	done  bool          // fn has returned; the txn may not be used again
	// err is the first error of a round trip. It is sticky: after it the
	// database has aborted the transaction, so every later call fails
	// with it and commit sends nothing.
	err error

	// The writes not yet sent, replayed in this order: range deletes,
	// then point deletes and sets.
	// INVARIANT: a key is in at most one of sets and dels, and no key in
	// sets or dels lies in a range of ranges that was added after it.
	sets   map[string][]byte
	dels   map[string]struct{}
	ranges []span
	wrote  bool // fn has written something

	// locks are the keys an UpdateLocked transaction holds, sorted; nil
	// in others. They are locked by the first round trip (lockPending
	// until then), which reads their values into locked.
	locks       [][]byte
	locked      map[string]*lockedKey
	lockPending bool
	touchLocks  bool // write back, as they are, the locks fn did not write

	// member is set when the transaction runs in a group (group.go),
	// which sends its statements on the group's connection.
	member *member
}

// lockedKey is what the lock statement read of one lock: its value
// (found: it existed), which a Get returns while current, that is until
// fn writes it (written).
type lockedKey struct {
	value                   []byte
	found, current, written bool
}

// noteWrite notes a write of keys in [start, end) (a nil end: just start):
// a write to a lock ends what the lock statement read of it.
func (t *txn) noteWrite(start, end []byte) {
	t.wrote = true
	for _, l := range t.locks {
		if end == nil && bytes.Equal(start, l) ||
			end != nil && bytes.Compare(l, start) >= 0 && (len(end) == 0 || bytes.Compare(l, end) < 0) {
			lk := t.lockedKey(l)
			lk.current, lk.written = false, true
		}
	}
}

func (t *txn) lockedKey(key []byte) *lockedKey {
	lk := t.locked[string(key)]
	if lk == nil {
		lk = &lockedKey{}
		t.locked[string(key)] = lk
	}
	return lk
}

// span is [start, end); a nil end is unbounded.
type span struct{ start, end []byte }

func (s *Store) newTxn(ctx context.Context, begin string) *txn {
	return &txn{s: s, ctx: ctx, begin: begin}
}

// Get implements storage.Reader.
func (t *txn) Get(key []byte) ([]byte, error) {
	if lk := t.locked[string(key)]; lk != nil && lk.current {
		if err := t.usable(); err != nil {
			return nil, err
		}
		if !lk.found {
			return nil, storage.ErrNotFound
		}
		return bytes.Clone(lk.value), nil
	}
	var value []byte
	found := false
	err := t.roundTrip(sqlGet, []any{nonNil(key)}, func(rows pgx.Rows) error {
		for rows.Next() {
			found = true
			if err := rows.Scan(&value); err != nil {
				return err
			}
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, storage.ErrNotFound
	}
	return nonNil(value), nil
}

// Lend implements storage.Reader as Get.
func (t *txn) Lend(key []byte, fn func(value []byte) error) error {
	v, err := t.Get(key)
	if err != nil {
		return err
	}
	return fn(v)
}

// GetMany implements storage.Reader in one round trip.
func (t *txn) GetMany(keys [][]byte, found func(i int, value []byte) error) error {
	if len(keys) == 0 {
		return nil
	}
	type row struct{ key, value []byte }
	var rows []row
	err := t.roundTrip(sqlGetMany, []any{keys}, func(rs pgx.Rows) error {
		for rs.Next() {
			var r row
			if err := rs.Scan(&r.key, &r.value); err != nil {
				return err
			}
			rows = append(rows, r)
		}
		return rs.Err()
	})
	if err != nil {
		return err
	}
	// Both lists are sorted: walk them together.
	i := 0
	for _, r := range rows {
		for i < len(keys) && bytes.Compare(keys[i], r.key) < 0 {
			i++
		}
		for ; i < len(keys) && bytes.Equal(keys[i], r.key); i++ {
			if err := found(i, nonNil(r.value)); err != nil {
				return err
			}
		}
	}
	return nil
}

// Scan implements storage.Reader.
func (t *txn) Scan(start, end []byte, reverse bool) storage.Iterator {
	it := &iterator{t: t, start: nonNil(start), end: end, reverse: reverse, limit: firstPage, pos: -1}
	if end != nil && bytes.Compare(start, end) >= 0 {
		it.last = true
	}
	return it
}

// Set implements storage.Writer.
func (t *txn) Set(key, value []byte) error {
	if err := t.usable(); err != nil {
		return err
	}
	if t.sets == nil {
		t.sets = make(map[string][]byte)
	}
	k := string(key)
	delete(t.dels, k)
	t.sets[k] = append([]byte{}, value...)
	t.noteWrite(key, nil)
	return nil
}

// Delete implements storage.Writer.
func (t *txn) Delete(key []byte) error {
	if err := t.usable(); err != nil {
		return err
	}
	if t.dels == nil {
		t.dels = make(map[string]struct{})
	}
	k := string(key)
	delete(t.sets, k)
	t.dels[k] = struct{}{}
	t.noteWrite(key, nil)
	return nil
}

// DeleteRange implements storage.Writer.
func (t *txn) DeleteRange(start, end []byte) error {
	if err := t.usable(); err != nil {
		return err
	}
	if end != nil && bytes.Compare(start, end) >= 0 {
		return nil
	}
	in := func(k string) bool {
		return k >= string(start) && (end == nil || k < string(end))
	}
	// Pending point writes inside the range are superseded by it.
	for k := range t.sets {
		if in(k) {
			delete(t.sets, k)
		}
	}
	for k := range t.dels {
		if in(k) {
			delete(t.dels, k)
		}
	}
	t.ranges = append(t.ranges, span{bytes.Clone(nonNil(start)), bytes.Clone(end)})
	if end == nil {
		end = []byte{} // unbounded, for noteWrite
	}
	t.noteWrite(start, end)
	return nil
}

func (t *txn) pending() bool {
	return len(t.sets) > 0 || len(t.dels) > 0 || len(t.ranges) > 0 || t.touchLocks
}

// usable fails calls on a transaction that is over or already failed.
func (t *txn) usable() error {
	if t.done {
		return errors.New("postgres: transaction used after its function returned")
	}
	return t.err
}

// roundTrip sends, in one pipelined batch, BEGIN if the transaction has not
// begun, the buffered writes, and query; read consumes query's rows. A
// member of a group hands them to the group instead, which sends them
// with the other members' (group.go).
func (t *txn) roundTrip(query string, args []any, read func(pgx.Rows) error) error {
	if err := t.usable(); err != nil {
		return err
	}
	var stmts []stmt
	if t.member == nil {
		stmts = t.opening()
	}
	stmts = t.takeWrites(stmts)
	stmts = append(stmts, stmt{sql: query, args: args, read: read})
	var err error
	if t.member != nil {
		err = t.member.step(stmts)
	} else {
		err = t.send(stmts)
	}
	if err != nil {
		t.err = t.s.wrap(t.ctx, opName(query), err)
		return t.err
	}
	return nil
}

// stmt is one statement of a pipelined batch and what to do with its
// result: read its rows, or, with no read, only check that it succeeded.
type stmt struct {
	sql  string
	args []any
	read func(pgx.Rows) error
}

// opening is what a transaction on its own sends ahead of its next
// round trip's writes and query: BEGIN and the lock statement, while
// they are still to be sent.
func (t *txn) opening() []stmt {
	var head []stmt
	if !t.begun {
		head = append(head, stmt{sql: t.begin})
		// From here on the server may hold a transaction open for this
		// connection, whatever the outcome of the batch.
		t.begun = true
	}
	if t.lockPending {
		// Ahead of the writes and the query, which then run holding it
		// and, at READ COMMITTED, read what the last holder committed.
		head = append(head, lockStmt(t.locks, func(read map[string][]byte) { t.applyLock(read) }))
		t.lockPending = false
	}
	return head
}

// send sends stmts on the transaction's own connection.
func (t *txn) send(stmts []stmt) (err error) {
	if t.conn == nil {
		if t.conn, err = t.s.pool.Acquire(t.ctx); err != nil {
			return err
		}
	}
	return runBatch(t.ctx, t.conn, stmts)
}

// runBatch sends stmts in one pipelined batch on conn and hands each its
// result, in order, up to the first that failed.
func runBatch(ctx context.Context, conn *pgxpool.Conn, stmts []stmt) (err error) {
	var b pgx.Batch
	for _, st := range stmts {
		b.Queue(st.sql, st.args...)
	}
	br := conn.SendBatch(ctx, &b)
	defer func() {
		if cerr := br.Close(); err == nil {
			err = cerr
		}
	}()
	for _, st := range stmts {
		if err := st.result(br); err != nil {
			return err
		}
	}
	return nil
}

func (st stmt) result(br pgx.BatchResults) error {
	if st.read == nil {
		tag, err := br.Exec()
		if err == nil && st.sql == sqlCommit && tag.String() != "COMMIT" {
			// The server rolled back instead (the transaction had failed).
			return errors.New("commit was rolled back")
		}
		return err
	}
	rows, err := br.Query()
	if err != nil {
		return err
	}
	defer rows.Close()
	if err := st.read(rows); err != nil {
		return err
	}
	rows.Close()
	return rows.Err()
}

// lockStmt is the lock statement for locks, sorted; got receives what it
// read of them, by key.
func lockStmt(locks [][]byte, got func(read map[string][]byte)) stmt {
	return stmt{sql: sqlLock, args: []any{locks}, read: func(rows pgx.Rows) error {
		read := make(map[string][]byte, len(locks))
		for rows.Next() {
			var key, value []byte
			if err := rows.Scan(&key, &value); err != nil {
				return err
			}
			read[string(key)] = nonNil(value)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		got(read)
		return nil
	}}
}

// applyLock takes in what the lock statement read of the transaction's
// locks.
func (t *txn) applyLock(read map[string][]byte) {
	for _, l := range t.locks {
		lk := t.lockedKey(l)
		if v, ok := read[string(l)]; ok {
			lk.value, lk.found = v, true
		}
		// A write of a lock queued before this round trip is applied
		// after the lock statement read it.
		lk.current = !lk.written
	}
}

// takeWrites appends the buffered writes to stmts and empties the
// buffer.
func (t *txn) takeWrites(stmts []stmt) []stmt {
	var w writeSet
	w.take(t)
	return w.stmts(stmts)
}

// writeSet is writes to send: one transaction's, or a group's together.
type writeSet struct {
	sets   map[string][]byte
	dels   map[string]struct{}
	ranges []span
	touch  [][]byte // locks to write back as they are
}

// take moves t's buffered writes, and the write-back of the locks it did
// not write when that is due, into w, which is empty.
func (w *writeSet) take(t *txn) {
	w.sets, w.dels, w.ranges = t.sets, t.dels, t.ranges
	if t.touchLocks {
		for _, l := range t.locks {
			if !t.lockedKey(l).written {
				w.touch = append(w.touch, l)
			}
		}
	}
	t.sets, t.dels, t.ranges, t.touchLocks = nil, nil, nil, false
}

// stmts appends the statements of w to stmts: range deletes, point
// deletes, sets, then the write-back of locks. Keys are sent sorted, so
// concurrent transactions lock rows in the same order and deadlock less.
func (w writeSet) stmts(stmts []stmt) []stmt {
	for _, r := range w.ranges {
		if r.end == nil {
			stmts = append(stmts, stmt{sql: sqlDeleteRangeAll, args: []any{r.start}})
		} else {
			stmts = append(stmts, stmt{sql: sqlDeleteRange, args: []any{r.start, r.end}})
		}
	}
	if len(w.dels) > 0 {
		keys := make([][]byte, 0, len(w.dels))
		for k := range w.dels {
			keys = append(keys, []byte(k))
		}
		slices.SortFunc(keys, bytes.Compare)
		stmts = append(stmts, stmt{sql: sqlDeleteMany, args: []any{keys}})
	}
	switch len(w.sets) {
	case 0:
	case 1:
		for k, v := range w.sets {
			stmts = append(stmts, stmt{sql: sqlUpsertOne, args: []any{[]byte(k), v}})
		}
	default:
		keys := make([][]byte, 0, len(w.sets))
		for k := range w.sets {
			keys = append(keys, []byte(k))
		}
		slices.SortFunc(keys, bytes.Compare)
		values := make([][]byte, len(keys))
		for i, k := range keys {
			values[i] = w.sets[string(k)]
		}
		stmts = append(stmts, stmt{sql: sqlUpsertMany, args: []any{keys, values}})
	}
	if len(w.touch) > 0 {
		stmts = append(stmts, stmt{sql: sqlTouch, args: []any{w.touch}})
	}
	return stmts
}

// commit ends a transaction whose fn succeeded: nothing at all if nothing
// was read or written, otherwise COMMIT behind any buffered writes.
func (t *txn) commit() error {
	if err := t.usable(); err != nil {
		return err
	}
	if !t.begun && !t.pending() {
		return nil
	}
	t.writeBackLocks()
	return t.roundTrip(sqlCommit, nil, nil)
}

// writeBackLocks marks, as a transaction that wrote anything ends, its
// locks to be written back. Writing lock back makes an Update that read
// the domain before this transaction took the lock conflict with it (its
// write of lock finds a newer version), even when fn wrote only other
// keys of the domain.
func (t *txn) writeBackLocks() {
	if t.wrote && t.locks != nil {
		t.touchLocks = true
	}
}

// result is what View or Update returns once fn (and commit) are done:
// the round-trip error if there was one and fn did not report an error of
// its own, or if it is a conflict worth retrying; otherwise fn's error.
func (t *txn) result(err error) error {
	if t.err != nil && (err == nil || retryable(t.err)) {
		return t.err
	}
	return err
}

// finish releases the connection, rolling back whatever is still open.
func (t *txn) finish() {
	t.done = true
	if t.conn == nil {
		return
	}
	if t.conn.Conn().PgConn().TxStatus() != 'I' {
		// On failure pgx closes the connection, and the pool drops it.
		_, _ = t.conn.Exec(t.ctx, "ROLLBACK")
	}
	t.conn.Release()
	t.conn = nil
}

func opName(query string) string {
	switch query {
	case sqlGet:
		return "get"
	case sqlLock:
		return "lock"
	case sqlCommit:
		return "commit"
	default:
		return "scan"
	}
}

// nonNil turns nil into an empty slice, which pgx sends as an empty bytea
// rather than NULL.
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// iterator is a keyset-paged Scan.
type iterator struct {
	t       *txn
	reverse bool
	// start and end bound what is left to fetch: after a page, an
	// ascending scan moves start past the last key, a descending one
	// moves end down to it.
	start, end []byte
	limit      int   // size of the next page
	page       []row // the current page
	pos        int   // index in page; -1 before the first Next
	last       bool  // the current page is the last one
	err        error
}

type row struct{ key, value []byte }

// Next implements storage.Iterator.
func (it *iterator) Next() bool {
	if it.err != nil {
		return false
	}
	if it.pos+1 < len(it.page) {
		it.pos++
		return true
	}
	if it.last {
		it.page, it.pos = nil, 0
		return false
	}
	if err := it.fetch(); err != nil {
		it.err = err
		it.page = nil
		return false
	}
	it.pos = 0
	return len(it.page) > 0
}

func (it *iterator) fetch() error {
	var query string
	var args []any
	switch {
	case it.end == nil && !it.reverse:
		query, args = sqlScanAscAll, []any{it.start, it.limit}
	case it.end == nil:
		query, args = sqlScanDescAll, []any{it.start, it.limit}
	case !it.reverse:
		query, args = sqlScanAsc, []any{it.start, it.end, it.limit}
	default:
		query, args = sqlScanDesc, []any{it.start, it.end, it.limit}
	}
	// Rows of the previous page are not reused: the contract lets callers
	// keep Key and Value only until Next, but nothing is gained by
	// recycling them.
	page := make([]row, 0, it.limit)
	err := it.t.roundTrip(query, args, func(rows pgx.Rows) error {
		for rows.Next() {
			var r row
			if err := rows.Scan(&r.key, &r.value); err != nil {
				return err
			}
			r.value = nonNil(r.value)
			page = append(page, r)
		}
		return rows.Err()
	})
	if err != nil {
		return err
	}
	it.page = page
	if len(page) < it.limit {
		it.last = true
		return nil
	}
	lastKey := page[len(page)-1].key
	if it.reverse {
		it.end = lastKey
	} else {
		// The smallest key greater than lastKey.
		it.start = append(bytes.Clone(lastKey), 0)
	}
	it.limit = min(2*it.limit, maxPage)
	return nil
}

// SkipTo implements storage.Skipper. Within the page it moves by binary
// search; past it, the next page starts at key, so the rows in between
// are never sent.
func (it *iterator) SkipTo(key []byte) bool {
	if it.err != nil || it.page == nil {
		return false
	}
	rest := it.page[it.pos+1:]
	i, _ := slices.BinarySearchFunc(rest, key, func(r row, key []byte) int {
		if it.reverse {
			return -bytes.Compare(r.key, key) // descending: rows before key come first
		}
		return bytes.Compare(r.key, key)
	})
	if it.reverse {
		// The first row below key: BinarySearchFunc stops at the first row
		// not above it, which may be key itself.
		for i < len(rest) && bytes.Equal(rest[i].key, key) {
			i++
		}
	}
	if i < len(rest) {
		it.pos += 1 + i
		return true
	}
	if it.last {
		it.page, it.pos = nil, 0
		return false
	}
	if it.reverse {
		if it.end == nil || bytes.Compare(key, it.end) < 0 {
			it.end = bytes.Clone(key)
		}
	} else if bytes.Compare(key, it.start) > 0 {
		it.start = bytes.Clone(key)
	}
	if err := it.fetch(); err != nil {
		it.err, it.page = err, nil
		return false
	}
	it.pos = 0
	return len(it.page) > 0
}

// Key implements storage.Iterator.
func (it *iterator) Key() []byte { return it.page[it.pos].key }

// Value implements storage.Iterator.
func (it *iterator) Value() []byte { return it.page[it.pos].value }

// Err implements storage.Iterator.
func (it *iterator) Err() error { return it.err }

// Close implements storage.Iterator. A scan holds no server resources
// between pages, so there is nothing to release.
func (it *iterator) Close() error {
	it.page, it.last = nil, true
	return it.err
}
