//go:build !amd64

package ann

// dot is the inner product of a and b, which have the same length.
func dot(a, b []float32) float32 { return dotGeneric(a, b) }

// squaredL2 is the squared Euclidean distance between a and b, which
// have the same length.
func squaredL2(a, b []float32) float32 { return squaredL2Generic(a, b) }
