package throughput

// The cost model: every response's x-ms-request-charge comes from here.
// The figures follow the service's published shape: a 1 KB point read
// costs 1 RU, a 1 KB write about 5.7 RU, and both grow with size;
// queries pay for the documents they load and the bytes they return.

const (
	CatalogRead  = 1.0
	CatalogWrite = 5.0
	// Error is what a request that did no work costs.
	Error = 1.0
)

func kilobytes(n int) float64 {
	kb := float64(n) / 1024
	if kb < 1 {
		return 1
	}
	return kb
}

// Read is the cost of a point read of n bytes.
func Read(n int) float64 { return kilobytes(n) }

// Write is the cost of writing (or deleting) a document of n bytes.
func Write(n int) float64 { return 5.71 * kilobytes(n) }

// Query is the cost of a query page that loaded docs documents
// totalling loaded bytes and returned out bytes.
func Query(docs, loaded, out int) float64 {
	return 2.31 + 0.03*float64(docs) + float64(loaded)/1024*0.1 + float64(out)/1024*0.05
}
