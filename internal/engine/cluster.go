package engine

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"time"

	"github.com/ebbdb/ebb/internal/engine/dberr"
	"github.com/ebbdb/ebb/internal/engine/keyspace"
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
//     all do the same work. A node purges a container only while it
//     holds the container's lease, a key naming the node and an expiry
//     on the wall clock, renewed on every pass; when the holder dies,
//     another node takes over once the lease expires. Nodes re-read
//     every container's next deadline each lease period, because writes
//     served by other nodes do not wake their purgers.
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
	seen, _ := e.catalogVersion()
	lastReplan := e.real.Elapsed()
	for {
		tick, cancel := e.real.After(cl.poll)
		select {
		case <-cl.stopped:
			cancel()
			return
		case <-tick:
		}
		v, err := e.catalogVersion()
		if err != nil {
			e.log.Warn("catalog watch", "err", err)
			continue
		}
		if v != seen {
			seen = v
			if err := e.reloadCatalog(context.Background()); err != nil {
				e.log.Warn("catalog reload", "err", err)
			}
		}
		if e.real.Elapsed()-lastReplan >= cl.lease {
			lastReplan = e.real.Elapsed()
			e.purger.ReplanAll()
		}
	}
}

// catalogVersion reads the store-wide resource counter, which every
// catalog change bumps.
func (e *Engine) catalogVersion() (uint64, error) {
	var v uint64
	err := e.store.View(context.Background(), func(r storage.Reader) error {
		b, err := r.Get([]byte{keyspace.Counter})
		if errors.Is(err, storage.ErrNotFound) {
			return nil
		}
		if err == nil && len(b) == 8 {
			v = binary.BigEndian.Uint64(b)
		}
		return err
	})
	return v, err
}

// reloadCatalog replaces the cached catalog with the store's.
func (e *Engine) reloadCatalog(ctx context.Context) error {
	e.catMu.Lock()
	defer e.catMu.Unlock()
	cat, err := loadCatalog(ctx, e.store)
	if err != nil {
		return err
	}
	e.publish(cat)
	e.purger.ReplanAll()
	e.trimmer.VisitAll()
	return nil
}

// refreshOnMiss reloads the catalog when a lookup missed and the store is
// shared: the resource may have been created on another node a moment
// ago. It reports whether it reloaded.
func (e *Engine) refreshOnMiss() bool {
	if e.cluster == nil {
		return false
	}
	return e.reloadCatalog(context.Background()) == nil
}

// database finds a database, reloading the catalog once on a miss.
func (e *Engine) database(id string) (*database, error) {
	db, ok := e.catalogSnapshot().dbs[id]
	if !ok && e.refreshOnMiss() {
		db, ok = e.catalogSnapshot().dbs[id]
	}
	if !ok {
		return nil, dberr.NotFound("Resource Not Found. The database '%s' does not exist.", id)
	}
	return db, nil
}

// container finds a container, reloading the catalog once on a miss.
func (e *Engine) container(dbID, collID string) (*container, error) {
	c, err := e.catalogSnapshot().container(dbID, collID)
	if err != nil && e.refreshOnMiss() {
		c, err = e.catalogSnapshot().container(dbID, collID)
	}
	return c, err
}

// holdLease takes or renews this node's purge lease on container c. If
// another node holds it, it returns how long until that lease expires.
func (e *Engine) holdLease(c *container) (bool, time.Duration, error) {
	if e.cluster == nil {
		return true, 0, nil
	}
	var wait time.Duration
	now := e.real.Now()
	err := e.store.Update(context.Background(), func(w storage.Writer) error {
		wait = 0
		v, err := w.Get(keyspace.LeaseKey(c.rid))
		switch {
		case errors.Is(err, storage.ErrNotFound):
		case err != nil:
			return err
		case len(v) > 8:
			until := time.UnixMilli(int64(binary.BigEndian.Uint64(v)))
			if string(v[8:]) != e.cluster.nodeID && until.After(now) {
				wait = until.Sub(now)
				return nil
			}
		}
		b := binary.BigEndian.AppendUint64(nil, uint64(now.Add(e.cluster.lease).UnixMilli()))
		return w.Set(keyspace.LeaseKey(c.rid), append(b, e.cluster.nodeID...))
	})
	return wait == 0, wait, err
}

// leaseHolder names the node holding c's purge lease, "" when none does.
func (e *Engine) leaseHolder(c *container) (string, error) {
	var holder string
	now := e.real.Now()
	err := e.store.View(context.Background(), func(r storage.Reader) error {
		v, err := r.Get(keyspace.LeaseKey(c.rid))
		if errors.Is(err, storage.ErrNotFound) {
			return nil
		}
		if err == nil && len(v) > 8 && time.UnixMilli(int64(binary.BigEndian.Uint64(v))).After(now) {
			holder = string(v[8:])
		}
		return err
	})
	return holder, err
}

// NodeID names this node; empty on an unshared store.
func (e *Engine) NodeID() string {
	if e.cluster == nil {
		return ""
	}
	return e.cluster.nodeID
}
