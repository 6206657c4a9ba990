package engine

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"slices"
	"strings"
	"time"

	"github.com/ebbdb/ebb/internal/engine/dberr"
	"github.com/ebbdb/ebb/internal/engine/keyspace"
	"github.com/ebbdb/ebb/internal/keys"
	"github.com/ebbdb/ebb/internal/storage"
)

// Several Ebb nodes may share one store (PostgreSQL). Items need nothing
// special: every write is a serializable transaction that reads and
// bumps its container's state, so LSNs stay strictly increasing and _ts
// monotonic, and conditional writes lose no update, whichever node
// serves them. Two things do:
//
//   - The catalog is cached in memory. Every catalog change bumps the
//     store-wide resource counter, and each node polls that one key
//     (every CatalogPoll, 250 ms by default) and reloads the catalog
//     when it moved; a lookup that misses reloads at once, so a
//     container created on one node is usable on another immediately.
//   - The purger: purging is already exactly-once (each item is
//     re-checked and deleted in a transaction, and only the transaction
//     that deletes it logs its TTL delete record), but nodes should not
//     all do the same work. Each physical partition of a container has
//     a purge lease, a key naming the node and an expiry on the wall
//     clock, renewed on every pass; a node purges the items of the
//     partitions whose leases it holds, and the nodes present share the
//     partitions (holdLeases), so several nodes purge one big container
//     in parallel. When a holder dies, the others take its partitions
//     once its leases expire, and scan the container from the start
//     again for their items. Nodes re-read every container's next
//     deadline each lease period, because writes served by other nodes
//     do not wake their purgers.
//
// With the embedded store (one process owns it) none of this runs.

func newNodeID() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// cluster is a node's shared-store machinery.
type cluster struct {
	nodeID  string
	lease   time.Duration
	poll    time.Duration
	stopped chan struct{}
	done    chan struct{}
}

// startCluster starts the catalog watcher of a shared-store node.
func (e *Engine) startCluster(opts Options) {
	if opts.LeaseTime == 0 {
		opts.LeaseTime = 5 * time.Second
	}
	if opts.CatalogPoll == 0 {
		opts.CatalogPoll = 250 * time.Millisecond
	}
	e.cluster = &cluster{nodeID: opts.NodeID, lease: opts.LeaseTime, poll: opts.CatalogPoll,
		stopped: make(chan struct{}), done: make(chan struct{})}
	if e.cluster.nodeID == "" {
		e.cluster.nodeID = newNodeID()
	}
	go e.watchCatalog()
}

func (e *Engine) stopCluster() {
	if e.cluster != nil {
		close(e.cluster.stopped)
		<-e.cluster.done
	}
}

// watchCatalog reloads the catalog when another node changed it, and
// re-plans every container once per lease period.
func (e *Engine) watchCatalog() {
	cl := e.cluster
	defer close(cl.done)
	lastReplan := e.real.Elapsed()
	for {
		tick, cancel := e.real.After(cl.poll)
		select {
		case <-cl.stopped:
			cancel()
			return
		case <-tick:
		}
		if _, err := e.refreshCatalog(context.Background(), nil); err != nil {
			e.log.Warn("catalog watch", "err", err)
		}
		if e.real.Elapsed()-lastReplan >= cl.lease {
			lastReplan = e.real.Elapsed()
			e.purger.ReplanAll()
		}
	}
}

// catalogVersion reads the store-wide resource counter, which every
// catalog change moves: a lone point read, one round trip on PostgreSQL
// where a View takes two.
func (e *Engine) catalogVersion(ctx context.Context) (uint64, error) {
	return readCounter(storeReader{ctx, e.store})
}

// reloadCatalogLocked replaces the cached catalog with the store's.
// REQUIRES: catMu held.
func (e *Engine) reloadCatalogLocked(ctx context.Context) error {
	cat, err := loadCatalog(ctx, e.store)
	if err != nil {
		return err
	}
	e.publish(cat)
	e.purger.ReplanAll()
	e.trimmer.VisitAll()
	return nil
}

// refreshCatalog brings the cached catalog up to the store's when the
// store's has changed since the cache was read, and reports whether the
// cache is now another than seen, the catalog the caller found stale (a
// lookup missed in it, or a partition it routed to was split). It is one
// read of the counter when nothing changed, and one reload shared by
// every request that found the same change, however many arrive at
// once, rather than a reload each: a reload reads the whole catalog and
// the permissions, and re-plans every container's purge.
func (e *Engine) refreshCatalog(ctx context.Context, seen *catalog) (bool, error) {
	v, err := e.catalogVersion(ctx)
	if err != nil {
		return false, err
	}
	if cur := e.catalogSnapshot(); cur.version >= v {
		return cur != seen, nil
	}
	e.catMu.Lock()
	defer e.catMu.Unlock()
	if cur := e.catalogSnapshot(); cur.version >= v {
		return cur != seen, nil // another request reloaded it meanwhile
	}
	if err := e.reloadCatalogLocked(ctx); err != nil {
		return false, err
	}
	return true, nil
}

// onMiss is the catalog to look again in after a lookup in seen missed,
// or nil: on a shared store the resource may have been created on
// another node a moment ago.
func (e *Engine) onMiss(seen *catalog) *catalog {
	if e.cluster == nil {
		return nil
	}
	if changed, err := e.refreshCatalog(context.Background(), seen); err != nil || !changed {
		return nil
	}
	return e.catalogSnapshot()
}

