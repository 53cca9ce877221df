// Package discretegaussian draws exact samples of the discrete Gaussian
// N_Z(0, σ²), P(x) ∝ exp(−x²/(2σ²)) on the integers, with the algorithm of
// Canonne, Kamath & Steinke ("The discrete Gaussian for differential
// privacy", NeurIPS 2020, Algorithms 1–3), and rounds real vectors to the
// integer grid for the distributed discrete Gaussian mechanism of Kairouz,
// Liu & Steinke (ICML 2021).
//
// # Why this distribution
//
// Under secure aggregation the server sums integers modulo 2^k (package
// secagg), so distributed DP — each client adds a share of the noise and
// only the sum is noisy — needs integer noise. Rounding continuous Gaussian
// noise breaks its analysis (and floating-point samplers leak through their
// low bits, Mironov 2012); the discrete Gaussian with the same σ has the
// same privacy as the continuous one (Canonne et al., Theorem 4: ½(Δ/σ)²-
// concentrated DP for integer sensitivity Δ) and can be sampled exactly
// with integer arithmetic. A sum of n independent discrete Gaussians is not
// a discrete Gaussian, but close to one when σ is a few grid steps;
// accountant.DDG accounts for the gap (Kairouz et al., Theorem 1 and
// Proposition 14).
//
// # Exactness
//
// σ² is taken as an exact rational (every float64 is one), and every
// Bernoulli trial compares a uniform integer with an integer numerator
// (math/big), so the samples follow N_Z(0, σ²) exactly given uniform random
// bits; the bits come from the caller's stream. The expected number of
// trials per sample is a small constant (Canonne et al., §5).
package discretegaussian

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"math/rand/v2"
	"slices"
)

// Sampler draws N_Z(0, σ²) for one σ². It keeps the big integers of its
// draws from one to the next, so it is not safe for concurrent use.
type Sampler struct {
	num, den *big.Int // σ² = num/den
	t        int64    // ⌊σ⌋ + 1, the discrete Laplace scale
	tNum     *big.Int // t·den, so that (|Y|·t·den − num)² is the exponent's numerator
	expDen   *big.Int // 2·num·den·t²
	a, sq    big.Int  // the exponent's numerator and its root
	bern     scratch
}

// New returns the sampler of N_Z(0, variance), variance > 0 and finite (up
// to 2⁶⁰, so that t fits an int64).
func New(variance float64) (*Sampler, error) {
	if !(variance > 0) || variance > 1<<60 {
		return nil, fmt.Errorf("discretegaussian: variance must lie in (0, 2⁶⁰], got %v", variance)
	}
	v := new(big.Rat).SetFloat64(variance)
	num, den := new(big.Int).Set(v.Num()), new(big.Int).Set(v.Denom())
	floor := new(big.Int).Quo(num, den)
	t := new(big.Int).Sqrt(floor).Int64() + 1 // ⌊√⌊σ²⌋⌋ = ⌊σ⌋
	bt := big.NewInt(t)
	s := &Sampler{num: num, den: den, t: t, tNum: new(big.Int).Mul(bt, den)}
	s.expDen = new(big.Int).Mul(num, den)
	s.expDen.Mul(s.expDen, bt).Mul(s.expDen, bt).Lsh(s.expDen, 1)
	return s, nil
}

// Sample returns one draw (Canonne et al., Algorithm 3): Y from the
// discrete Laplace of scale t = ⌊σ⌋ + 1, accepted with probability
// exp(−(|Y| − σ²/t)²/(2σ²)).
func (s *Sampler) Sample(r *rand.Rand) int64 {
	for {
		y := discreteLaplace(s.t, r)
		// (|Y|·t·den − num)² / (2·num·den·t²)
		s.sq.SetInt64(abs(y))
		s.sq.Mul(&s.sq, s.tNum)
		s.sq.Sub(&s.sq, s.num)
		s.a.Mul(&s.sq, &s.sq)
		if s.bern.bernoulliExp(&s.a, s.expDen, r) {
			return y
		}
	}
}

