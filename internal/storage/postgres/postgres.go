package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ebbdb/ebb/internal/storage"
)

// Options tunes the connection pool. The zero value is usable.
type Options struct {
	// MaxConns caps the connections the pool opens; 0 keeps pgx's default
	// (the greater of 4 and the number of CPUs) or pool_max_conns from
	// the URL.
	MaxConns int32
	// StatementTimeout, when positive, makes the server cancel any single
	// statement that runs longer (statement_timeout).
	StatementTimeout time.Duration
	// ConnectTimeout bounds dialing and authenticating one connection,
	// and the liveness ping of a connection taken from the pool after it
	// sat idle; it is how long a call waits before reporting an
	// unreachable database. 0 means connect_timeout from the URL, or 5s.
	ConnectTimeout time.Duration
}

const defaultConnectTimeout = 5 * time.Second

// Retry policy for Update; see the package doc.
const (
	maxAttempts    = 30
	sharedAttempts = 3
	minBackoff     = time.Millisecond
	maxBackoff     = 100 * time.Millisecond
)

// Store is a storage.Store on a PostgreSQL-wire database.
type Store struct {
	pool   *pgxpool.Pool
	closed atomic.Bool
	// gate is held shared by every Update attempt, and exclusively by an
	// attempt after sharedAttempts conflicts. See the package doc.
	gate sync.RWMutex
	// turns queues this process's transactions of each lock domain, for
	// at most turnLimit (the statement timeout) each.
	turns     turns
	turnLimit time.Duration
	// grouper runs UpdateLocked transactions in groups (group.go).
	grouper grouper
	// updates counts calls of Update; retries, the attempts they made
	// again after a conflict.
	updates, retries atomic.Uint64
	// grouped counts transactions that ran in a group of several, and
	// regrouped those that ran again alone because their group failed.
	grouped, regrouped atomic.Uint64
}

// Stats are a store's counts since it opened.
type Stats struct {
	// Updates is how many write transactions were asked for.
	Updates uint64
	// Retries is how many attempts were made again because the
	// database reported a serialization failure or a deadlock.
	Retries uint64
	// Grouped is how many write transactions ran in a group of
	// several (group.go), and Regrouped how many of them ran again
	// alone because their group failed.
	Grouped, Regrouped uint64
}

// Stats returns the store's counts since it opened.
func (s *Store) Stats() Stats {
	return Stats{Updates: s.updates.Load(), Retries: s.retries.Load(), Grouped: s.grouped.Load(), Regrouped: s.regrouped.Load()}
}

var _ storage.Store = (*Store)(nil)

// Open connects to the database at url (a postgres:// URL or a key=value
// connection string), creates or migrates the schema, and returns the
// store. Several processes may Open the same database at once.
func Open(ctx context.Context, url string, opts Options) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("postgres: open: %w", err)
	}
	if opts.MaxConns > 0 {
		cfg.MaxConns = opts.MaxConns
	}
	if opts.ConnectTimeout > 0 {
		cfg.ConnConfig.ConnectTimeout = opts.ConnectTimeout
	}
	if cfg.ConnConfig.ConnectTimeout <= 0 {
		cfg.ConnConfig.ConnectTimeout = defaultConnectTimeout
	}
	// A pooled connection whose server went away could otherwise hang
	// the ping that checks it.
	cfg.PingTimeout = cfg.ConnConfig.ConnectTimeout
	if opts.StatementTimeout > 0 {
		cfg.ConnConfig.RuntimeParams["statement_timeout"] = strconv.FormatInt(opts.StatementTimeout.Milliseconds(), 10)
	}
	// The URL may choose a plan_cache_mode of its own, as a parameter or
	// in options (-c plan_cache_mode=… or --plan_cache_mode=…).
	if _, set := cfg.ConnConfig.RuntimeParams["plan_cache_mode"]; !set &&
		!strings.Contains(cfg.ConnConfig.RuntimeParams["options"], "plan_cache_mode") {
		cfg.AfterConnect = preferGenericPlans
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: open: %w", err)
	}
	s := &Store{pool: pool, turnLimit: opts.StatementTimeout}
	s.grouper.slots = make(chan struct{}, groupSlots(cfg.MaxConns))
	if err := s.migrate(ctx); err != nil {
		pool.Close()
		return nil, s.wrap(ctx, "open", err)
	}
	return s, nil
}

