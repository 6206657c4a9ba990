package engine

import (
	"bytes"
	"context"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/ebbdb/ebb/internal/engine/dberr"
	"github.com/ebbdb/ebb/internal/engine/document"
	"github.com/ebbdb/ebb/internal/engine/index"
	"github.com/ebbdb/ebb/internal/engine/keyspace"
	"github.com/ebbdb/ebb/internal/engine/resource"
	"github.com/ebbdb/ebb/internal/engine/throughput"
	"github.com/ebbdb/ebb/internal/keys"
	"github.com/ebbdb/ebb/internal/storage"
)

// CreateContainer creates a container in database dbID.
func (e *Engine) CreateContainer(ctx context.Context, dbID string, body []byte, th ThroughputHeaders) (Resource, error) {
	ms, err := document.ObjectBody(body)
	if err != nil {
		return Resource{}, err
	}
	id, err := resource.CheckID(document.Lookup(ms, "id"), "container")
	if err != nil {
		return Resource{}, err
	}
	spec, err := resource.ParseContainerSpec(body, ms)
	if err != nil {
		return Resource{}, err
	}
	tp, err := throughput.Parse(th)
	if err != nil {
		return Resource{}, err
	}

	if _, err := e.database(dbID); err != nil {
		return Resource{}, err
	}
	e.catMu.Lock()
	defer e.catMu.Unlock()
	cat := e.catalogSnapshot()
	db, ok := cat.dbs[dbID]
	if !ok {
		return Resource{}, dberr.NotFound("Resource Not Found. The database '%s' does not exist.", dbID)
	}
	if _, ok := db.colls[id]; ok {
		return Resource{}, ErrConflict
	}
	// A container in a database without shared throughput gets its own
	// offer, 400 RU/s unless asked otherwise, as on the service.
	if tp == nil && db.offerID == "" {
		tp = &Throughput{Manual: 400}
	}
	parts, err := parsePartitionCount(th.Partitions, tp, spec.PK)
	if err != nil {
		return Resource{}, err
	}
	norm := resource.ContainerBody(ms, spec)
	normMs, _ := document.ObjectMembers(norm)
	now := e.now().Unix()
	var c *container
	var off *offer
	err = e.store.Update(ctx, func(w storage.Writer) error {
		// Another node may have created it since the cache was loaded.
		if _, err := w.Get(keyspace.CatCollKey(db.rid, id)); err == nil {
			return ErrConflict
		}
		n, err := nextNumber(w)
		if err != nil {
			return err
		}
		c = &container{id: id, dbID: dbID, dbRID: db.rid}
		c.follow(spec)
		copy(c.rid[:4], db.rid[:])
		c.rid[4], c.rid[5], c.rid[6], c.rid[7] = byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
		layout := evenLayout(parts)
		layout.pinned = th.Partitions != ""
		c.setLayout(layout) // after the rid: the partitions' locks name it
		c.ridStr = resource.RIDString(c.rid[:])
		c.self = "dbs/" + db.ridStr + "/colls/" + c.ridStr + "/"
		c.etag = resource.Etag(n)
		c.raw = document.WithSystemProps(nil, norm, normMs, resource.ContainerProps(c.ridStr, c.self, c.etag, now))
		if tp != nil {
			if off, err = writeOffer(w, *tp, c.ridStr, c.self, now); err != nil {
				return err
			}
			c.offerID = off.id
		}
		if err := initPartitions(w, c); err != nil {
			return err
		}
		if err := index.InitState(w, c.indexTarget()); err != nil {
			return err
		}
		return w.Set(keyspace.CatCollKey(db.rid, id), c.raw)
	})
	if err != nil {
		return Resource{}, err
	}
	next := cat.clone()
	next.dbs[dbID].colls[id] = c
	if off != nil {
		next.offers[off.id] = off
	}
	e.publish(next)
	if c.retention > 0 {
		e.trimmer.Notice(c.feedContainer())
	}
	return Resource{Body: c.raw, ETag: c.etag, Charge: throughput.CatalogWrite}, nil
}

// ReadContainer returns a container; with quota (the request's
// x-ms-documentdb-populatequotainfo) also its usage and index progress,
// read from its state (usage.go) in one snapshot.
func (e *Engine) ReadContainer(ctx context.Context, dbID, id string, quota bool) (Resource, error) {
	c, err := e.container(dbID, id)
	if err != nil {
		return Resource{}, err
	}
	res := Resource{Body: c.raw, ETag: c.etag, Charge: throughput.CatalogRead}
	if !quota {
		return res, nil
	}
	var u Usage
	err = e.store.View(ctx, func(r storage.Reader) (err error) {
		u, err = usage(r, c)
		return err
	})
	if err != nil {
		return Resource{}, err
	}
	res.Usage = &u
	return res, nil
}