// Fill sets every element of dst to an independent draw.
func (s *Sampler) Fill(dst []int64, r *rand.Rand) {
	for i := range dst {
		dst[i] = s.Sample(r)
	}
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// discreteLaplace draws P(x) ∝ exp(−|x|/t) on the integers (Canonne et al.,
// Algorithm 2 with s = 1).
func discreteLaplace(t int64, r *rand.Rand) int64 {
	for {
		u := r.Int64N(t)
		if !bernoulliExpUint(uint64(u), uint64(t), r) {
			continue
		}
		var v int64
		for bernoulliExpUint(1, 1, r) {
			v++
		}
		x := u + t*v
		neg := r.Uint64()&1 == 1
		if neg && x == 0 {
			continue
		}
		if neg {
			return -x
		}
		return x
	}
}

// The Bernoulli trials below are Canonne et al.'s Algorithm 1 twice over:
// on big integers (scratch), which the Gaussian's acceptance test needs
// when σ² is not a small dyadic rational, and on machine words, which every
// discrete Laplace trial fits. Both draw the same random numbers for the
// same trial — a uniform integer below d by Uint64N while d fits 64 bits,
// by rejection of d's bit length, least significant word first, beyond —
// so a draw does not depend on which of the two computed it.

// bernoulliExpUint draws Bernoulli(exp(−n/d)) for n ≥ 0, d > 0:
// exp(−1) ⌊n/d⌋ times, then the fractional part.
func bernoulliExpUint(n, d uint64, r *rand.Rand) bool {
	for range n / d {
		if !bernoulliExpFracUint(1, 1, r) {
			return false
		}
	}
	return bernoulliExpFracUint(n%d, d, r)
}

// bernoulliExpFracUint draws Bernoulli(exp(−n/d)) for 0 ≤ n ≤ d by counting
// the trials K of Bernoulli(n/(d·K)) until the first failure; the result is
// 1 when K is odd.
func bernoulliExpFracUint(n, d uint64, r *rand.Rand) bool {
	for k := uint64(1); ; k++ {
		if n == 0 {
			return true // the first trial, Bernoulli(0), fails
		}
		hi, lo := bits.Mul64(d, k)
		var hit bool
		if hi == 0 {
			hit = r.Uint64N(lo) < n
		} else {
			hit = uniform128Below(hi, lo, n, r)
		}
		if !hit {
			return k%2 == 1
		}
	}
}

// uniform128Below draws x uniformly from [0, hi·2⁶⁴ + lo), hi > 0, by
// rejection of the bound's bit length, and reports whether x < n.
func uniform128Below(hi, lo, n uint64, r *rand.Rand) bool {
	mask := uint64(math.MaxUint64) >> bits.LeadingZeros64(hi)
	for {
		x0 := r.Uint64()
		x1 := r.Uint64() & mask
		if x1 < hi || x1 == hi && x0 < lo {
			return x1 == 0 && x0 < n
		}
	}
}

// scratch holds the big integers of Bernoulli trials on big numerators and
// denominators, reused from one trial to the next.
type scratch struct {
	q, rem, k, dk, x big.Int
	words            []big.Word
}

// bernoulliExp draws Bernoulli(exp(−n/d)) for integers n ≥ 0, d > 0
// (Canonne et al., Algorithm 1): exp(−1) ⌊n/d⌋ times, then the fractional
// part γ ∈ [0, 1) by counting the trials K of Bernoulli(γ/K) until the
// first failure; the result is 1 when K is odd.
func (s *scratch) bernoulliExp(n, d *big.Int, r *rand.Rand) bool {
	s.q.QuoRem(n, d, &s.rem)
	// Each exp(−1) trial goes on with probability e⁻¹, so no draw reaches
	// the 2⁶⁴th: capping ⌊n/d⌋ there changes no draw.
	q := uint64(math.MaxUint64)
	if s.q.IsUint64() {
		q = s.q.Uint64()
	}
	for range q {
		if !bernoulliExpFracUint(1, 1, r) {
			return false
		}
	}
	if s.rem.IsUint64() && d.IsUint64() {
		return bernoulliExpFracUint(s.rem.Uint64(), d.Uint64(), r)
	}
	return s.bernoulliExpFrac(&s.rem, d, r)
}

// bernoulliExpFrac draws Bernoulli(exp(−n/d)) for 0 ≤ n ≤ d.
func (s *scratch) bernoulliExpFrac(n, d *big.Int, r *rand.Rand) bool {
	for k := int64(1); ; k++ {
		s.dk.Mul(d, s.k.SetInt64(k))
		if !s.bernoulli(n, &s.dk, r) {
			return k%2 == 1
		}
	}
}

// bernoulli draws Bernoulli(n/d): a uniform integer below d is below n.
func (s *scratch) bernoulli(n, d *big.Int, r *rand.Rand) bool {
	if n.Sign() == 0 {
		return false
	}
	if d.IsUint64() {
		return r.Uint64N(d.Uint64()) < n.Uint64()
	}
	return s.uniform(d, r).Cmp(n) < 0
}

// uniform draws uniformly from [0, d) by rejection of d's bit length. The
// result lives in the scratch until the next draw.
func (s *scratch) uniform(d *big.Int, r *rand.Rand) *big.Int {
	length := d.BitLen()
	s.words = slices.Grow(s.words[:0], (length+63)/64)[:(length+63)/64]
	for {
		for i := range s.words {
			s.words[i] = big.Word(r.Uint64())
		}
		if extra := len(s.words)*64 - length; extra > 0 {
			s.words[len(s.words)-1] &= math.MaxUint64 >> extra
		}
		if s.x.SetBits(s.words).Cmp(d) < 0 {
			return &s.x
		}
	}
}

// RandomizedRound sets dst to an unbiased integer rounding of x/gamma: each
// coordinate goes to ⌊v⌋ + 1 with probability v − ⌊v⌋ and to ⌊v⌋
// otherwise. With bound > 0 the draw is repeated until ‖dst‖₂ ≤ bound
// (conditional randomized rounding, Kairouz et al. §4.1: with bound² =
// accountant.DDG's SensitivitySquared()/γ² the repetition succeeds with
// probability at least 1 − β). It returns the number of draws, and fails
// after maxTries.
func RandomizedRound(dst []int64, x []float64, gamma, bound float64, maxTries int, r *rand.Rand) (int, error) {
	if len(dst) != len(x) {
		return 0, fmt.Errorf("discretegaussian: %d outputs for %d inputs", len(dst), len(x))
	}
	if !(gamma > 0) {
		return 0, fmt.Errorf("discretegaussian: gamma must be positive, got %v", gamma)
	}
	for try := 1; try <= maxTries; try++ {
		var norm2 float64
		for i, v := range x {
			s := v / gamma
			f := math.Floor(s)
			q := int64(f)
			if r.Float64() < s-f {
				q++
			}
			dst[i] = q
			norm2 += float64(q) * float64(q)
		}
		if bound <= 0 || norm2 <= bound*bound {
			return try, nil
		}
	}
	return maxTries, fmt.Errorf("discretegaussian: no rounding within norm %v in %d tries", bound, maxTries)
}
