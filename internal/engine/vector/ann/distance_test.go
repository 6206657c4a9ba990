package ann

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestDistanceLoops: the distances the index uses (in assembly where
// the processor has it) agree with the portable loops, at every length
// around the loops' strides.
func TestDistanceLoops(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{1, 2, 7, 8, 9, 15, 16, 17, 31, 32, 33, 39, 40, 41, 63, 64, 65, 100, 768, 1536, 4096} {
		a, b := make([]float32, n), make([]float32, n)
		for i := range a {
			a[i], b[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
		}
		for _, f := range []struct {
			name          string
			fast, generic func(a, b []float32) float32
		}{{"dot", dot, dotGeneric}, {"squaredL2", squaredL2, squaredL2Generic}} {
			got, want := f.fast(a, b), f.generic(a, b)
			if d := math.Abs(float64(got - want)); d > 1e-4*(1+math.Abs(float64(want))) {
				t.Errorf("%s of %d dimensions: %v, portable %v", f.name, n, got, want)
			}
		}
	}
}

func BenchmarkDistance768(b *testing.B) {
	rng := rand.New(rand.NewPCG(9, 10))
	x, y := make([]float32, 768), make([]float32, 768)
	for i := range x {
		x[i], y[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
	}
	var sink float32
	b.Run("dot", func(b *testing.B) {
		for b.Loop() {
			sink += dot(x, y)
		}
	})
	b.Run("dot-portable", func(b *testing.B) {
		for b.Loop() {
			sink += dotGeneric(x, y)
		}
	})
	_ = sink
}
