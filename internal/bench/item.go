package bench

import (
	"fmt"
	"strconv"
)

// ItemSize is the size in bytes of every item body a workload writes, as
// the client sends it (Ebb adds about 200 bytes of system properties).
const ItemSize = 1024

// PartitionKeyPath is the partition key path of every benchmark
// container; all items share one logical partition, PartitionKey.
const (
	PartitionKeyPath = "/pk"
	PartitionKey     = "bench"
)

// ItemID is the id of the i-th preloaded item.
func ItemID(i int) string { return fmt.Sprintf("item-%06d", i) }

// Item returns a JSON document of exactly ItemSize bytes with the given
// id, the benchmark partition key and a version number n, so successive
// upserts of one id carry different content.
func Item(id string, n int) []byte { return ItemIn(id, PartitionKey, n) }

// ItemIn is Item in the logical partition pk.
func ItemIn(id, pk string, n int) []byte {
	b := make([]byte, 0, ItemSize)
	b = append(b, `{"id":`...)
	b = strconv.AppendQuote(b, id)
	b = append(b, `,"pk":`...)
	b = strconv.AppendQuote(b, pk)
	b = append(b, `,"n":`...)
	b = strconv.AppendInt(b, int64(n), 10)
	b = append(b, `,"payload":"`...)
	const tail = `"}`
	for i := 0; len(b) < ItemSize-len(tail); i++ {
		b = append(b, 'a'+byte(i%26))
	}
	return append(b, tail...)
}
