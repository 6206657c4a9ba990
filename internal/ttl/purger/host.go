package purger

import (
	"log/slog"
	"time"

	"github.com/ebbdb/ebb/internal/clock"
	"github.com/ebbdb/ebb/internal/metrics"
)

// ContainerID names a container: its resource id.
type ContainerID [8]byte

// Cursor is where a container's purge resumes: the host's position in each
// of its two expiry keyspaces (items with their own ttl, items under the
// container's default), before which every entry has been purged. The
// purger keeps the latest one per container and hands it back; it never
// looks inside. The zero Cursor is the start of both keyspaces.
type Cursor struct {
	Own, Ts []byte // nil: the start of the keyspace
}

// Host is the engine as the purger sees it. The purger calls it from its
// one goroutine, except Containers, which ReplanAll and Start call from
// theirs. Each method looks its container up afresh, so a container
// changed or deleted meanwhile is seen as it is now.
type Host interface {
	// Containers lists every container; the purger plans those whose TTL
	// is on.
	Containers() []ContainerID
	// TTLOn reports whether c still exists with its TTL on. The purger
	// purges only such containers, and forgets the others when it plans.
	TTLOn(c ContainerID) bool
	// Label names c in metrics and logs ("<db>/<container>").
	Label(c ContainerID) string
	// NextDeadline is the earliest expiry (epoch seconds) of c's unpurged
	// items from cursor from on; ok is false when none of them expires.
	NextDeadline(c ContainerID, from Cursor) (at int64, ok bool, err error)
	// HoldLease takes or renews this node's purge lease on c. When another
	// node holds it, ok is false and wait is how long until that lease
	// ends.
	HoldLease(c ContainerID) (ok bool, wait time.Duration, err error)
	// Budget is the throughput that pays for purging c, nil when nothing
	// limits it.
	Budget(c ContainerID) Budget
	// CountDue counts c's items expired by now and not purged (up to a
	// cap), for the backlog gauge while c's purge is throttled.
	CountDue(c ContainerID, now int64) (int, error)
	// PurgeBatch deletes up to limit of c's items expired by now, from
	// cursor from on, through the host's delete path in one transaction
	// that re-checks each item at now and keeps any rewritten since.
	PurgeBatch(c ContainerID, from Cursor, now int64, limit int) (PurgeResult, error)
}

// PurgeResult is what one PurgeBatch did.
type PurgeResult struct {
	// Read is how many due entries the batch found. Fewer than its limit
	// means it found every item due; none leaves the cursor as it was.
	Read int
	// Next is the cursor past everything the batch found.
	Next Cursor
	// Expiries are the expiry instants (epoch seconds) of the items it
	// purged, for the purge lag.
	Expiries []int64
	// Units is what the batch cost, in request units.
	Units float64
}

// Budget is the throughput of a container's offer as the purger spends
// it. Every reading now is of the real clock (Config.Real).
type Budget interface {
	// PurgeAllowance returns how many request units the purger may spend
	// now: the offer's spare units plus the floor. When that is less
	// than min it returns none, and how long until the floor alone
	// allows min.
	PurgeAllowance(min float64, now time.Duration) (float64, time.Duration)
	// ChargePurge takes the units the purger spent: spare first, then
	// the floor.
	ChargePurge(ru float64, now time.Duration)
}

// Config is what a Purger needs besides its Host.
type Config struct {
	// Clock is the engine's clock: the loop waits for deadlines on it
	// (Clock.At), and purge lags are measured on it.
	Clock clock.Clock
	// Real is the real clock, on which throttled and leased containers
	// wait, since throughput and leases are real time.
	Real clock.Clock
	// Now returns the purge instant: the engine's trusted instant (see
	// the package doc), which never goes backwards and which no later
	// write's _ts is behind, so nothing written after a pass can expire
	// behind the instant it purged up to: the cursors rely on that.
	Now func() time.Time
	// WakeAt is the reading of Clock.Elapsed by which Now may have
	// reached t; the loop's timer waits for it (clock.TimeGuard.WakeAt).
	WakeAt func(t time.Time) time.Duration
	// ItemUnits is what purging one small item costs, to size a batch to
	// the budget before its items are read. REQUIRES: > 0.
	ItemUnits float64
	// Metrics receives the ebb_ttl_* figures.
	Metrics *metrics.Registry
	// Log reports purge failures; slog.Default() if nil.
	Log *slog.Logger
	// OnPurge, if set, is told each purged item's lag (purge time minus
	// expiry time); benchmarks use it for exact percentiles.
	OnPurge func(lag time.Duration)
	// Busy, if set, reports that foreground requests are being served:
	// the purger then pauses after each batch for as long as the batch
	// took, so that it never takes more than half a core from them.
	Busy func() bool
}