// database finds a database, refreshing the catalog once on a miss.
func (e *Engine) database(id string) (*database, error) {
	cat := e.catalogSnapshot()
	db, ok := cat.dbs[id]
	if !ok {
		if cat = e.onMiss(cat); cat != nil {
			db, ok = cat.dbs[id]
		}
	}
	if !ok {
		return nil, dberr.NotFound("Resource Not Found. The database '%s' does not exist.", id)
	}
	return db, nil
}

// container finds a container, refreshing the catalog once on a miss.
func (e *Engine) container(dbID, collID string) (*container, error) {
	cat := e.catalogSnapshot()
	c, err := cat.container(dbID, collID)
	if err != nil {
		if cat = e.onMiss(cat); cat != nil {
			c, err = cat.container(dbID, collID)
		}
	}
	return c, err
}

// holdLeases takes or renews this node's purge leases on c's partitions
// and returns the partitions it holds. Nodes share a container's
// partitions: each marks itself present among the container's purgers
// (a presence key with an expiry, renewed with its leases), keeps at
// most its share of the partitions (their number over the nodes
// present, rounded up), lets go of any beyond it, and takes free or
// expired leases up to it. So one node purges every partition, and
// several nodes purge one big container in parallel, each its own
// partitions; when a node dies its leases expire and the others take
// them. When it holds none, wait is how long until one may come free.
// On an unshared store the node holds every partition.
func (e *Engine) holdLeases(c *container) (held []int, wait time.Duration, err error) {
	if e.cluster == nil {
		return c.layout.ids(), 0, nil
	}
	now := e.real.Now()
	until := binary.BigEndian.AppendUint64(nil, uint64(now.Add(e.cluster.lease).UnixMilli()))
	me := e.cluster.nodeID
	err = e.store.Update(context.Background(), func(w storage.Writer) error {
		held, wait = held[:0], 0
		if err := w.Set(keyspace.LeasePresenceKey(c.rid, me), until); err != nil {
			return err
		}
		present, err := presentNodes(w, c.rid, now)
		if err != nil {
			return err
		}
		ids := c.layout.ids()
		share := (len(ids) + present - 1) / present
		leases, err := readLeases(w, c.rid, ids, now)
		if err != nil {
			return err
		}
		var free []int
		for i, p := range ids {
			holder, left := leases[i].holder, leases[i].left
			switch {
			case holder == me && len(held) < share:
				held = append(held, p)
			case holder == me: // beyond this node's share: let it go
				if err := w.Delete(keyspace.LeaseKey(c.rid, p)); err != nil {
					return err
				}
			case holder != "":
				if wait == 0 || left < wait {
					wait = left
				}
			default:
				free = append(free, p)
			}
		}
		for _, p := range free {
			if len(held) == share {
				break
			}
			held = append(held, p)
		}
		for _, p := range held {
			if err := w.Set(keyspace.LeaseKey(c.rid, p), append(slices.Clip(until), me...)); err != nil {
				return err
			}
		}
		if len(held) > 0 {
			wait = 0
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	if len(held) == 0 && wait == 0 {
		wait = e.cluster.lease // every partition is another's share
	}
	return held, wait, nil
}

// presentNodes counts the nodes whose presence among container rid's
// purgers has not expired at now.
func presentNodes(r storage.Reader, rid [8]byte, now time.Time) (int, error) {
	prefix := keyspace.LeasePresenceKey(rid, "")
	it := r.Scan(prefix, keys.PrefixEnd(prefix), false)
	defer it.Close()
	n := 0
	for it.Next() {
		if v := it.Value(); len(v) == 8 && time.UnixMilli(int64(binary.BigEndian.Uint64(v))).After(now) {
			n++
		}
	}
	return max(n, 1), it.Err()
}

// lease is a partition's purge lease as read at an instant: who holds it
// and for how long yet; holder is "" for a lease that is free or has
// expired.
type lease struct {
	holder string
	left   time.Duration
}

// readLeases reads the purge leases of container rid's partitions ids,
// together (one round trip on PostgreSQL).
func readLeases(r storage.Reader, rid [8]byte, ids []int, now time.Time) ([]lease, error) {
	out := make([]lease, len(ids))
	ks := make([][]byte, len(ids))
	order := make([]int, len(ids)) // GetMany takes the keys sorted
	for i, p := range ids {
		ks[i], order[i] = keyspace.LeaseKey(rid, p), i
	}
	slices.SortFunc(order, func(a, b int) int { return bytes.Compare(ks[a], ks[b]) })
	sorted := make([][]byte, len(ks))
	for j, i := range order {
		sorted[j] = ks[i]
	}
	err := r.GetMany(sorted, func(j int, v []byte) error {
		if len(v) <= 8 {
			return nil
		}
		if until := time.UnixMilli(int64(binary.BigEndian.Uint64(v))); until.After(now) {
			out[order[j]] = lease{holder: string(v[8:]), left: until.Sub(now)}
		}
		return nil
	})
	return out, err
}

// leaseHolders names the nodes holding c's partitions' purge leases,
// sorted and joined with commas; "" when none does.
func (e *Engine) leaseHolders(c *container) (string, error) {
	var holders []string
	now := e.real.Now()
	err := e.store.View(context.Background(), func(r storage.Reader) error {
		leases, err := readLeases(r, c.rid, c.layout.ids(), now)
		for _, l := range leases {
			if l.holder != "" && !slices.Contains(holders, l.holder) {
				holders = append(holders, l.holder)
			}
		}
		return err
	})
	slices.Sort(holders)
	return strings.Join(holders, ","), err
}

// NodeID names this node; empty on an unshared store.
func (e *Engine) NodeID() string {
	if e.cluster == nil {
		return ""
	}
	return e.cluster.nodeID
}
