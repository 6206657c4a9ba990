package engine

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"sort"
	"strings"

	"github.com/ebbdb/ebb/internal/engine/dberr"
	"github.com/ebbdb/ebb/internal/engine/document"
	"github.com/ebbdb/ebb/internal/engine/feed"
	"github.com/ebbdb/ebb/internal/engine/index"
	"github.com/ebbdb/ebb/internal/engine/keyspace"
	"github.com/ebbdb/ebb/internal/engine/throughput"
	"github.com/ebbdb/ebb/internal/keys"
	"github.com/ebbdb/ebb/internal/storage"
	"github.com/ebbdb/ebb/internal/ttl"
)

// containerSpec is what the engine interprets of a container body.
type containerSpec struct {
	pk           document.PKDef
	ttl          ttl.Default
	indexingNone bool
	// index is the compiled indexingPolicy.
	index *index.Policy
	// logRetention is changeFeedPolicy.retentionDuration in minutes: how
	// long the all-versions-and-deletes log keeps a change. 0: no log.
	logRetention int64
}

// defaultPartitionKey is what the JS SDK sends for a container created
// without one; items lacking the property get the "None" key.
var defaultPartitionKey = []byte(`{"paths":["/_partitionKey"],"kind":"Hash"}`)

var containerDefaults = []kv{
	{"indexingPolicy", []byte(`{"indexingMode":"consistent","automatic":true,"includedPaths":[{"path":"/*"}],"excludedPaths":[{"path":"/\"_etag\"/?"}]}`)},
	{"conflictResolutionPolicy", []byte(`{"mode":"LastWriterWins","conflictResolutionPath":"/_ts","conflictResolutionProcedure":""}`)},
	{"geospatialConfig", []byte(`{"type":"Geography"}`)},
}

// parseContainerSpec validates a container body's interpreted fields.
func parseContainerSpec(body []byte, ms []document.Member) (containerSpec, error) {
	var spec containerSpec
	pkRaw := document.Lookup(ms, "partitionKey")
	if pkRaw == nil || string(pkRaw) == "null" {
		pkRaw = defaultPartitionKey
	}
	pk, err := document.ParsePKDef(pkRaw)
	if err != nil {
		return spec, err
	}
	spec.pk = pk
	if spec.ttl, err = ttl.ParseDefault(document.Lookup(ms, "defaultTtl")); err != nil {
		return spec, &Error{Kind: KindBadRequest, Message: err.Error()}
	}
	if spec.index, err = index.ParsePolicy(document.Lookup(ms, "indexingPolicy")); err != nil {
		return spec, err
	}
	spec.indexingNone = spec.index.None()
	if spec.indexingNone && spec.ttl.On() {
		return spec, &Error{Kind: KindBadRequest, Message: ttl.ErrIndexingNone.Error()}
	}
	if p := document.Lookup(ms, "ttlPropertyPath"); p != nil && string(p) != "null" && !spec.ttl.On() {
		return spec, dberr.BadRequest("The ttlPropertyPath can only be specified together with defaultTtl.")
	}
	if spec.logRetention, err = feed.ParsePolicy(document.Lookup(ms, "changeFeedPolicy")); err != nil {
		return spec, err
	}
	return spec, nil
}

// containerBody normalizes a client's container body: the client's
// members in order (system properties dropped), partitionKey with its
// kind filled in, and server defaults for what the client left out.
func containerBody(ms []document.Member, spec containerSpec) []byte {
	pairs := make([]kv, 0, len(ms)+4)
	seen := map[string]bool{}
	for _, m := range ms {
		if document.IsSystemProperty(m.Key) || isContainerLink(m.Key) {
			continue
		}
		if seen[m.Key] {
			for i := range pairs {
				if pairs[i].key == m.Key {
					pairs[i].val = m.Val
				}
			}
			continue
		}
		seen[m.Key] = true
		val := m.Val
		if m.Key == "partitionKey" {
			val = pkDefJSON(m.Val, spec.pk)
		}
		pairs = append(pairs, kv{m.Key, val})
	}
	if !seen["partitionKey"] {
		pairs = append(pairs, kv{"partitionKey", pkDefJSON(defaultPartitionKey, spec.pk)})
	}
	for _, d := range containerDefaults {
		if !seen[d.key] {
			pairs = append(pairs, d)
		}
	}
	return rebuild(pairs)
}

