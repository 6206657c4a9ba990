// Package index owns a container's secondary index: the indexing policy
// (policy.go), the entries it gives each stored item version under
// keyspace.Index (entry.go), the index state that says which policy the
// entries follow and how far a rebuild has come (state.go, build.go),
// their maintenance in the transaction of every item write (write.go),
// the consistency check (check.go), and the query sources that read an
// index instead of scanning: a filter narrowed by one sargable conjunct
// (plan.go, source.go) and an ORDER BY read in index order (ordered.go),
// with the continuation marker and metrics of the pages they serve
// (page.go).
//
// The engine decides when: it calls Replace and Remove in each item
// write and delete, SetPolicy when a container's policy changes, runs
// the builder's batches, and asks SourceFor and OrderedFor whether an
// index serves a query page. The package never imports the engine.
//
// # Entries
//
// Every scalar of a stored item version whose path the container's
// indexing policy includes gets one entry
//
//	0x16 <coll-rid:8> <path> <value> <pk> <id>  →  (empty)
//
// <path> is the value's path as canonical text (appendPath): property
// names joined by "/", "[]" for "any element of this array", names that
// could be mistaken for syntax quoted; so c.tags[2] is under "/tags/[]"
// and c.a.b under "/a/b". <value> is the partition-key encoding of the
// scalar (type tag, then float64 bits or an escaped string), which sorts
// null < false < true < numbers < strings in Cosmos order, numbers
// numerically, strings by code point, and never makes one value a prefix
// of another, so a range of values is a range of keys; strings longer
// than maxIndexedString bytes are cut there and marked as cut (the query
// planner widens its ranges to match). Arrays and objects get an entry
// too, with a bare type tag after strings (tagArray, tagObject): that is
// what makes IS_DEFINED(c.a) answerable for any value of c.a. The system
// properties _rid, _self, _etag, _attachments and _lsn are never
// indexed; _ts and id are. Duplicate member names (JSON allows them, Ebb
// stores them) index only the last, as JavaScript reads them. <pk> <id>
// is the item's key after the doc prefix, so the item is one Get away.
//
// The policy (policy.go) follows Cosmos DB: includedPaths and
// excludedPaths in the service's syntax ("/*", "/a/?", "/a/*",
// "/\"quoted\"/?", "/a/[]/?"), the most specific matching path wins, an
// exclusion wins a tie; indexingMode none indexes nothing. Its canonical
// form names it by fingerprint: two policies with one fingerprint index
// the same entries.
//
// Each composite index of the policy gives every document one more
// entry,
//
//	0x16 <coll-rid:8> <name> <value> <value>... <pk> <id>
//
// <name> is "(/a,/b desc)", which no path can be; there is a <value>
// per path of the index, PKNone where the document has no value there,
// each byte complemented for a descending path, so that the entries sort
// in the index's order (the encodings are prefix-free, and
// complementing reverses the order of prefix-free strings); and <pk>
// <id> is complemented too when the first path is descending, so that
// documents with equal values come in the order every other plan gives
// them (see ordered.go).
//
// # Computed properties
//
// A container's computed properties (query.Computed) are part of its
// policy (Policy.WithComputed, computed.go), as the service has them:
// only a rule or composite index whose path starts with a computed
// property's name indexes it, "/*" never does; its value is computed
// from the item when the item is written (query.Computed.Values) and
// indexed under /<name> like a stored member's; and a stored member that
// has a computed property's name is never indexed. The policy's
// canonical form, and so its fingerprint, names every computed property
// and holds the query of each it indexes, so adding, dropping or
// redefining one changes the entries through the same rebuild as any
// policy change, and the index state's canonical form alone compiles
// the policy writes index under (compileCanonical). A query plan is
// bound with the computed properties of its catalog snapshot; the
// sources serve it only when the index follows the same ones
// (Policy.ServesComputed), else it scans.
//
// # Maintenance
//
// The engine calls Replace and Remove in the transaction that writes or
// deletes the item, so entries and documents change atomically, whoever
// writes: a request, a batch, a patch, the purger. A replace deletes
// only the entries the new version no longer has and adds only the new
// ones. Documents are walked as raw JSON with the lenient helpers of
// package document: the stored bytes are already validated, and a
// strict parser would refuse documents the engine accepts (duplicate
// names).
//
// The policy a write indexes under is the one in the container's index
// state (keyspace.IndexStateKey, read in the write's transaction), not
// Target.Policy, the one in the caller's catalog snapshot: a catalog
// snapshot can be older than a policy change that committed before the
// write's transaction began (on one node between ReplaceContainer's
// commit and its publish; on a shared store for a whole catalog poll).
// The state names the policy by fingerprint, so the usual case costs one
// Get and a comparison; WithPolicyMemo saves even that for the second
// and later items of one transaction.
//
// # Policy changes and rebuilds
//
// A new container gets a ready state (InitState). A policy that indexes
// differently (another fingerprint) goes through SetPolicy, in the
// transaction that stores the catalog change: it deletes all of the
// container's entries and stores the new policy in the state as
// "building", with an empty cursor. From then on every write indexes
// under the new policy. The builder walks the documents in key order in
// batches; each batch (BuildBatch) is one transaction that reads the
// state, reads the next documents after the cursor, writes their
// entries and advances the cursor, so it cannot interleave with a write
// or delete of the same item; it also counts the items it has indexed
// (State.Indexed), which against the container's item count is the
// rebuild's progress the service reports on a container read
// (x-ms-documentdb-collection-index-transformation-progress). When it
// passes the last document the state becomes "ready". The state is in storage, so a restart resumes
// where the cursor stopped; a store written before Ebb had indexes gets
// a "building" state at Open (EnsureState). indexingMode none simply
// drops the entries (nothing to build).
//
// The builder's goroutine stays in the engine (its indexbuild.go): it
// walks the engine's catalog, logs under the engine's container names,
// starts and stops with the engine's other background loops, and its
// test hook is the engine's. What makes a rebuild correct is all in
// BuildBatch and the state it moves, so the loop holds no index
// knowledge beyond "run batches until none is left", and this package
// needs no view of the catalog.
//
// # Queries
//
// Queries use an index only when the state is ready: to narrow a filter
// (SourceFor) or to read an ORDER BY in order (OrderedFor). While
// building they scan, which is slower but returns the same rows.
//
// The query library names the sargable conjuncts of a WHERE
// (query.Plan.IndexHints). SourceFor picks the most selective one on a
// path the container indexes — equality, then IN, then STARTSWITH or a
// range bounded on both sides, then a one-sided range, then IS_DEFINED —
// and turns it into key ranges of the index, in ascending key order
// (plan.go). The Source walks those ranges, fetches each entry's item by
// its <pk> <id> (skipping entries outside the request's partition key;
// an equality's range is cut to that partition to begin with), drops
// items the TTL predicate hides, and yields (entry key, document). The
// executor evaluates the whole WHERE on each document, so the index only
// narrows what is read: the rows are the ones a scan gives. Their order
// can differ where the query leaves it open: a scan yields in (pk, id)
// order, an index in (value, pk, id) order, which is the same for an
// equality.
//
// A hint's path never goes through an array index and is single-valued
// (a document has at most one value at /a/b), and array elements are used
// only for one value (ARRAY_CONTAINS), so no range yields a document
// twice; IN values whose entries coincide (long strings cut to the same
// prefix) share one range.
//
// The source re-checks in the snapshot it reads that the state is still
// ready under the policy it planned for, and fails with ErrChanged if
// not, so it never reads a half-built index. Continuation tokens of
// index plans are marked (FilterToken, OrderedToken) and carry the
// policy fingerprint (TokenPrefix, SplitToken): a page of an index plan
// resumes over the same index, a scan plan's token resumes a scan (even
// if an index is ready by then), and an index token presented after the
// policy changed is refused by the engine with a 400 asking to restart,
// since an index position means nothing to a scan.
//
// # What the engine hands in
//
// A Target is all the package knows of a container: its rid, its
// partition key definition, and the policy of the caller's catalog
// entry. A Query adds the store, the real clock (for the index metrics),
// the request's partition scope and Items: the engine's reader of the
// items visible at the request's instant, built per snapshot. The
// sources read documents only through Items, so TTL is decided in one
// place, the engine's itemReader; this package never decodes an item
// header to decide visibility. The builder and Check are the exception
// by design: they read every stored item, visible or not, because an
// expired item the purger has not reached yet still owns its entries.
//
// # Invariants
//
//   - At every commit, when the state is ready, the entries are exactly
//     those of the stored item versions under the state's policy; while
//     building, the same holds for items at or before the cursor, and
//     items after it have a subset of theirs. Check verifies it (the
//     engine's CheckConsistency runs it over every container).
//   - Writes index under the stored state's policy, never an older
//     catalog snapshot's.
//   - Queries never use a building index, nor one whose policy changed
//     since the query was planned or its continuation was issued, nor
//     one that indexes other computed properties than the plan reads.
//   - The sources return exactly the rows a scan returns; only the order
//     the query leaves open may differ.
//   - An entry's <value> encodings are prefix-free and sort in Cosmos
//     order, so a range of values is a range of keys.
//
// # Testing
//
// The package's own tests cover the policy (matching, fingerprints,
// errors, FuzzIndexingPolicy), the entries a document gets and their
// order (FuzzIndexEntries), their maintenance against a store, and the
// choice of index. The engine's tests drive the whole path: differential
// tests that run random queries over random documents (expired but
// unpurged ones among them) through an index and through a scan and
// demand the same rows, page by page; rebuilds interleaved with writes,
// interrupted by a restart, and written through a stale catalog; and
// CheckConsistency after each step. computed_test.go covers computed
// properties in the policy and the entries; the engine's
// testdata/computed drives them through queries, replaces during
// rebuilds and TTL, and TestComputedStaleCatalog a plan bound with an
// older catalog's definitions.
package index
