// Package fixedpoint encodes real vectors as integers modulo 2^k for secure
// aggregation, where the server learns only a modular sum (Bonawitz et al.,
// CCS 2017, §3: inputs in Z_R, R = 2^k here).
//
// Each coordinate is first clipped to [−c, c], then rounded to a multiple of
// the step c/L and stored as the integer q ∈ [−L, L] in two's complement
// modulo 2^k. The number of levels is
//
//	L = ⌊(2^{k−1} − 1)/n⌋
//
// for at most n summands, so that the sum of n encoded values lies in
// [−(2^{k−1} − 1), 2^{k−1} − 1] and decodes without wrapping around:
// decoding the modular sum gives exactly the integer sum of the quantized
// inputs, and that times c/L is the plain sum of the quantized inputs, bit
// for bit. Coordinates beyond the clip are counted, never wrapped: Encode
// returns how many it clipped, so that the caller can report them.
//
// # Rounding
//
// Quantize rounds to the nearest multiple of the step, which is exact for
// values already on the grid (Value(q)) but biased for the others: every
// |x| < step/2 becomes 0, so that a round whose inputs are all below half a
// step sums to exactly 0, with no clipping and no error to report.
// RoundUnbiased rounds at random to one of the two neighbouring multiples,
// with the probabilities that make its expectation x — the stochastic
// rounding that deployed secure aggregation and the distributed discrete
// Gaussian use (Kairouz, Liu & Steinke, ICML 2021, §4.1) — and returns a
// point of the grid, which Quantize then maps to its integer exactly. An
// input rounded so carries its value in expectation however coarse the
// grid; what a coarse grid costs is variance, at most step²/4 per
// coordinate.
//
// Pack and Unpack store k-bit values densely, ⌈k·m/8⌉ bytes for m values:
// the size of a masked input on the wire.
package fixedpoint

import (
	"fmt"
	"math"
	"math/bits"
)

// Encoder is the fixed-point encoding of one secure-aggregation round.
type Encoder struct {
	bits   int
	clip   float64
	levels int64
}

// New returns the encoding modulo 2^bits of inputs clipped to [−clip, clip]
// whose sums have at most summands terms. Errors name the field (bits,
// clip, summands) as a scenario would.
func New(bits int, clip float64, summands int) (Encoder, error) {
	switch {
	case bits < 2 || bits > 64:
		return Encoder{}, fmt.Errorf("bits: must lie in [2, 64], got %d", bits)
	case !(clip > 0) || math.IsInf(clip, 1):
		return Encoder{}, fmt.Errorf("clip: must be positive and finite, got %v", clip)
	case summands < 1:
		return Encoder{}, fmt.Errorf("summands: must be at least 1, got %d", summands)
	}
	half := uint64(1)<<(bits-1) - 1
	if half < uint64(summands) {
		return Encoder{}, fmt.Errorf("bits: %d bits cannot hold a sum of %d inputs without wrapping around; need at least %d", bits, summands, MinBits(summands))
	}
	e := Encoder{bits: bits, clip: clip, levels: int64(half / uint64(summands))}
	if e.Step() < math.SmallestNonzeroFloat64*(1<<52) {
		return Encoder{}, fmt.Errorf("clip: %v over %d levels gives a step of %v, below float64's normal range, where the grid and its sums lose precision; raise the clip or lower the bits", clip, e.levels, e.Step())
	}
	return e, nil
}

// MinBits returns the fewest bits whose modulus holds a sum of n inputs of
// one level each: the smallest k with 2^{k−1} − 1 ≥ n.
func MinBits(n int) int { return bits.Len64(uint64(n)) + 1 }

// Bits returns k.
func (e Encoder) Bits() int { return e.bits }

// Clip returns c.
func (e Encoder) Clip() float64 { return e.clip }

// Levels returns L, the largest encoded magnitude of one input.
func (e Encoder) Levels() int64 { return e.levels }

// Step returns the quantization step c/L.
func (e Encoder) Step() float64 { return e.clip / float64(e.levels) }

// Mask returns 2^k − 1: values modulo 2^k are v & Mask().
func (e Encoder) Mask() uint64 { return math.MaxUint64 >> (64 - e.bits) }

// Quantize returns the integer of x: x clipped to [−c, c], divided by the
// step and rounded to nearest (ties away from zero), and whether x was
// clipped. x must not be NaN.
func (e Encoder) Quantize(x float64) (q int64, clipped bool) {
	if x > e.clip {
		x, clipped = e.clip, true
	} else if x < -e.clip {
		x, clipped = -e.clip, true
	}
	// |x·L/c| ≤ L exactly when |x| ≤ c up to one rounding, and rounding to
	// an integer cannot pass L, an integer.
	q = int64(math.Round(e.scaled(x)))
	return max(-e.levels, min(e.levels, q)), clipped
}

