package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/ebbdb/ebb/internal/engine/dberr"
	"github.com/ebbdb/ebb/internal/engine/document"
	"github.com/ebbdb/ebb/internal/engine/fulltext"
	"github.com/ebbdb/ebb/internal/engine/index"
	"github.com/ebbdb/ebb/internal/engine/keyspace"
	"github.com/ebbdb/ebb/internal/engine/resource"
	"github.com/ebbdb/ebb/internal/engine/throughput"
	"github.com/ebbdb/ebb/internal/engine/unique"
	"github.com/ebbdb/ebb/internal/engine/vector"
	"github.com/ebbdb/ebb/internal/query"
	"github.com/ebbdb/ebb/internal/storage"
	"github.com/ebbdb/ebb/internal/ttl"
)

// catalog is the in-memory copy of every database, container and offer.
// A catalog value is never mutated once published: a change clones it.
type catalog struct {
	dbs    map[string]*database
	offers map[string]*offer
	// version is the store-wide counter, which every catalog change
	// moves, as it was when this catalog was read from the store. A
	// catalog changed in place after a change of this node's keeps the
	// version it was read at, so it never looks newer than it is.
	version uint64
}

type database struct {
	id     string
	rid    [4]byte
	ridStr string
	raw    []byte
	etag   string
	colls  map[string]*container
	// offerID is the shared-throughput offer, "" when none.
	offerID string
}

type container struct {
	id           string
	dbID         string
	dbRID        [4]byte
	rid          [8]byte
	ridStr       string
	self         string
	pk           document.PKDef
	ttl          ttl.Default
	indexingNone bool
	// index is the indexing policy of the catalog entry; item writes
	// index under the stored index state's (package index).
	index *index.Policy
	// retention is changeFeedPolicy.retentionDuration in minutes; 0 means
	// no all-versions-and-deletes log.
	retention int64
	// unique is the uniqueKeyPolicy, fixed at creation.
	unique unique.Policy
	// vectors is the vectorEmbeddingPolicy (nil: none), fixed at creation;
	// text is the fullTextPolicy (nil: none).
	vectors *vector.Policy
	text    *fulltext.Policy
	// vectorIndexes are the indexing policy's vectorIndexes: a diskANN
	// one makes searches of its path approximate (annindex.go).
	vectorIndexes []vector.Index
	// computed are the computed properties queries over the container's
	// items read (nil: none); index is compiled with them.
	computed *query.Computed
	// pkDeletes are the partition deletes in progress (pkdelete.go).
	pkDeletes partitionDeletes
	// layout is how the physical partitions divide the EPK space
	// (partitions.go, layout.go).
	layout  *partitionLayout
	raw     []byte
	etag    string
	offerID string
}

type offer struct {
	id string
	// ru is the offer's RU/s: manual throughput or autoscale maximum.
	ru           float64
	raw          []byte
	etag         string
	resourceRID  string
	resourceSelf string
}

// follow sets what c interprets of its resource body from spec.
func (c *container) follow(spec resource.ContainerSpec) {
	c.pk, c.ttl, c.indexingNone, c.index, c.retention = spec.PK, spec.TTL, spec.IndexingNone, spec.Index, spec.Retention
	c.vectors, c.vectorIndexes, c.text = spec.Vectors, spec.VectorIndexes, spec.FullText
	c.unique, c.computed = spec.Unique, spec.Computed
}

// label names a container in metrics and logs: "<db>/<container>".
func (c *container) label() string { return c.dbID + "/" + c.id }

func (c *catalog) clone() *catalog {
	n := &catalog{dbs: make(map[string]*database, len(c.dbs)), offers: make(map[string]*offer, len(c.offers)), version: c.version}
	for k, db := range c.dbs {
		d := *db
		d.colls = make(map[string]*container, len(db.colls))
		for ck, cv := range db.colls {
			d.colls[ck] = cv
		}
		n.dbs[k] = &d
	}
	for k, o := range c.offers {
		n.offers[k] = o
	}
	return n
}

func (c *catalog) container(dbID, collID string) (*container, error) {
	db, ok := c.dbs[dbID]
	if !ok {
		return nil, dberr.NotFound("Resource Not Found. The database '%s' does not exist.", dbID)
	}
	coll, ok := db.colls[collID]
	if !ok {
		return nil, dberr.NotFound("Resource Not Found. The container '%s' does not exist in database '%s'.", collID, dbID)
	}
	return coll, nil
}

