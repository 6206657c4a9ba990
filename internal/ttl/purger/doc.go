// Package purger deletes expired items in the background: the TTL purger.
//
// Visibility never depends on it. An expired item is invisible from the
// first request at or after its expiry, purged or not (package ttl decides
// that, on every read path); purging is garbage collection, and the
// all-versions-and-deletes feed's TTL delete record is written when it
// happens. The purger owns when to purge and how much: the deadlines, the
// loop, the throttle and the cursors. The engine, seen through Host, owns
// what to purge: its expiry keyspaces, the delete path and the re-check.
// This package does not import the engine.
//
// # Design
//
// The purger keeps a min-heap of each container's next deadline, the
// earliest instant any of its unpurged items expires. It is built from
// the host's expiry keyspaces at start (Host.NextDeadline: a seek per
// keyspace, never a scan) and kept current without reading storage:
//
//   - a write that stores an item expiring before its container's
//     deadline lowers it (NoteExpiry) and wakes the loop if that is now
//     the earliest;
//   - a change of a container's TTL settings marks it dirty (Replan), and
//     the loop re-reads its deadline; ReplanAll marks every container, for
//     a catalog reload or, on a shared store, writes other nodes served;
//   - a deleted container is dropped (Forget);
//   - after a pass over a container, its deadline is re-read.
//
// One goroutine runs the loop. It sleeps on the engine clock until the
// earliest deadline, a wake-up or Stop; there is no ticker and no polling,
// so when nothing is due the purger does no work at all. Each wake-up
// counts in ebb_ttl_purger_wakeups_total. A pass takes every container
// whose deadline has come off the heap and purges it (Host.PurgeBatch) in
// batches of at most 256 items, each batch one transaction of the host's
// delete path, so a storm of expiries never holds the write path for long.
// Each item is re-checked inside the transaction that deletes it: one
// rewritten since it was found is kept.
//
// # Clock
//
// The purge instant (Config.Now) is the engine's trusted instant
// (clock.TimeGuard), the same one every read's visibility and every
// write's _ts use: a forward wall-clock jump is not followed until it
// outlasts a grace period, so a jump and its correction within the grace
// purge nothing that should still exist, and the instant never goes
// backwards, so no write after a pass gets a _ts behind what the pass
// purged up to. The loop's timer is set on the engine clock with an
// absolute target (clock.At, Config.WakeAt) on the monotonic axis, so
// time that passes while it sets the timer is not lost and a manual
// clock's Advance fires it at once. A target is where the deadline lies
// on that axis as the guard knows the clock when the timer is set; once
// the guard sees the wall clock jump ahead, the deadline may come as soon
// as the jump is believed, so the guard retimes the loop (Retime, through
// clock.TimeGuard.OnJump) rather than leave it asleep until the monotonic
// clock alone reaches the old target, hours later for a jump of hours.
//
// # Throttle
//
// The purger spends only throughput the container's offer leaves unused,
// plus a floor (Host.Budget): the floor refills at a fixed share of the
// offer, so a container saturated by foreground work still drains. A
// batch is sized to what the budget allows (Config.ItemUnits per item).
// When nothing is left the container leaves the heap for the throttled
// set, with when to try again on the real clock (Config.Real): throughput
// is a budget of real time even when the engine clock is manual. The time
// waited counts in ebb_ttl_purge_throttled_seconds_total, and the backlog
// and oldest-unpurged gauges are set from Host.CountDue meanwhile. A
// container without an offer is not throttled.
//
// # Foreground first
//
// Throughput budgets are per container, but every container shares the
// machine's cores. While the engine serves requests (Config.Busy), the
// purger takes batches of at most 64 items and pauses after each for as
// long as it took, at least a millisecond: it then uses at most about
// half of one core, in bursts of a millisecond or two, so a request never
// waits for a core behind it. On a machine with two cores, a purge (and
// the compactions its deletes cause) that keeps both busy would otherwise
// hold a request up to the scheduler's 10 ms time slice. With no
// requests it purges at full speed.
//
// # Cursors
//
// Per container the purger keeps a Cursor, opaque to it: the host's
// position in each of its expiry keyspaces before which everything has
// been purged. A batch starts at the container's cursor and returns the
// next one, so a storm of items expiring in the same second does not walk
// the tombstones of what earlier batches deleted. Cursors are keys, not
// times, for that reason. Replan resets a container's cursor: a new
// defaultTtl may move the due bound of the default keyspace backwards.
//
// # Leases
//
// On a store shared by several nodes, a node purges a container only
// while it holds the container's lease (Host.HoldLease, taken or renewed
// on every pass). A container leased by another node waits, like a
// throttled one, until that lease ends. Purging stays exactly-once even
// without the lease, because of the re-check; the lease only keeps nodes
// from doing the same work.
//
// # Invariants
//
//   - The heap holds at most one entry per container, and an entry is
//     never later than the container's earliest real deadline. It may be
//     earlier (a write's note, an item since rewritten): the pass then
//     finds nothing due and re-plans.
//   - Only containers whose TTL is on are purged (Host.TTLOn); turning TTL
//     off makes expired, unpurged items visible again, so the purger must
//     not race it.
//   - Everything before a container's cursor has been purged.
//   - A read of a deadline never overwrites an earlier one a concurrent
//     write noted (Purger.notes).
//
// # Testing
//
// The tests in this package drive the loop against a fake Host on manual
// clocks: no sleeping, no storage. They check that nothing is purged
// before a deadline on the purge instant, that a note wakes the loop, that
// throttled and leased containers wait on the real clock, that cursors
// carry from batch to batch and reset on Replan, and the metrics. The
// engine's tests drive the real purger through the engine (purger_test.go,
// the model-based test in model_test.go, the throughput floor), and the
// end-to-end, crash and cluster suites check purge lag, the change feed's
// TTL records, kill -9 during purges and leases across nodes.
package purger