// scaled returns x·L/c for |x| ≤ c, in levels: computed in that order, and
// as x/c·L where x·L overflows (a clip beyond about 10²⁹⁰ with many levels),
// which x/c, at most 1 in magnitude, cannot.
func (e Encoder) scaled(x float64) float64 {
	s := x * float64(e.levels) / e.clip
	if math.IsInf(s, 0) {
		s = x / e.clip * float64(e.levels)
	}
	return s
}

// Encode sets dst[i] to x[i]'s quantized value modulo 2^k and returns the
// number of coordinates clipped. It fails on NaN or on lengths that differ.
func (e Encoder) Encode(dst []uint64, x []float64) (clipped int, err error) {
	if len(dst) != len(x) {
		return 0, fmt.Errorf("fixedpoint: %d outputs for %d inputs", len(dst), len(x))
	}
	mask := e.Mask()
	for i, v := range x {
		if math.IsNaN(v) {
			return 0, fmt.Errorf("fixedpoint: coordinate %d is NaN", i)
		}
		q, c := e.Quantize(v)
		if c {
			clipped++
		}
		dst[i] = uint64(q) & mask
	}
	return clipped, nil
}

// Signed returns the integer in [−2^{k−1}, 2^{k−1}) congruent to v modulo
// 2^k.
func (e Encoder) Signed(v uint64) int64 {
	shift := 64 - e.bits
	return int64(v<<shift) >> shift
}

// RoundUnbiased returns x rounded onto the grid at random without bias,
// given u drawn uniformly from [0, 1): x is clipped to [−c, c] (clipped
// reports it), s is x divided by the step, and the result is Value(⌊s⌋ + 1)
// if u < s − ⌊s⌋ and Value(⌊s⌋) otherwise, so that its expectation over u
// is the clipped x. Its integer, which Quantize recovers from it exactly
// (see Value), lies in [−L, L]. x must not be NaN.
func (e Encoder) RoundUnbiased(x, u float64) (v float64, clipped bool) {
	if x > e.clip {
		x, clipped = e.clip, true
	} else if x < -e.clip {
		x, clipped = -e.clip, true
	}
	s := e.scaled(x)
	f := math.Floor(s)
	q := int64(f)
	if u < s-f {
		q++
	}
	// s exceeds ±L by at most one rounding, so q by at most one level.
	return e.Value(max(-e.levels, min(e.levels, q))), clipped
}

// Value returns the real value q·c/L of the integer q of the grid, computed
// as Decode computes a sum's. Quantize maps it back to q exactly whenever
// |q| ≤ 2⁵⁰: the four roundings of q·(c/L)·L/c move it by less than
// 4·2⁻⁵³·|q| ≤ ½. (Beyond 2⁵⁰ levels — 52 bits or more for few summands —
// a neighbouring level may come back: an error of 2⁻⁵⁰ of the range, below
// float64's resolution of the clip itself.)
func (e Encoder) Value(q int64) float64 { return float64(q) * e.Step() }

// Decode sets dst[i] to the real value of the modular sum sum[i]:
// Signed(sum[i])·c/L.
func (e Encoder) Decode(dst []float64, sum []uint64) {
	if len(dst) != len(sum) {
		panic(fmt.Sprintf("fixedpoint: %d outputs for %d sums", len(dst), len(sum)))
	}
	step := e.Step()
	for i, v := range sum {
		dst[i] = float64(e.Signed(v)) * step
	}
}

// PackedBytes returns ⌈k·m/8⌉, the bytes of m packed k-bit values.
func PackedBytes(k, m int) int { return (k*m + 7) / 8 }

// Pack writes the low k bits of each value of v into dst, least significant
// bit first, and returns the PackedBytes(k, len(v)) bytes it used. dst must
// be that long.
func Pack(dst []byte, v []uint64, k int) []byte {
	n := PackedBytes(k, len(v))
	dst = dst[:n]
	clear(dst)
	pos := 0
	for _, x := range v {
		if k < 64 {
			x &= 1<<k - 1
		}
		for left := k; left > 0; {
			byteIdx, off := pos/8, pos%8
			take := min(8-off, left)
			dst[byteIdx] |= byte(x<<off) & byte((1<<(off+take))-1)
			x >>= take
			pos += take
			left -= take
		}
	}
	return dst
}

// Unpack reads len(dst) k-bit values from src, the inverse of Pack.
func Unpack(dst []uint64, src []byte, k int) error {
	if len(src) != PackedBytes(k, len(dst)) {
		return fmt.Errorf("fixedpoint: %d bytes for %d values of %d bits", len(src), len(dst), k)
	}
	pos := 0
	for i := range dst {
		var x uint64
		for got := 0; got < k; {
			byteIdx, off := pos/8, pos%8
			take := min(8-off, k-got)
			x |= uint64(src[byteIdx]>>off&byte(1<<take-1)) << got
			got += take
			pos += take
		}
		dst[i] = x
	}
	return nil
}