func loadCatalog(ctx context.Context, store storage.Store) (*catalog, error) {
	cat := &catalog{dbs: map[string]*database{}, offers: map[string]*offer{}}
	err := store.View(ctx, func(r storage.Reader) error {
		var err error
		if cat.version, err = readCounter(r); err != nil {
			return err
		}
		if err := scanAll(r, keyspace.CatDB, func(v []byte) error {
			db, err := decodeDatabase(v)
			if err == nil {
				cat.dbs[db.id] = db
			}
			return err
		}); err != nil {
			return err
		}
		if err := scanAll(r, keyspace.CatColl, func(v []byte) error {
			c, err := decodeContainer(v)
			if err != nil {
				return err
			}
			for _, db := range cat.dbs {
				if db.rid == c.dbRID {
					c.dbID = db.id
					db.colls[c.id] = c
				}
			}
			return nil
		}); err != nil {
			return err
		}
		if err := scanAll(r, keyspace.CatOffer, func(v []byte) error {
			o, err := decodeOffer(v)
			if err == nil {
				cat.offers[o.id] = o
			}
			return err
		}); err != nil {
			return err
		}
		if err := loadPartitionLayouts(r, cat); err != nil {
			return err
		}
		return loadPartitionDeletes(r, cat)
	})
	if err != nil {
		return nil, fmt.Errorf("engine: load catalog: %w", err)
	}
	for _, o := range cat.offers {
		for _, db := range cat.dbs {
			if db.ridStr == o.resourceRID {
				db.offerID = o.id
			}
			for _, c := range db.colls {
				if c.ridStr == o.resourceRID {
					c.offerID = o.id
				}
			}
		}
	}
	return cat, nil
}

func scanAll(r storage.Reader, space byte, fn func(v []byte) error) error {
	it := r.Scan([]byte{space}, []byte{space + 1}, false)
	defer it.Close()
	for it.Next() {
		if err := fn(append([]byte(nil), it.Value()...)); err != nil {
			return err
		}
	}
	return it.Err()
}

func decodeDatabase(raw []byte) (*database, error) {
	var f resource.Fields
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, fmt.Errorf("engine: corrupt database resource: %w", err)
	}
	rid, err := resource.DecodeRID(f.RID, 4)
	if err != nil {
		return nil, err
	}
	db := &database{id: f.ID, ridStr: f.RID, raw: raw, etag: f.Etag, colls: map[string]*container{}}
	copy(db.rid[:], rid)
	return db, nil
}

func decodeContainer(raw []byte) (*container, error) {
	var f resource.Fields
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, fmt.Errorf("engine: corrupt container resource: %w", err)
	}
	rid, err := resource.DecodeRID(f.RID, 8)
	if err != nil {
		return nil, err
	}
	ms, _ := document.ObjectMembers(raw)
	spec, err := resource.ParseContainerSpec(raw, ms)
	if err != nil {
		return nil, fmt.Errorf("engine: corrupt container resource %s: %w", f.ID, err)
	}
	c := &container{id: f.ID, raw: raw, etag: f.Etag, ridStr: f.RID}
	c.follow(spec)
	copy(c.rid[:], rid)
	copy(c.dbRID[:], rid[:4])
	c.self = "dbs/" + resource.RIDString(c.dbRID[:]) + "/colls/" + c.ridStr + "/"
	return c, nil
}

