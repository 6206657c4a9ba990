// Package postgres is Ebb's shared store: a storage.Store on a database
// that speaks the PostgreSQL wire protocol, so that several ebb nodes can
// serve one data set. It owns the table layout, the schema migrations, the
// mapping of View and Update onto SQL transactions, and the translation of
// connection failures into storage.ErrUnavailable.
//
// # Layout
//
// Everything lives in one table, ebb_kv (key bytea primary key, value bytea
// not null), next to ebb_schema_version, which holds the schema version in
// a single row. bytea compares bytewise, which is exactly the order the
// storage contract promises, so a Scan is an index range scan. The schema
// is the first one on the search_path; to keep several deployments (or
// test runs) in one database, put search_path=<schema> in the URL.
//
// # Transactions
//
// View is a REPEATABLE READ READ ONLY transaction: one snapshot for all of
// fn's reads, and it never conflicts with writers in PostgreSQL.
//
// Update is a SERIALIZABLE transaction. When the database reports a
// serialization failure (SQLSTATE 40001) or a deadlock (40P01), the
// transaction is rolled back and fn runs again on a fresh one, after a
// jittered exponential backoff, up to maxAttempts times. Only Update
// retries: the contract lets Update's fn run more than once, not View's.
//
// UpdateLocked is a READ COMMITTED transaction whose first statement,
// sent with BEGIN ahead of fn's first read, is SELECT … FOR UPDATE of its
// lock keys, in key order (so two transactions that take several cannot
// deadlock). The engine makes each physical partition's write state the
// lock of the partition's data, so every write to a partition holds
// that row lock from its first round trip to its commit. READ COMMITTED
// is enough because of the domain rule (see storage.Store): every
// transaction that writes a partition's data, or reads it to decide a
// write, holds the same lock, so they run one at a time, each seeing
// everything the one before it committed (at READ COMMITTED every
// statement reads the latest committed data, and a lock waiter reads the
// row as the holder left it). Everything the engine promises of writes
// therefore holds as under SERIALIZABLE: a conditional write (If-Match,
// create) loses no update, unique keys (unique within a logical
// partition, so within one physical partition) stay unique, _ts and the
// LSN never go back, and each partition's change feed is in commit
// order. The catalog's transactions, which also read-modify-write keys
// outside any partition (the resource counter), stay SERIALIZABLE and
// write the partitions' locks when they change what their writes depend
// on; an UpdateLocked that wrote anything writes its locks back at
// commit (UPDATE … SET value = value), so such an Update that read a
// partition before the lock holder committed fails with a serialization
// failure and runs again. What this buys: writes to one partition queue
// on the row lock instead of failing at commit and running again after
// a backoff (8 writers on one partition, on one node, went from 139
// retried attempts per 100 writes to none, and from 669 to about 1,200
// upserts a second), and writes to different partitions never meet. The
// SQL is still what CockroachDB and YugabyteDB accept: both take FOR
// UPDATE, and where READ COMMITTED is not enabled they run the
// transaction at their stronger default (CockroachDB SERIALIZABLE,
// YugabyteDB snapshot), which is correct, only slower: the lock's holder
// writes the lock row (or writes it back), so a writer that waited on it
// fails with a serialization error and runs again.
//
// Backoff alone is unfair on a hot key: the transaction that lost sleeps
// while the winners go straight on to their next transaction, so the loser
// tends to lose again and can run out of attempts. So, as in lock elision,
// every attempt holds a process-wide gate shared, and an attempt after
// sharedAttempts conflicts holds it exclusively: it waits for this
// process's Updates in flight and keeps new ones out until it is done,
// which leaves it only other processes to conflict with. On one node an
// Update therefore needs at most sharedAttempts+1 attempts.
//
// A process's UpdateLocked transactions of one domain queue in the
// process (turns) before they take a connection, at most two at a time
// going on to the database: the lock's holder and the next, which waits
// at the row lock so that it passes on at commit without a round trip.
// The rest of a hot partition's writers therefore hold no connection and
// cost the database nothing while they wait; the queue's wait is bounded
// by the statement timeout, as the row lock's is, and fails the same way
// (storage.ErrUnavailable). Other processes' transactions meet them at
// the row lock.
//
// A process's brief UpdateLocked transactions (storage.Brief: the
// engine's point writes) of different domains run in groups: while the
// process has as many groups sending as it has slots for (half its pool,
// at least two), the transactions that arrive join one group, which then
// runs as one READ COMMITTED transaction, with one lock statement for all
// their locks, their reads in shared round trips and their writes in one
// statement of each kind before one COMMIT. Their domains are disjoint,
// so this is running them side by side; a member that fails leaves
// nothing, and a group that fails runs its members again alone
// (group.go). Groups pay BEGIN, the lock statement, the writes'
// statements, COMMIT and its WAL flush once for several writes, where
// most of a write's cost in the database was.
//
// Round trips are kept low by sending statements lazily and pipelined
// (pgx.Batch): BEGIN goes out with the transaction's first statement,
// Set/Delete/DeleteRange are buffered in memory, and the buffer is sent in
// the same round trip as the next read or as COMMIT. A write-only Update is
// therefore one round trip (BEGIN, writes, COMMIT); a read-modify-write is
// two. Reads see the transaction's own writes because the buffer is always
// flushed ahead of them, so SQL does the overlay: this is simpler than
// merging the buffer into every Get and Scan, and costs no extra round
// trip. A Scan reads in keyset-paged batches (first 16 rows, doubling up to
// 256), resuming just after the last key, so a large range is never loaded
// at once and an iterator abandoned after one key fetched only a few rows.
// Every page is a separate statement on the same transaction, so an
// iterator never holds the connection between calls to Next, and Gets and
// other Scans can be interleaved freely. Statements are prepared once per
// connection and, by plan_cache_mode, planned once too (preferGenericPlans).
//
// # SQL subset
//
// The SQL sticks to what PostgreSQL, CockroachDB and YugabyteDB all accept:
// CREATE TABLE IF NOT EXISTS, INSERT ... ON CONFLICT, unnest and ANY over
// bytea arrays, SELECT ... FOR UPDATE, BEGIN with an isolation level. There
// are no advisory locks, functions or PL/pgSQL. Schema migrations are
// numbered; each runs in a transaction that locks the version row, and each
// is idempotent on its own (IF NOT EXISTS), because YugabyteDB may commit
// DDL outside the surrounding transaction. Processes that start at the
// same moment may race to create the same table; PostgreSQL then reports a
// unique violation (23505) or a duplicate table (42P07), and Open simply
// tries again.
//
// # Failures
//
// A database that cannot be reached makes calls fail, within
// Options.ConnectTimeout, with an error that wraps storage.ErrUnavailable;
// the pool dials again on later calls, so the store recovers on its own
// when the database returns. Pooled connections that died meanwhile fail
// at most one call each. A commit whose connection breaks before the reply
// arrives is ambiguous: it may have committed. It is reported as
// unavailable and not retried, since fn is not idempotent in general. A
// query on a connection that hangs without failing is bounded only by the
// caller's context; give long-lived callers a deadline.
package postgres
