package ann

import "math"

// The loops below are the index's hot path: a search at 768 dimensions
// spends nearly all its time in them. On amd64 with AVX2 and FMA they
// run in assembly, 32 lanes at a time (distance_amd64.s). Elsewhere what
// pays is keeping the floating-point units busy: eight products per
// iteration into four independent sums (each add waits only on its own
// sum), and slices whose lengths the compiler can see, so no element
// access is bounds-checked.

// Dot is the inner product of a and b, which have the same length, with
// the index's own loops: an exact ranking uses them too.
func Dot(a, b []float32) float32 { return dot(a, b) }

// SquaredL2 is the squared Euclidean distance between a and b, which
// have the same length, with the index's own loops.
func SquaredL2(a, b []float32) float32 { return squaredL2(a, b) }

// dotGeneric is the inner product of a and b, which have the same
// length.
func dotGeneric(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	for len(a) >= 8 && len(b) >= 8 {
		s0 += a[0]*b[0] + a[4]*b[4]
		s1 += a[1]*b[1] + a[5]*b[5]
		s2 += a[2]*b[2] + a[6]*b[6]
		s3 += a[3]*b[3] + a[7]*b[7]
		a, b = a[8:], b[8:]
	}
	for i := range a {
		if i < len(b) {
			s0 += a[i] * b[i]
		}
	}
	return (s0 + s1) + (s2 + s3)
}

// squaredL2Generic is the squared Euclidean distance between a and b,
// which have the same length.
func squaredL2Generic(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	for len(a) >= 8 && len(b) >= 8 {
		d0, d1, d2, d3 := a[0]-b[0], a[1]-b[1], a[2]-b[2], a[3]-b[3]
		d4, d5, d6, d7 := a[4]-b[4], a[5]-b[5], a[6]-b[6], a[7]-b[7]
		s0 += d0*d0 + d4*d4
		s1 += d1*d1 + d5*d5
		s2 += d2*d2 + d6*d6
		s3 += d3*d3 + d7*d7
		a, b = a[8:], b[8:]
	}
	for i := range a {
		if i < len(b) {
			d := a[i] - b[i]
			s0 += d * d
		}
	}
	return (s0 + s1) + (s2 + s3)
}

// normalize scales v to unit length in place, so that cosine distance
// is one inner product; a zero vector stays zero, at distance 1 from
// everything.
func normalize(v []float32) {
	norm := math.Sqrt(float64(dot(v, v)))
	if norm == 0 {
		return
	}
	scale := float32(1 / norm)
	for i := range v {
		v[i] *= scale
	}
}