func decodeOffer(raw []byte) (*offer, error) {
	var f struct {
		resource.Fields
		Resource        string `json:"resource"`
		OfferResourceID string `json:"offerResourceId"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, fmt.Errorf("engine: corrupt offer resource: %w", err)
	}
	return &offer{id: f.ID, ru: throughput.OfferRate(raw), raw: raw, etag: f.Etag, resourceRID: f.OfferResourceID, resourceSelf: f.Resource}, nil
}

// Resource is what a successful operation returns to the gateway.
type Resource struct {
	// Body is the resource's JSON, nil when there is nothing to return.
	Body []byte
	ETag string
	// Charge is the operation's cost in request units.
	Charge float64
	// Session is the session token for document operations.
	Session string
	// Created is set when an upsert created the item.
	Created bool
	// ContentPath and AltContentPath locate a document's container for
	// the JS SDK's session bookkeeping.
	ContentPath, AltContentPath string
	// Usage is a container's usage, when a container read asked for it.
	Usage *Usage
}

// ---- databases ----

// CreateDatabase creates a database from its JSON body.
func (e *Engine) CreateDatabase(ctx context.Context, body []byte, th ThroughputHeaders) (Resource, error) {
	ms, err := document.ObjectBody(body)
	if err != nil {
		return Resource{}, err
	}
	id, err := resource.CheckID(document.Lookup(ms, "id"), "database")
	if err != nil {
		return Resource{}, err
	}
	tp, err := throughput.Parse(th)
	if err != nil {
		return Resource{}, err
	}
	e.catMu.Lock()
	defer e.catMu.Unlock()
	cat := e.catalogSnapshot()
	if _, ok := cat.dbs[id]; ok {
		return Resource{}, ErrConflict
	}
	now := e.now().Unix()
	var db *database
	var off *offer
	err = e.store.Update(ctx, func(w storage.Writer) error {
		if _, err := w.Get(keyspace.CatDBKey(id)); err == nil {
			return ErrConflict
		}
		n, err := nextNumber(w)
		if err != nil {
			return err
		}
		var rid [4]byte
		rid[0], rid[1], rid[2], rid[3] = byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
		ridStr := resource.RIDString(rid[:])
		etag := resource.Etag(n)
		raw := document.WithSystemProps(nil, body, ms, document.SystemProps{
			RID: ridStr, Self: "dbs/" + ridStr + "/", Etag: etag, Ts: now,
			Extra: [][2]string{{"_colls", "colls/"}, {"_users", "users/"}},
		})
		db = &database{id: id, rid: rid, ridStr: ridStr, raw: raw, etag: etag, colls: map[string]*container{}}
		if tp != nil {
			if off, err = writeOffer(w, *tp, ridStr, "dbs/"+ridStr+"/", now); err != nil {
				return err
			}
			db.offerID = off.id
		}
		return w.Set(keyspace.CatDBKey(id), raw)
	})
	if err != nil {
		return Resource{}, err
	}
	next := cat.clone()
	next.dbs[id] = db
	if off != nil {
		next.offers[off.id] = off
	}
	e.publish(next)
	return Resource{Body: db.raw, ETag: db.etag, Charge: throughput.CatalogWrite}, nil
}

// publish makes c the catalog, and re-reads the permissions, whose
// scopes name its containers.
func (e *Engine) publish(c *catalog) {
	e.mu.Lock()
	e.cat = c
	e.mu.Unlock()
	if err := e.loadGrants(context.Background()); err != nil {
		e.log.Warn("permissions reload", "err", err)
	}
}

// ReadDatabase returns a database.
func (e *Engine) ReadDatabase(ctx context.Context, id string) (Resource, error) {
	db, err := e.database(id)
	if err != nil {
		return Resource{}, err
	}
	return Resource{Body: db.raw, ETag: db.etag, Charge: throughput.CatalogRead}, nil
}

// Databases returns every database resource, ordered by id.
func (e *Engine) Databases(ctx context.Context) ([][]byte, float64) {
	cat := e.catalogSnapshot()
	ids := make([]string, 0, len(cat.dbs))
	for id := range cat.dbs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	out := make([][]byte, len(ids))
	for i, id := range ids {
		out[i] = cat.dbs[id].raw
	}
	return out, throughput.CatalogRead
}

// DeleteDatabase deletes a database with all its containers, items and
// offers.
func (e *Engine) DeleteDatabase(ctx context.Context, id string) (Resource, error) {
	if _, err := e.database(id); err != nil {
		return Resource{}, err
	}
	e.catMu.Lock()
	defer e.catMu.Unlock()
	cat := e.catalogSnapshot()
	db, ok := cat.dbs[id]
	if !ok {
		return Resource{}, dberr.NotFound("Resource Not Found. The database '%s' does not exist.", id)
	}
	err := e.store.Update(ctx, func(w storage.Writer) error {
		if _, err := nextNumber(w); err != nil { // tells other nodes the catalog changed
			return err
		}
		for _, c := range db.colls {
			if err := deleteContainerData(w, c); err != nil {
				return err
			}
		}
		if db.offerID != "" {
			if err := w.Delete(keyspace.CatOfferKey(db.offerID)); err != nil {
				return err
			}
		}
		if err := deleteUsers(w, db); err != nil {
			return err
		}
		return w.Delete(keyspace.CatDBKey(id))
	})
	if err != nil {
		return Resource{}, err
	}
	next := cat.clone()
	delete(next.dbs, id)
	delete(next.offers, db.offerID)
	for _, c := range db.colls {
		delete(next.offers, c.offerID)
		e.purger.Forget(c.rid)
		e.dropANNIndexes(c.rid)
		e.metrics.ForgetContainer(c.label())
	}
	e.publish(next)
	return Resource{Charge: throughput.CatalogWrite}, nil
}