// pkDefJSON returns the client's partitionKey object with kind set.
func pkDefJSON(raw []byte, def document.PKDef) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil || m == nil {
		m = map[string]json.RawMessage{}
	}
	if _, ok := m["kind"]; !ok {
		m["kind"], _ = json.Marshal(def.Kind)
	}
	// Paths first, as the service writes them.
	out := []kv{{"paths", m["paths"]}, {"kind", m["kind"]}}
	rest := make([]string, 0, len(m))
	for k := range m {
		if k != "paths" && k != "kind" {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	for _, k := range rest {
		out = append(out, kv{k, m[k]})
	}
	return rebuild(out)
}

func isContainerLink(key string) bool {
	switch key {
	case "_docs", "_sprocs", "_triggers", "_udfs", "_conflicts":
		return true
	}
	return false
}

func containerProps(rid, self, etag string, ts int64) document.SystemProps {
	return document.SystemProps{RID: rid, Self: self, Etag: etag, Ts: ts, Extra: [][2]string{
		{"_docs", "docs/"}, {"_sprocs", "sprocs/"}, {"_triggers", "triggers/"},
		{"_udfs", "udfs/"}, {"_conflicts", "conflicts/"},
	}}
}

// CreateContainer creates a container in database dbID.
func (e *Engine) CreateContainer(ctx context.Context, dbID string, body []byte, th ThroughputHeaders) (Resource, error) {
	ms, err := objectBody(body)
	if err != nil {
		return Resource{}, err
	}
	id, err := checkResourceID(document.Lookup(ms, "id"), "container")
	if err != nil {
		return Resource{}, err
	}
	spec, err := parseContainerSpec(body, ms)
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
	norm := containerBody(ms, spec)
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
		c = &container{id: id, dbID: dbID, dbRID: db.rid, pk: spec.pk, ttl: spec.ttl, indexingNone: spec.indexingNone, index: spec.index, retention: spec.logRetention}
		copy(c.rid[:4], db.rid[:])
		c.rid[4], c.rid[5], c.rid[6], c.rid[7] = byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
		c.ridStr = ridString(c.rid[:])
		c.self = "dbs/" + db.ridStr + "/colls/" + c.ridStr + "/"
		c.etag = resourceEtag(n)
		c.raw = document.WithSystemProps(nil, norm, normMs, containerProps(c.ridStr, c.self, c.etag, now))
		if tp != nil {
			if off, err = writeOffer(w, *tp, c.ridStr, c.self, now); err != nil {
				return err
			}
			c.offerID = off.id
		}
		if err := w.Set(keyspace.CollMetaKey(c.rid), collState{}.encode()); err != nil {
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

// ReadContainer returns a container.
func (e *Engine) ReadContainer(ctx context.Context, dbID, id string) (Resource, error) {
	c, err := e.container(dbID, id)
	if err != nil {
		return Resource{}, err
	}
	return Resource{Body: c.raw, ETag: c.etag, Charge: throughput.CatalogRead}, nil
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
// is rewritten. A new indexing policy applies to writes at once and is
// built in the background (package index); queries scan until it is.
func (e *Engine) ReplaceContainer(ctx context.Context, dbID, id string, body []byte, ifMatch string) (Resource, error) {
	ms, err := objectBody(body)
	if err != nil {
		return Resource{}, err
	}
	bodyID, err := checkResourceID(document.Lookup(ms, "id"), "container")
	if err != nil {
		return Resource{}, err
	}
	if bodyID != id {
		return Resource{}, dberr.BadRequest("The id '%s' in the request body does not match the container '%s' in the URL.", bodyID, id)
	}
	spec, err := parseContainerSpec(body, ms)
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
	if !samePaths(old.pk, spec.pk) {
		return Resource{}, dberr.BadRequest("The partition key of a container cannot be changed. Its partition key is %s.", pkPaths(old.pk))
	}
	norm := containerBody(ms, spec)
	normMs, _ := document.ObjectMembers(norm)
	now := e.now().Unix()
	c := *old
	c.pk, c.ttl, c.indexingNone, c.retention = spec.pk, spec.ttl, spec.indexingNone, spec.logRetention
	c.index = spec.index
	err = e.store.Update(ctx, func(w storage.Writer) error {
		n, err := nextNumber(w)
		if err != nil {
			return err
		}
		c.etag = resourceEtag(n)
		c.raw = document.WithSystemProps(nil, norm, normMs, containerProps(c.ridStr, c.self, c.etag, now))
		if err := index.SetPolicy(w, c.indexTarget()); err != nil {
			return err
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

func samePaths(a, b document.PKDef) bool {
	if a.Kind != b.Kind || len(a.Paths) != len(b.Paths) {
		return false
	}
	for i := range a.Paths {
		if strings.Join(a.Paths[i], "/") != strings.Join(b.Paths[i], "/") {
			return false
		}
	}
	return true
}

func pkPaths(d document.PKDef) string {
	ps := make([]string, len(d.Paths))
	for i, p := range d.Paths {
		ps[i] = "/" + strings.Join(p, "/")
	}
	return strings.Join(ps, ", ") + " (" + d.Kind + ")"
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
	if err := w.Delete(leaseKey(c.rid)); err != nil {
		return err
	}
	return w.Delete(keyspace.CatCollKey(c.dbRID, c.id))
}

// ridDecode reverses ridString.
func ridDecode(s string) ([]byte, error) {
	return base64.StdEncoding.DecodeString(strings.ReplaceAll(s, "-", "/"))
}

// PartitionKeyRanges returns the container's ranges: one range covering
// the whole hash space. The etag changes only if the ranges do, so the
// Go SDK's incremental read ends with 304.
func (e *Engine) PartitionKeyRanges(ctx context.Context, dbID, collID string) (body []byte, etag, rid string, err error) {
	c, err := e.container(dbID, collID)
	if err != nil {
		return nil, "", "", err
	}
	etag = "\"pkranges-" + c.ridStr + "\""
	rangeRID := ridString(append(c.rid[:], 2, 0, 0, 0, 0, 0, 0, 0))
	var b bytes.Buffer
	b.WriteString(`{"id":"0","_rid":`)
	b.Write(document.AppendQuoted(nil, rangeRID))
	b.WriteString(`,"_self":`)
	b.Write(document.AppendQuoted(nil, c.self+"pkranges/"+rangeRID+"/"))
	b.WriteString(`,"_etag":`)
	b.Write(document.AppendQuoted(nil, etag))
	b.WriteString(`,"minInclusive":"","maxExclusive":"FF","ridPrefix":0,"throughputFraction":1,"status":"online","parents":[],"lsn":1,"_ts":0}`)
	return b.Bytes(), etag, c.ridStr, nil
}
