package resource

import (
	"encoding/json"
	"sort"
	"strings"

	"github.com/ebbdb/ebb/internal/engine/dberr"
	"github.com/ebbdb/ebb/internal/engine/document"
	"github.com/ebbdb/ebb/internal/engine/feed"
	"github.com/ebbdb/ebb/internal/engine/fulltext"
	"github.com/ebbdb/ebb/internal/engine/index"
	"github.com/ebbdb/ebb/internal/engine/unique"
	"github.com/ebbdb/ebb/internal/engine/vector"
	"github.com/ebbdb/ebb/internal/query"
	"github.com/ebbdb/ebb/internal/ttl"
)

// ContainerSpec is what the engine interprets of a container body.
type ContainerSpec struct {
	PK           document.PKDef
	TTL          ttl.Default
	IndexingNone bool
	// Index is the compiled indexingPolicy.
	Index *index.Policy
	// Retention is changeFeedPolicy.retentionDuration in minutes: how
	// long the all-versions-and-deletes log keeps a change. 0: no log.
	Retention int64
	// Unique is the uniqueKeyPolicy.
	Unique unique.Policy
	// Computed are the computedProperties (nil: none); Index is compiled
	// with them.
	Computed *query.Computed
	// Vectors is the vectorEmbeddingPolicy (nil: none).
	Vectors *vector.Policy
	// VectorIndexes are the indexing policy's vectorIndexes.
	VectorIndexes []vector.Index
	// FullText is the fullTextPolicy (nil: none).
	FullText *fulltext.Policy
}

// DefaultPartitionKey is what the JS SDK sends for a container created
// without one; items lacking the property get the "None" key.
var DefaultPartitionKey = []byte(`{"paths":["/_partitionKey"],"kind":"Hash"}`)

var containerDefaults = []document.Pair{
	{Key: "indexingPolicy", Val: []byte(`{"indexingMode":"consistent","automatic":true,"includedPaths":[{"path":"/*"}],"excludedPaths":[{"path":"/\"_etag\"/?"}]}`)},
	{Key: "conflictResolutionPolicy", Val: []byte(`{"mode":"LastWriterWins","conflictResolutionPath":"/_ts","conflictResolutionProcedure":""}`)},
	{Key: "geospatialConfig", Val: []byte(`{"type":"Geography"}`)},
	{Key: "uniqueKeyPolicy", Val: []byte(`{"uniqueKeys":[]}`)},
}

// ParseContainerSpec validates a container body's interpreted fields.
func ParseContainerSpec(body []byte, ms []document.Member) (ContainerSpec, error) {
	var spec ContainerSpec
	pkRaw := document.Lookup(ms, "partitionKey")
	if pkRaw == nil || string(pkRaw) == "null" {
		pkRaw = DefaultPartitionKey
	}
	pk, err := document.ParsePKDef(pkRaw)
	if err != nil {
		return spec, err
	}
	spec.PK = pk
	if spec.TTL, err = ttl.ParseDefault(document.Lookup(ms, "defaultTtl")); err != nil {
		return spec, dberr.BadRequest("%s", err.Error())
	}
	if spec.Computed, err = parseComputed(document.Lookup(ms, "computedProperties")); err != nil {
		return spec, err
	}
	if spec.Index, err = index.ParsePolicy(document.Lookup(ms, "indexingPolicy")); err != nil {
		return spec, err
	}
	if spec.Index, err = spec.Index.WithComputed(spec.Computed); err != nil {
		return spec, err
	}
	spec.IndexingNone = spec.Index.None()
	if spec.IndexingNone && spec.TTL.On() {
		return spec, dberr.BadRequest("%s", ttl.ErrIndexingNone.Error())
	}
	if p := document.Lookup(ms, "ttlPropertyPath"); p != nil && string(p) != "null" && !spec.TTL.On() {
		return spec, dberr.BadRequest("The ttlPropertyPath can only be specified together with defaultTtl.")
	}
	if spec.Retention, err = feed.ParsePolicy(document.Lookup(ms, "changeFeedPolicy")); err != nil {
		return spec, err
	}
	if spec.Unique, err = unique.ParsePolicy(document.Lookup(ms, "uniqueKeyPolicy")); err != nil {
		return spec, err
	}
	if spec.Vectors, err = vector.ParsePolicy(document.Lookup(ms, "vectorEmbeddingPolicy"), pkPaths(pk)); err != nil {
		return spec, err
	}
	if spec.FullText, err = fulltext.ParsePolicy(document.Lookup(ms, "fullTextPolicy")); err != nil {
		return spec, err
	}
	if ip, ok := document.ObjectMembers(document.Lookup(ms, "indexingPolicy")); ok {
		if spec.VectorIndexes, err = vector.ParseIndexes(document.Lookup(ip, "vectorIndexes"), spec.Vectors); err != nil {
			return spec, err
		}
		if err := fulltext.CheckIndexes(document.Lookup(ip, "fullTextIndexes"), spec.FullText); err != nil {
			return spec, err
		}
	}
	return spec, refuseUnsupported(ms)
}

