package gateway

import (
	"net/http"
	"strings"

	"github.com/ebbdb/ebb/internal/engine"
)

// checkRequestOptions refuses request headers that would change what a
// request does in a way Ebb does not (yet) honour, so that nothing a
// client asks for is silently ignored. Headers Ebb reads elsewhere, and
// those that cannot change a result on a single-region account, are
// listed in docs/compatibility.md.
func checkRequestOptions(r *http.Request) error {
	h := r.Header
	if lvl := header(h, "X-Ms-Consistency-Level"); lvl != "" {
		if err := checkConsistency(lvl); err != nil {
			return err
		}
	}
	for _, name := range [...]string{hPreTrigger, hPostTrigger} {
		if header(h, name) != "" {
			if err := checkTriggerRoute(r, strings.ToLower(name)); err != nil {
				return err
			}
		}
	}
	// Ebb's own header means something on a container create only.
	if header(h, "X-Ebb-Partition-Count") != "" && r.Pattern != "POST /dbs/{db}/colls" {
		return &engine.Error{Kind: engine.KindBadRequest, Message: "x-ebb-partition-count sets the physical partitions of a container being created; this request creates none."}
	}
	switch d := header(h, "X-Ms-Indexing-Directive"); strings.ToLower(d) {
	case "", "default", "include":
	case "exclude":
		return &engine.Error{Kind: engine.KindNotImplemented, Message: "x-ms-indexing-directive: Exclude is not supported by Ebb: every item is indexed under its container's indexing policy."}
	default:
		return &engine.Error{Kind: engine.KindBadRequest, Message: "The x-ms-indexing-directive header must be Default, Include or Exclude; got '" + d + "'."}
	}
	return nil
}

// checkTriggerRoute refuses a trigger header on a request that does not
// run triggers: the service runs them on item creates, upserts,
// replaces and deletes only ("Only valid when used with Create, Replace
// and Delete methods", the .NET SDK's ItemRequestOptions.PreTriggers;
// an upsert is a create or a replace).
func checkTriggerRoute(r *http.Request, name string) error {
	switch r.Pattern {
	case "PUT /dbs/{db}/colls/{coll}/docs/{id}", "DELETE /dbs/{db}/colls/{coll}/docs/{id}":
		return nil
	case "POST /dbs/{db}/colls/{coll}/docs":
		if !isQuery(r) && header(r.Header, "X-Ms-Cosmos-Is-Query-Plan-Request") == "" && header(r.Header, "X-Ms-Cosmos-Is-Batch-Request") == "" {
			return nil
		}
	}
	return &engine.Error{Kind: engine.KindBadRequest, Message: "Triggers run on item creates, upserts, replaces and deletes only; this request names one in " + name + "."}
}

// accountConsistency is the default consistency level the account
// reports (account.go). Ebb serves every read from the latest committed
// state, which satisfies any level; a request may ask for a weaker level
// than the account's, but not a stronger one, as the service enforces.
const accountConsistency = "Session"

// consistencyStrength orders the levels from weakest to strongest.
var consistencyStrength = map[string]int{"eventual": 0, "consistentprefix": 1, "session": 2, "boundedstaleness": 3, "strong": 4}

func checkConsistency(lvl string) error {
	s, ok := consistencyStrength[strings.ToLower(lvl)]
	if !ok {
		return &engine.Error{Kind: engine.KindBadRequest, Message: "The x-ms-consistency-level header must be one of Strong, BoundedStaleness, Session, ConsistentPrefix or Eventual; got '" + lvl + "'."}
	}
	if s > consistencyStrength[strings.ToLower(accountConsistency)] {
		// The service's message (seen in client reports, e.g.
		// https://github.com/OrleansContrib/Orleans.CosmosDB/issues/15).
		return &engine.Error{Kind: engine.KindBadRequest, Message: "ConsistencyLevel " + lvl + " specified in the request is invalid when service is configured with consistency level " + accountConsistency + ". Ensure the request consistency level is not stronger than the service consistency level."}
	}
	return nil
}
