package resource

import (
	"github.com/ebbdb/ebb/internal/engine/dberr"
	"github.com/ebbdb/ebb/internal/engine/document"
	"github.com/ebbdb/ebb/internal/engine/index"
	"github.com/ebbdb/ebb/internal/query"
)

// A container's computedProperties: [{"name": ..., "query": ...}, ...]
// ("Computed properties in Azure Cosmos DB for NoSQL",
// learn.microsoft.com/azure/cosmos-db/nosql/query/computed-properties).
// The definitions' queries are the query language's to check
// (query.CompileComputed); the body's shape, the reserved names and the
// rules that tie them to the indexing policy are checked here.

// invalidInput is how the service begins its answer to a container body
// it cannot read: the Python SDK's computed properties tests
// (azure-sdk-for-python, sdk/cosmos/azure-cosmos/test/
// test_computed_properties_query.py,
// test_replace_with_incorrect_computed_properties) send computedProperties
// as an object and assert a 400 containing "One of the specified inputs is
// invalid".
const invalidInput = "One of the specified inputs is invalid"

// parseComputed reads a container's computedProperties (nil or null:
// none).
func parseComputed(raw []byte) (*query.Computed, error) {
	if raw == nil || string(raw) == "null" {
		return nil, nil
	}
	shape := func() error {
		return dberr.BadRequest("%s: computedProperties must be an array of objects with a \"name\" and a \"query\", such as [{\"name\": \"cp_lowerName\", \"query\": \"SELECT VALUE LOWER(c.name) FROM c\"}]; got %s.", invalidInput, document.Truncate(raw, 64))
	}
	elems, ok := arrayElements(raw)
	if !ok {
		return nil, shape()
	}
	defs := make([]query.ComputedDef, 0, len(elems))
	for i, el := range elems {
		ms, ok := document.ObjectMembers(el)
		if !ok {
			return nil, shape()
		}
		var d query.ComputedDef
		var hasName, hasQuery bool
		for _, m := range ms {
			var dst *string
			switch m.Key {
			case "name":
				dst, hasName = &d.Name, true
			case "query":
				dst, hasQuery = &d.Query, true
			default:
				return nil, dberr.BadRequest("%s: computed property %d has the property '%s'; a computed property has only a \"name\" and a \"query\".", invalidInput, i+1, document.Truncate([]byte(m.Key), 64))
			}
			if len(m.Val) == 0 || m.Val[0] != '"' {
				return nil, dberr.BadRequest("%s: the %s of computed property %d must be a string; got %s.", invalidInput, m.Key, i+1, document.Truncate(m.Val, 64))
			}
			*dst = document.Unquote(m.Val)
		}
		switch {
		case !hasName:
			return nil, dberr.BadRequest("%s: computed property %d has no \"name\".", invalidInput, i+1)
		case !hasQuery:
			return nil, dberr.BadRequest("%s: computed property '%s' has no \"query\".", invalidInput, d.Name)
		case d.Name == "id" || document.IsSystemProperty(d.Name):
			// "Reserved system property names such as id, _rid, and _ts
			// can't be used as computed property names"
			// (computed-properties.md, "Name constraints").
			return nil, dberr.BadRequest("The computed property name '%s' is reserved for a system property; choose another name (a prefix such as cp_ keeps computed properties apart from stored ones).", d.Name)
		}
		defs = append(defs, d)
	}
	cs, err := query.CompileComputed(defs)
	if err != nil {
		return nil, dberr.BadRequest("%s", err.Error())
	}
	return cs, nil
}

// CheckComputedChange refuses a container replace that changes its
// computed properties against its indexing policy, as the service does
// (computed-properties.md): "A computed property name can't match a
// property path that is already indexed", in any included or excluded
// path, composite or spatial index of the container's current policy,
// since the entries there are a stored member's; and "If you want to
// delete a computed property, you'll first need to remove it from the
// index policy", which the same replace may do. old and oldPolicy are
// the container's current computed properties and policy.
//
// Redefining a computed property the policy indexes is accepted: the
// service then leaves the entries as they were ("it's not automatically
// reindexed"), while Ebb rebuilds them (its policy's fingerprint holds
// the definitions), so queries never read entries of an old definition.
func CheckComputedChange(old *query.Computed, oldPolicy *index.Policy, spec ContainerSpec) error {
	for _, name := range spec.Computed.Names() {
		if !old.Has(name) && oldPolicy.NamesProperty(name) {
			return dberr.BadRequest("The computed property name '%s' matches a path the container's indexing policy already names (/%s); a new computed property cannot take the name of an indexed path. Remove the path from the indexing policy first, then add the computed property (and index it, if you like).", name, name)
		}
	}
	for _, name := range old.Names() {
		if !spec.Computed.Has(name) && spec.Index.NamesProperty(name) {
			return dberr.BadRequest("The computed property '%s' cannot be removed while the indexing policy names its path (/%s); remove the path from the indexing policy too.", name, name)
		}
	}
	return nil
}

// arrayElements returns the elements of raw, a JSON array that passed
// the body's validation; ok is false when raw is not an array.
func arrayElements(raw []byte) (elems [][]byte, ok bool) {
	i := document.SkipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '[' {
		return nil, false
	}
	for i = document.SkipSpace(raw, i+1); i < len(raw) && raw[i] != ']'; {
		end := document.SkipValue(raw, i)
		elems = append(elems, raw[i:end])
		if i = document.SkipSpace(raw, end); i < len(raw) && raw[i] == ',' {
			i = document.SkipSpace(raw, i+1)
		}
	}
	return elems, true
}
