// Package feed is the change feed of a container: the latest-version
// index entries and the all-versions-and-deletes change log that the
// engine's item writes keep, the format of a log record, the container's
// changeFeedPolicy, the trimmer that keeps the log within its retention,
// and the feed itself, in both modes, with its continuation.
//
// The engine calls it; it never calls the engine. What it needs of a
// container it is handed ([Container]), item versions it reads only
// through the engine's visible-items reader ([Items]), and the trimmer
// gets the catalog and the clock as functions ([TrimmerConfig]).
//
// # Keys
//
// Three keyspaces of package keyspace are the feed's, each under the
// container's RID:
//
//	Latest   0x13 <coll-rid:8> <lsn:uint64>   <pk> <id> of the item version written at lsn
//	Log      0x14 <coll-rid:8> <lsn:uint64>   change record (record.go)
//	LogTrim  0x15 <coll-rid:8>                first LSN the log still holds (uint64)
//
// # Invariants
//
// The writes are the engine's: its item transaction (put and removeItem
// in the engine's items.go) stores the entries and records described
// here, with [LatestValue] and [Record.Encode], in the same storage
// transaction as the item itself, so the feed and the items can never disagree. The TTL
// purger deletes through the same removeItem, so a purge is a delete in
// the feed too.
//
//   - One latest-version entry per stored item version, keyed by the LSN
//     that wrote it: a write deletes the entry of the version it replaces
//     and adds its own; a delete or a purge removes it.
//   - When the container keeps a log (changeFeedPolicy.retentionDuration
//     > 0), every create, replace (upserts and patches included), delete
//     and purge gets exactly one record, under its own LSN. A purge is a
//     delete marked timeToLiveExpired; an expired version a write finds
//     before the purger does is purged there, with its own LSN and record,
//     before the new version, so the log shows every expiry once.
//   - A record's crts is the container's last _ts, which never goes back,
//     so crts never decreases with the LSN and the records older than the
//     retention are always a prefix of the log.
//   - The log is trimmed only by retention: the trimmer deletes that
//     prefix (the whole log when the policy is removed; a deleted
//     container takes its log with it) and moves the trim mark past it.
//
// # The feed
//
// A continuation is an LSN: the etag of a page is the next LSN to read
// ("42", quoted like any etag), so a client that sends it back in
// If-None-Match gets exactly the changes made after the page it has. ""
// starts from the beginning, "*" from now.
//
// Latest-version mode ("A-IM: Incremental Feed") scans the latest-version
// index from that LSN. Since there is one entry per stored version, in
// LSN order, a changed item appears once, at its last change, and a
// deleted one not at all: the scan is a range scan with nothing to
// deduplicate. Whether an entry's version is served is the engine's to
// say: [Items] answers with the engine's one TTL predicate at the request's
// one instant, and the feed skips what it reports not visible; it never
// decides visibility itself. An entry whose version is missing breaks
// the first invariant and is an internal error.
//
// All-versions-and-deletes mode ("A-IM: Full-Fidelity Feed") scans the
// log from that LSN. Records are stored already rendered as the wire
// JSON, so serving them copies bytes. It needs a log, and starts from
// now or from a continuation, never from the beginning or a point in
// time; a continuation from before the trim mark is refused rather than
// silently skipping changes.
//
// A page ends at its item count or at 4 MB, like the service's response
// limit. The engine charges for what the page read ([Page]).
//
// # The trimmer
//
// The trimmer's loop lives here, not in the engine: everything it
// decides (which containers to visit, how long to sleep, what is due) is
// about the log, and the engine has only to list its containers, give
// its instant and clock, and read a container's last LSN. It is one
// goroutine with a stop and a done channel and a timer set to the next
// record due; [Trimmer] says how it sleeps.
//
// # Testing
//
// The tests here run on an in-memory Pebble store with a stand-in for the
// engine's Items: the record JSON byte for byte, the policy's rules and
// messages, both scans' pages and continuations, the trim of one log and
// the loop on a manual clock. The engine's TestChangeFeedProperty drives
// the whole engine, the purger included, and checks that the
// latest-version feed replays to exactly the visible items and that the
// log accounts for every write, delete and expiry once; test/e2e drives
// the feed with the official SDK.
package feed
