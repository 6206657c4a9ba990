// Package bench owns Ebb's whole-server benchmark harness: the workloads
// (driven through the official Go SDK, azcosmos), the ceiling stub they
// are compared with, the measurements (throughput, latency percentiles,
// disk fsync latency, peak RSS) and the Markdown report that
// `ebb bench` prints and docs/benchmarks.md quotes.
//
// # The ceiling
//
// A figure such as "3,900 point reads per second" says little on its own:
// most of a request's cost on loopback is the client SDK, TLS, HTTP/2 and
// Go's net/http, which Ebb cannot avoid. So every workload runs twice,
// side by side: once against a fresh Ebb and once against the ceiling
// stub, an http.Handler that stores nothing and answers every request the
// SDK sends during the workloads with a canned, correctly shaped Cosmos
// response. The stub is served exactly as Ebb is served (a 127.0.0.1:0
// listener, server.TLSConfig, HTTP/2 over TLS, the same http.Server), it
// reads every request body fully and it sends bodies and headers of the
// same size and shape as Ebb's: an item's etag and session token name
// its version, as any server's do, so HTTP/2's header compression
// (HPACK), which sends a value it has seen as a one-byte index, cannot
// make the stub's headers cheaper than a real server's. The ratio
// Ebb/ceiling therefore isolates Ebb's own cost: routing, signature
// check, engine, storage.
//
// # Workloads
//
// Each workload starts a stub and a fresh Ebb, prepares a container on
// each through its own client, preloads 1 KB items and warms up (the TLS
// handshake, GET / and the SDK's caches fall in the warm-up). The timed
// run, a fixed duration or a fixed count, is split into rounds that
// alternate between the two targets, first one then the other, so that
// load from other processes on the machine falls on both alike. Every
// operation's latency is recorded; percentiles are exact (nearest rank
// over the sorted samples). Sequential workloads use one goroutine; the
// concurrent ones use eight goroutines sharing one client, hence one
// HTTP/2 connection.
//
// # Durability and the fsync bound
//
// By default Ebb runs on durable Pebble in a temporary directory: every
// acknowledged write waits for its WAL fsync. A sequential writer can
// therefore not go faster than one fsync per operation, so Run also
// measures the disk: the latency of appending and fdatasync-ing a 4 KB
// block (what a WAL commit costs), in the same directory as Ebb's data.
// The raw figure flatters: a process that idles during every sync pays to
// wake up again. So write workloads on durable storage also run against a
// third target, the durable ceiling (StartDurableStub): the stub, plus an
// append and fdatasync of each write's body with group commit before the
// reply. Ebb / durable ceiling is the ratio that means something for
// durable writes. With concurrent writers, Pebble's group commit (and the
// durable stub's) shares one sync between all writers waiting for it.
//
// # Wall time
//
// Elsewhere in Ebb time comes only from internal/clock so that tests can
// move it. Here measuring real elapsed time is the point, so the harness
// reads clock.System's monotonic Elapsed and never the wall clock.
package bench