// preferGenericPlans makes a new connection plan each of the store's
// statements once. They are prepared (pgx caches them per connection), but
// PostgreSQL's default plan_cache_mode (auto) keeps planning a statement
// with a bytea[] parameter (key = ANY($1)) afresh on every execution,
// because a plan for the array it was given is estimated cheaper than the
// generic one: measured with pg_stat_statements' track_planning, that was
// 23–39 µs of the database's CPU for each of the lock, GetMany and delete
// statements, about 90 µs of every upsert. Every statement the store sends
// is a primary-key lookup or range, so its generic plan is the index scan
// a fresh plan would choose (but for sqlDeleteRangeAll, which the engine
// never sends). plan_cache_mode is PostgreSQL 12's, so YugabyteDB
// releases on PostgreSQL 11 answer undefined_object, and other databases of
// the wire protocol may not know it or its value: a database that refuses
// the SET keeps planning as it does, which is only slower, so only a
// failure to reach it fails the connection.
func preferGenericPlans(ctx context.Context, conn *pgx.Conn) error {
	_, err := conn.Exec(ctx, "SET plan_cache_mode = force_generic_plan")
	var refused *pgconn.PgError
	if errors.As(err, &refused) {
		return nil
	}
	return err
}

// Get implements storage.Store: one statement on a pooled connection, no
// transaction around it.
func (s *Store) Get(ctx context.Context, key []byte) ([]byte, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	var value []byte
	err := s.pool.QueryRow(ctx, sqlGet, nonNil(key)).Scan(&value)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, storage.ErrNotFound
	}
	if err != nil {
		return nil, s.wrap(ctx, "get", err)
	}
	return nonNil(value), nil
}

// Lend implements storage.Store as Get: the driver's value is a copy
// already.
func (s *Store) Lend(ctx context.Context, key []byte, fn func(value []byte) error) error {
	v, err := s.Get(ctx, key)
	if err != nil {
		return err
	}
	return fn(v)
}

// View implements storage.Store.
func (s *Store) View(ctx context.Context, fn func(storage.Reader) error) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	t := s.newTxn(ctx, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
	defer t.finish()
	err := fn(t)
	if err == nil {
		err = t.commit()
	}
	return t.result(err)
}

// Update implements storage.Store.
func (s *Store) Update(ctx context.Context, fn func(storage.Writer) error) error {
	return s.update(ctx, nil, fn)
}

// UpdateLocked implements storage.Store: a READ COMMITTED transaction
// whose first statement locks the locks (SELECT … ORDER BY key FOR
// UPDATE: in key order, so that two transactions that take several
// cannot deadlock), sent with BEGIN ahead of fn's first read (or, for an
// fn that only writes, its writes and COMMIT). See the package doc.
func (s *Store) UpdateLocked(ctx context.Context, locks [][]byte, fn func(storage.Writer) error) error {
	// A point write's one lock (the common case) is sent as it is: the
	// slice is only read.
	if len(locks) == 1 && locks[0] != nil {
		return s.update(ctx, locks, fn)
	}
	sorted := make([][]byte, len(locks))
	for i, l := range locks {
		sorted[i] = nonNil(l)
	}
	slices.SortFunc(sorted, bytes.Compare)
	return s.update(ctx, slices.CompactFunc(sorted, bytes.Equal), fn)
}