// Containers returns the containers of a database, ordered by id.
func (e *Engine) Containers(ctx context.Context, dbID string) ([][]byte, string, float64, error) {
	db, err := e.database(dbID)
	if err != nil {
		return nil, "", 0, err
	}
	ids := make([]string, 0, len(db.colls))
	for id := range db.colls {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	out := make([][]byte, len(ids))
	for i, id := range ids {
		out[i] = db.colls[id].raw
	}
	return out, db.ridStr, throughput.CatalogRead, nil
}

// ReplaceContainer replaces a container's definition. It is a full
// replacement: a body without defaultTtl turns TTL off. The partition key
// cannot change. The new TTL settings apply to the next request; nothing
// is rewritten. A new indexing policy, or a change to the computed
// properties (which are part of what the index holds), applies to writes
// at once and is built in the background (package index); queries scan
// until it is, evaluating the new computed properties.
func (e *Engine) ReplaceContainer(ctx context.Context, dbID, id string, body []byte, ifMatch string) (Resource, error) {
	return retrySplit(ctx, e, func() (Resource, error) { return e.replaceContainer(ctx, dbID, id, body, ifMatch) })
}

// replaceContainer is ReplaceContainer, run again by retrySplit when it finds its
// partition split.
func (e *Engine) replaceContainer(ctx context.Context, dbID, id string, body []byte, ifMatch string) (Resource, error) {
	ms, err := document.ObjectBody(body)
	if err != nil {
		return Resource{}, err
	}
	bodyID, err := resource.CheckID(document.Lookup(ms, "id"), "container")
	if err != nil {
		return Resource{}, err
	}
	if bodyID != id {
		return Resource{}, dberr.BadRequest("The id '%s' in the request body does not match the container '%s' in the URL.", bodyID, id)
	}
	spec, err := resource.ParseContainerSpec(body, ms)
	if err != nil {
		return Resource{}, err
	}
	if _, err := e.container(dbID, id); err != nil {
		return Resource{}, err
	}
	e.catMu.Lock()
	defer e.catMu.Unlock()
	cat := e.catalogSnapshot()
	old, err := cat.container(dbID, id)
	if err != nil {
		return Resource{}, err
	}
	if ifMatch != "" && ifMatch != "*" && ifMatch != old.etag {
		return Resource{}, ErrPreconditionFailed
	}
	// The version counts: it decides the hash every partition key is
	// placed by. A body that leaves it out asks for version 1, and the
	// service refuses that for a container of version 2 with this text
	// (reported in azure-sdk-for-python#15683 and
	// azure-resource-manager-schemas#2172, "Document collection partition
	// key cannot be changed.").
	if !old.pk.Equal(spec.PK) {
		return Resource{}, dberr.BadRequest("Document collection partition key cannot be changed. The container's partition key is %s, version %d; send it as it is, its version included.", resource.PKPaths(old.pk), old.pk.Version())
	}
	if !reflect.DeepEqual(old.vectors, spec.Vectors) {
		return Resource{}, dberr.BadRequest("The vectorEmbeddingPolicy of a container cannot be changed after it is created; create a new container with the new policy and copy the items.")
	}
	if !old.unique.Equal(spec.Unique) {
		return Resource{}, dberr.BadRequest("The uniqueKeyPolicy of a container cannot be changed after it is created; create a new container with the new unique keys and copy the items.")
	}
	if err := resource.CheckComputedChange(old.computed, old.index, spec); err != nil {
		return Resource{}, err
	}
	norm := resource.ContainerBody(ms, spec)
	normMs, _ := document.ObjectMembers(norm)
	now := e.now().Unix()
	c := *old
	c.follow(spec)
	err = e.store.Update(ctx, func(w storage.Writer) error {
		// The policies decide how the items' writes index them.
		if _, err := touchPartitions(w, &c); err != nil {
			return err
		}
		n, err := nextNumber(w)
		if err != nil {
			return err
		}
		c.etag = resource.Etag(n)
		c.raw = document.WithSystemProps(nil, norm, normMs, resource.ContainerProps(c.ridStr, c.self, c.etag, now))
		if err := index.SetPolicy(w, c.indexTarget()); err != nil {
			return err
		}
		if !reflect.DeepEqual(old.text, c.text) {
			// Entries under the old paths no longer say what the index
			// holds: rankings read the documents until every item has
			// been written again (textindex.go).
			p := keyspace.CollPrefix(keyspace.Txt, c.rid)
			if err := w.DeleteRange(p, keys.PrefixEnd(p)); err != nil {
				return err
			}
		}
		return w.Set(keyspace.CatCollKey(c.dbRID, id), c.raw)
	})
	if err != nil {
		return Resource{}, err
	}
	next := cat.clone()
	next.dbs[dbID].colls[id] = &c
	e.publish(next)
	e.purger.Replan(c.rid)
	e.indexer.kick()
	if c.retention != old.retention {
		e.trimmer.Notice(c.feedContainer())
	}
	return Resource{Body: c.raw, ETag: c.etag, Charge: throughput.CatalogWrite}, nil
}

// DeleteContainer deletes a container with all its items and its offer.
func (e *Engine) DeleteContainer(ctx context.Context, dbID, id string) (Resource, error) {
	if _, err := e.container(dbID, id); err != nil {
		return Resource{}, err
	}
	e.catMu.Lock()
	defer e.catMu.Unlock()
	cat := e.catalogSnapshot()
	c, err := cat.container(dbID, id)
	if err != nil {
		return Resource{}, err
	}
	if err := e.store.Update(ctx, func(w storage.Writer) error {
		if _, err := nextNumber(w); err != nil { // tells other nodes the catalog changed
			return err
		}
		return deleteContainerData(w, c)
	}); err != nil {
		return Resource{}, err
	}
	next := cat.clone()
	delete(next.dbs[dbID].colls, id)
	delete(next.offers, c.offerID)
	e.publish(next)
	e.purger.Forget(c.rid)
	e.dropANNIndexes(c.rid)
	e.metrics.ForgetContainer(c.label())
	return Resource{Charge: throughput.CatalogWrite}, nil
}

// deleteContainerData removes a container's catalog entry, offer and
// every key under its RID. Removing the meta key in the same transaction
// makes any item write racing with the delete fail (it reads the meta).
func deleteContainerData(w storage.Writer, c *container) error {
	for _, space := range keyspace.CollSpaces {
		p := keyspace.CollPrefix(space, c.rid)
		if err := w.DeleteRange(p, keys.PrefixEnd(p)); err != nil {
			return err
		}
	}
	if c.offerID != "" {
		if err := w.Delete(keyspace.CatOfferKey(c.offerID)); err != nil {
			return err
		}
	}
	if err := w.DeleteRange(keyspace.LeasePrefix(c.rid), keys.PrefixEnd(keyspace.LeasePrefix(c.rid))); err != nil {
		return err
	}
	return w.Delete(keyspace.CatCollKey(c.dbRID, c.id))
}

// PartitionKeyRanges returns the container's live ranges, in EPK order.
// The etag changes only if the ranges do, so the Go SDK's incremental
// read ends with 304.
func (e *Engine) PartitionKeyRanges(ctx context.Context, dbID, collID string) (ranges [][]byte, etag, rid string, err error) {
	return e.PartitionKeyRangesSince(ctx, dbID, collID, "")
}

// PartitionKeyRangesSince is PartitionKeyRanges read as an incremental
// feed from since, the etag of an earlier read: only the live ranges
// made after it, each of which names the ranges it replaces among its
// parents. The service's feed of a container's ranges answers so, and
// the Go SDK's refresh depends on it: it reads the feed from the start
// and then from each page's etag until 304, and keeps every range it
// was given that no other names as a parent, so a range listed on two
// pages would be kept twice. An etag that is not one of this
// container's reads every range.
func (e *Engine) PartitionKeyRangesSince(ctx context.Context, dbID, collID, since string) (ranges [][]byte, etag, rid string, err error) {
	c, err := e.container(dbID, collID)
	if err != nil {
		return nil, "", "", err
	}
	// The etag the SDKs send back to ask whether the ranges changed
	// names the layout, by the number its next range will take: a split
	// makes a new one, and the ranges made since are those numbered from
	// the old one.
	prefix := "\"pkranges-" + c.ridStr + "-"
	etag = prefix + strconv.Itoa(c.layout.next) + "\""
	from := 0
	if n, ok := strings.CutPrefix(since, prefix); ok {
		if n, err := strconv.Atoi(strings.TrimSuffix(n, "\"")); err == nil && n <= c.layout.next {
			from = n
		}
	}
	var st containerState
	err = e.store.View(ctx, func(r storage.Reader) error {
		st, err = readContainerState(r, c)
		return err
	})
	if err != nil {
		return nil, "", "", err
	}
	for i, r := range c.layout.live {
		p := r.id
		if p < from {
			continue
		}
		rangeRID := resource.RIDString(append(c.rid[:], 2, 0, 0, 0, 0, 0, byte(p>>8), byte(p)))
		lo, hi := r.min, r.max
		fraction := 1 / float64(len(c.layout.live))
		parents := make([]string, len(r.ancestors))
		for j, a := range r.ancestors {
			parents[j] = `"` + strconv.Itoa(a.id) + `"`
		}
		var b bytes.Buffer
		b.WriteString(`{"id":"` + strconv.Itoa(p) + `","_rid":`)
		b.Write(document.AppendQuoted(nil, rangeRID))
		b.WriteString(`,"_self":`)
		b.Write(document.AppendQuoted(nil, c.self+"pkranges/"+rangeRID+"/"))
		b.WriteString(`,"_etag":`)
		b.Write(document.AppendQuoted(nil, etag))
		b.WriteString(`,"minInclusive":"` + lo + `","maxExclusive":"` + hi + `","ridPrefix":` + strconv.Itoa(p))
		b.WriteString(`,"throughputFraction":` + strconv.FormatFloat(fraction, 'g', -1, 64))
		b.WriteString(`,"status":"online","parents":[` + strings.Join(parents, ",") + `],"lsn":` + strconv.FormatUint(keyspace.LSNCount(st.lsns[i]), 10) + `,"_ts":0}`)
		ranges = append(ranges, b.Bytes())
	}
	return ranges, etag, c.ridStr, nil
}