// refuseUnsupported refuses the container properties whose meaning Ebb
// does not implement, rather than store them and behave otherwise than
// they say. (Properties that cannot change a result on a single-region
// account, such as conflictResolutionPolicy, are kept and echoed; see
// docs/compatibility.md.)
func refuseUnsupported(ms []document.Member) error {
	set := func(name string) bool {
		v := document.Lookup(ms, name)
		return v != nil && string(v) != "null"
	}
	if set("analyticalStorageTtl") {
		return dberr.BadRequest("The container property analyticalStorageTtl needs the analytical store, which Ebb does not have; leave it out.")
	}
	if g := document.Lookup(ms, "geospatialConfig"); g != nil && string(g) != "null" {
		var cfg struct{ Type string }
		if json.Unmarshal(g, &cfg) != nil || !strings.EqualFold(cfg.Type, "Geography") {
			return dberr.NotImplemented("Ebb supports geospatialConfig type Geography only; got %s.", document.Truncate(g, 64))
		}
	}
	return nil
}

// pkPaths are a partition key's paths as written ("/a/b").
func pkPaths(pk document.PKDef) []string {
	out := make([]string, len(pk.Paths))
	for i, p := range pk.Paths {
		out[i] = "/" + strings.Join(p, "/")
	}
	return out
}

// ContainerBody normalizes a client's container body: the client's
// members in order (system properties dropped), partitionKey with its
// kind filled in, and server defaults for what the client left out.
func ContainerBody(ms []document.Member, spec ContainerSpec) []byte {
	pairs := make([]document.Pair, 0, len(ms)+4)
	seen := map[string]bool{}
	for _, m := range ms {
		if document.IsSystemProperty(m.Key) || isContainerLink(m.Key) {
			continue
		}
		if seen[m.Key] {
			for i := range pairs {
				if pairs[i].Key == m.Key {
					pairs[i].Val = m.Val
				}
			}
			continue
		}
		seen[m.Key] = true
		val := m.Val
		switch m.Key {
		case "partitionKey":
			val = pkDefJSON(m.Val, spec.PK)
		case "indexingPolicy":
			if string(val) == "null" {
				val = containerDefaults[0].Val
			}
			val = index.NormalizePolicy(val)
		}
		pairs = append(pairs, document.Pair{Key: m.Key, Val: val})
	}
	if !seen["partitionKey"] {
		pairs = append(pairs, document.Pair{Key: "partitionKey", Val: pkDefJSON(DefaultPartitionKey, spec.PK)})
	}
	for _, d := range containerDefaults {
		if !seen[d.Key] {
			pairs = append(pairs, d)
		}
	}
	return document.Rebuild(pairs)
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
	out := []document.Pair{{Key: "paths", Val: m["paths"]}, {Key: "kind", Val: m["kind"]}}
	rest := make([]string, 0, len(m))
	for k := range m {
		if k != "paths" && k != "kind" {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	for _, k := range rest {
		out = append(out, document.Pair{Key: k, Val: m[k]})
	}
	return document.Rebuild(out)
}

// isContainerLink reports whether key is one of a container's link
// properties, which the server writes.
func isContainerLink(key string) bool {
	switch key {
	case "_docs", "_sprocs", "_triggers", "_udfs", "_conflicts":
		return true
	}
	return false
}

// ContainerProps are the system properties of a container resource.
func ContainerProps(rid, self, etag string, ts int64) document.SystemProps {
	return document.SystemProps{RID: rid, Self: self, Etag: etag, Ts: ts, Extra: [][2]string{
		{"_docs", "docs/"}, {"_sprocs", "sprocs/"}, {"_triggers", "triggers/"},
		{"_udfs", "udfs/"}, {"_conflicts", "conflicts/"},
	}}
}

// PKPaths renders a partition key definition for error messages.
func PKPaths(d document.PKDef) string {
	ps := make([]string, len(d.Paths))
	for i, p := range d.Paths {
		ps[i] = "/" + strings.Join(p, "/")
	}
	return strings.Join(ps, ", ") + " (" + d.Kind + ")"
}