// update runs fn in a transaction, in the domain of locks unless there
// are none, retrying conflicts.
func (s *Store) update(ctx context.Context, locks [][]byte, fn func(storage.Writer) error) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	s.updates.Add(1)
	if len(locks) > 0 {
		release, err := s.turns.take(ctx, locks, s.turnLimit)
		if err != nil {
			return err
		}
		defer release()
		if storage.IsBrief(ctx) {
			if done, err := s.updateGrouped(ctx, locks, fn); done {
				return err
			}
		}
	}
	for attempt := 1; ; attempt++ {
		err := s.updateOnce(ctx, locks, fn, attempt > sharedAttempts)
		if err == nil || !retryable(err) {
			return err
		}
		if attempt == maxAttempts {
			return fmt.Errorf("%w (gave up after %d attempts)", err, attempt)
		}
		if err := backoff(ctx, attempt); err != nil {
			return err
		}
		s.retries.Add(1)
	}
}

// updateOnce makes one attempt at an Update. An exclusive attempt waits for
// the other Updates of this process to finish and keeps new ones out
// until it is done, so it can only conflict with other processes.
func (s *Store) updateOnce(ctx context.Context, locks [][]byte, fn func(storage.Writer) error, exclusive bool) error {
	if exclusive {
		s.gate.Lock()
		defer s.gate.Unlock()
	} else {
		s.gate.RLock()
		defer s.gate.RUnlock()
	}
	begin := "BEGIN ISOLATION LEVEL SERIALIZABLE"
	if len(locks) > 0 {
		begin = "BEGIN ISOLATION LEVEL READ COMMITTED"
	}
	t := s.newTxn(ctx, begin)
	if len(locks) > 0 {
		t.locks, t.locked, t.lockPending = locks, make(map[string]*lockedKey, len(locks)), true
	}
	defer t.finish()
	err := fn(t)
	if err == nil {
		err = t.commit()
	}
	return t.result(err)
}

// Close implements storage.Store. The pool waits for connections in use
// to be released.
func (s *Store) Close() error {
	if !s.closed.CompareAndSwap(false, true) {
		return storage.ErrClosed
	}
	s.pool.Close()
	return nil
}

// check fails calls that cannot start: a closed store or a finished context.
func (s *Store) check(ctx context.Context) error {
	if s.closed.Load() {
		return storage.ErrClosed
	}
	return ctx.Err()
}

// wrap adds context to an error from the driver, once, and marks it as
// storage.ErrUnavailable or storage.ErrClosed when that is what it means.
func (s *Store) wrap(ctx context.Context, op string, err error) error {
	switch {
	case s.closed.Load():
		return fmt.Errorf("postgres: %s: %w", op, storage.ErrClosed)
	case unavailable(ctx, err):
		return fmt.Errorf("postgres: %s: %w: %w", op, storage.ErrUnavailable, err)
	default:
		return fmt.Errorf("postgres: %s: %w", op, err)
	}
}

// unavailable reports whether err means the database could not be reached
// or went away, as opposed to rejecting what was asked of it, or the
// caller giving up.
func unavailable(ctx context.Context, err error) bool {
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "57P01", // admin_shutdown
			"57P02", // crash_shutdown
			"57P03", // cannot_connect_now (starting up, in recovery)
			"53300": // too_many_connections
			return true
		case "57014":
			// query_canceled: by statement_timeout, a statement (or its
			// wait for a lock) the database did not finish in time,
			// unless the caller gave up.
			return ctx.Err() == nil
		}
		return strings.HasPrefix(pgErr.Code, "08") // connection_exception
	}
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	return errors.As(err, &connectErr) ||
		errors.As(err, &netErr) ||
		pgconn.Timeout(err) ||
		errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE)
}

// retryable reports whether err is a conflict that running the
// transaction again can resolve.
func retryable(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) &&
		(pgErr.Code == "40001" || // serialization_failure
			pgErr.Code == "40P01") // deadlock_detected
}

// backoff waits before attempt+1: exponential from minBackoff, capped at
// maxBackoff, with full jitter so that the transactions that just
// collided do not collide again.
func backoff(ctx context.Context, attempt int) error {
	d := maxBackoff
	if attempt < 20 {
		d = min(maxBackoff, minBackoff<<attempt)
	}
	timer := time.NewTimer(rand.N(d) + 1)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
