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
	"math/rand/v2"
)

// Sampler draws N_Z(0, σ²) for one σ².
type Sampler struct {
	num, den *big.Int // σ² = num/den
	t        int64    // ⌊σ⌋ + 1, the discrete Laplace scale
	tNum     *big.Int // t·den, so that (|Y|·t·den − num)² is the exponent's numerator
	expDen   *big.Int // 2·num·den·t²
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
		a := new(big.Int).Mul(big.NewInt(abs(y)), s.tNum)
		a.Sub(a, s.num)
		a.Mul(a, a)
		if bernoulliExp(a, s.expDen, r) {
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
	bt := big.NewInt(t)
	one := big.NewInt(1)
	for {
		u := r.Int64N(t)
		if !bernoulliExp(big.NewInt(u), bt, r) {
			continue
		}
		var v int64
		for bernoulliExp(one, one, r) {
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

// bernoulliExp returns a draw of Bernoulli(exp(−n/d)) for integers n ≥ 0,
// d > 0 (Canonne et al., Algorithm 1): exp(−1) ⌊n/d⌋ times, then the
// fractional part γ ∈ [0, 1) by counting the trials K of Bernoulli(γ/K)
// until the first failure; the result is 1 when K is odd.
func bernoulliExp(n, d *big.Int, r *rand.Rand) bool {
	q, rem := new(big.Int).QuoRem(n, d, new(big.Int))
	one := big.NewInt(1)
	for i := new(big.Int); i.Cmp(q) < 0; i.Add(i, one) {
		if !bernoulliExpFrac(one, one, r) {
			return false
		}
	}
	return bernoulliExpFrac(rem, d, r)
}

// bernoulliExpFrac draws Bernoulli(exp(−n/d)) for 0 ≤ n ≤ d.
func bernoulliExpFrac(n, d *big.Int, r *rand.Rand) bool {
	k := int64(1)
	dk := new(big.Int)
	for {
		dk.Mul(d, big.NewInt(k))
		if !bernoulli(n, dk, r) {
			return k%2 == 1
		}
		k++
	}
}

// bernoulli draws Bernoulli(n/d): a uniform integer below d is below n.
func bernoulli(n, d *big.Int, r *rand.Rand) bool {
	if n.Sign() == 0 {
		return false
	}
	if d.IsUint64() {
		return r.Uint64N(d.Uint64()) < n.Uint64()
	}
	return uniformBig(d, r).Cmp(n) < 0
}

// uniformBig draws uniformly from [0, d) by rejection of d's bit length.
func uniformBig(d *big.Int, r *rand.Rand) *big.Int {
	bits := d.BitLen()
	words := make([]big.Word, (bits+63)/64)
	for {
		for i := range words {
			words[i] = big.Word(r.Uint64())
		}
		if extra := len(words)*64 - bits; extra > 0 {
			words[len(words)-1] &= math.MaxUint64 >> extra
		}
		x := new(big.Int).SetBits(words)
		if x.Cmp(d) < 0 {
			return x
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
