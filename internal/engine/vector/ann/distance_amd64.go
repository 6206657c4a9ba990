package ann

import "golang.org/x/sys/cpu"

// simd says whether the processor runs the assembly loops: AVX2 for the
// 256-bit lanes, FMA for the fused multiply-adds.
var simd = cpu.X86.HasAVX2 && cpu.X86.HasFMA

//go:noescape
func dotAVX2(a, b *float32, n int) float32

//go:noescape
func squaredL2AVX2(a, b *float32, n int) float32

// dot is the inner product of a and b, which have the same length.
func dot(a, b []float32) float32 {
	if simd && len(a) >= 8 {
		b = b[:len(a)]
		return dotAVX2(&a[0], &b[0], len(a))
	}
	return dotGeneric(a, b)
}

// squaredL2 is the squared Euclidean distance between a and b, which
// have the same length.
func squaredL2(a, b []float32) float32 {
	if simd && len(a) >= 8 {
		b = b[:len(a)]
		return squaredL2AVX2(&a[0], &b[0], len(a))
	}
	return squaredL2Generic(a, b)
}
