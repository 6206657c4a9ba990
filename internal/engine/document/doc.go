// Package document owns what the engine knows about one stored item
// without a container around it: the top-level JSON walking that lets
// Ebb store the client's bytes and append system properties without
// re-encoding (json.go), validating a whole body in one pass (scan.go),
// building objects (object.go), partition-key definitions, values, their
// order-preserving key encoding and the x-ms-documentdb-partitionkey header (pk.go), the
// effective partition key hash the SDKs route by (epk.go), and the
// header stored before each document (header.go: ItemHeader,
// DecodeItem).
//
// # Invariants
//
//   - The JSON helpers take documents that already passed ObjectBody (or
//     json.Valid and CheckShape); they skip values without re-validating
//     them. ObjectBody validates a write's body in one pass (scan.go);
//     FuzzScan holds it to encoding/json and to the separate checks.
//   - No object of a document that passed CheckShape names a property
//     twice (names.go), so Lookup, the index and the query engine, which
//     each find members their own way, read the same id, partition key
//     and ttl. FuzzCheckShape checks that CheckShape refuses exactly what
//     the query engine's parser refuses.
//   - PartitionKey.Encode is order-preserving and DecodePK inverts it;
//     the fuzz target FuzzPartitionKeyHeader checks the header parser and
//     the round trip.
//   - A stored item value is ItemHeader.Append's bytes followed by the
//     document; DecodeItem refuses any other shape instead of guessing.
package document
