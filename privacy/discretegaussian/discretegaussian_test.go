package discretegaussian

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

func stream(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 5)) }

// pmf returns the exact probabilities of N_Z(0, σ²) on [−w, w] (the mass
// beyond w = ⌈12σ⌉ + 2 is below e^{−72}).
func pmf(sigma2 float64) (map[int64]float64, int64) {
	w := int64(math.Ceil(12*math.Sqrt(sigma2))) + 2
	p := map[int64]float64{}
	var z float64
	for x := -w; x <= w; x++ {
		p[x] = math.Exp(-float64(x*x) / (2 * sigma2))
		z += p[x]
	}
	for x := range p {
		p[x] /= z
	}
	return p, w
}

// Pearson's χ² of 200000 draws against the exact pmf, cells with expected
// count ≥ 20 and the two tails pooled. With ν degrees of freedom, the
// statistic exceeds ν + 6√(2ν) with probability below about 1e-6 (χ²
// tail, Wilson–Hilferty), so a correct sampler passes with certainty for
// practical purposes; the streams are fixed, so the outcome is too.
func TestSamplesFollowTheDiscreteGaussian(t *testing.T) {
	const n = 200000
	for _, sigma2 := range []float64{0.3, 1, 2.5, 30.25} {
		s, err := New(sigma2)
		if err != nil {
			t.Fatal(err)
		}
		counts := map[int64]float64{}
		r := stream(uint64(sigma2 * 100))
		for range n {
			counts[s.Sample(r)]++
		}
		p, w := pmf(sigma2)
		var chi, lowE, lowO float64
		cells := 0
		for x := -w; x <= w; x++ {
			e := n * p[x]
			if e < 20 {
				lowE += e
				lowO += counts[x]
				continue
			}
			chi += (counts[x] - e) * (counts[x] - e) / e
			cells++
		}
		if lowE > 0 {
			chi += (lowO - lowE) * (lowO - lowE) / lowE
			cells++
		}
		nu := float64(cells - 1)
		if chi > nu+6*math.Sqrt(2*nu) {
			t.Errorf("σ² = %v: χ² = %.1f with %v degrees of freedom", sigma2, chi, nu)
		}
	}
}

// Bernoulli(exp(−n/d)) has mean exp(−n/d): 100000 draws are within 5
// standard errors √(p(1−p)/N) (a 6e-7 two-sided chance for a correct
// sampler), for γ below, at and above 1 and with a big denominator.
func TestBernoulliExp(t *testing.T) {
	const n = 100000
	big1 := new(big.Int).Lsh(big.NewInt(3), 100)
	for _, tc := range []struct{ num, den *big.Int }{
		{big.NewInt(1), big.NewInt(3)}, {big.NewInt(1), big.NewInt(1)}, {big.NewInt(7), big.NewInt(2)},
		{big.NewInt(0), big.NewInt(5)}, {new(big.Int).Rsh(big1, 1), big1},
	} {
		p := math.Exp(-float64(tc.num.Int64()) / float64(tc.den.Int64()))
		if !tc.den.IsInt64() {
			p = math.Exp(-0.5)
		}
		r := stream(tc.num.Uint64() + 1)
		hits := 0
		for range n {
			if new(scratch).bernoulliExp(tc.num, tc.den, r) {
				hits++
			}
		}
		se := math.Sqrt(p * (1 - p) / n)
		if got := float64(hits) / n; math.Abs(got-p) > 5*se+1e-12 {
			t.Errorf("exp(−%v/%v): frequency %v, want %v ± %v", tc.num, tc.den, got, p, 5*se)
		}
	}
}

// Randomized rounding is unbiased: the mean of 20000 roundings of 0.3/0.1…
// is within 5 standard errors (each coordinate's variance is f(1 − f),
// f the fractional part); the conditional variant respects its bound.
func TestRandomizedRound(t *testing.T) {
	x := []float64{0.37, -1.21, 2.5, 0}
	gamma := 0.1
	r := stream(9)
	const n = 20000
	sum := make([]float64, len(x))
	dst := make([]int64, len(x))
	for range n {
		if _, err := RandomizedRound(dst, x, gamma, 0, 1, r); err != nil {
			t.Fatal(err)
		}
		for i, q := range dst {
			sum[i] += float64(q)
		}
	}
	for i, v := range x {
		s := v / gamma
		f := s - math.Floor(s)
		se := math.Sqrt(f * (1 - f) / n)
		if got := sum[i] / n; math.Abs(got-s) > 5*se+1e-9 {
			t.Errorf("coordinate %d: mean %v, want %v", i, got, s)
		}
	}
	tries, err := RandomizedRound(dst, x, gamma, 28.2, 1000, r)
	norm := 0.0
	for _, q := range dst {
		norm += float64(q * q)
	}
	if err != nil || math.Sqrt(norm) > 28.2 || tries < 1 {
		t.Errorf("conditional rounding: %v, %d tries, norm %v", err, tries, math.Sqrt(norm))
	}
	if _, err := RandomizedRound(dst, x, gamma, 1, 5, r); err == nil {
		t.Error("impossible bound met")
	}
}

func TestNewRefusesBadVariances(t *testing.T) {
	for _, v := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		if _, err := New(v); err == nil {
			t.Errorf("variance %v accepted", v)
		}
	}
	a, _ := New(4)
	x, y := make([]int64, 50), make([]int64, 50)
	a.Fill(x, stream(3))
	a.Fill(y, stream(3))
	for i := range x {
		if x[i] != y[i] {
			t.Fatal("same stream, different draws")
		}
	}
}

// The sampler draws exactly what the plain big-integer transcription of
// Canonne et al.'s algorithms below draws — the same samples from the same
// random numbers, and as many of them — for variances whose rationals are
// small integers, dyadic, or need 53 bits (so that the acceptance test's
// numbers exceed 64 and 128 bits), from tiny to large.
func TestSamplerDrawsWhatThePlainAlgorithmDraws(t *testing.T) {
	for _, sigma2 := range []float64{1e-3, 0.3, 0.7, 1, 2.5, 4, 17.3, 100, 1234.5678, 1 << 40, 3e15} {
		s, err := New(sigma2)
		if err != nil {
			t.Fatal(err)
		}
		a, b := stream(uint64(sigma2*7)+1), stream(uint64(sigma2*7)+1)
		for i := range 3000 {
			if got, want := s.Sample(a), oracleSample(sigma2, b); got != want {
				t.Fatalf("σ² = %v, draw %d: %d, the plain algorithm %d", sigma2, i, got, want)
			}
		}
		if a.Uint64() != b.Uint64() {
			t.Fatalf("σ² = %v: the two consumed different numbers of random values", sigma2)
		}
	}
}

// oracleSample is Canonne et al.'s Algorithm 3 on math/big throughout,
// allocating as it goes: the specification the sampler is checked against.
func oracleSample(variance float64, r *rand.Rand) int64 {
	v := new(big.Rat).SetFloat64(variance)
	num, den := v.Num(), v.Denom()
	t := new(big.Int).Sqrt(new(big.Int).Quo(num, den)).Int64() + 1
	bt := big.NewInt(t)
	tNum := new(big.Int).Mul(bt, den)
	expDen := new(big.Int).Mul(num, den)
	expDen.Mul(expDen, bt).Mul(expDen, bt).Lsh(expDen, 1)
	one := big.NewInt(1)
	for {
		var y int64
		for {
			u := r.Int64N(t)
			if !oracleBernoulliExp(big.NewInt(u), bt, r) {
				continue
			}
			var k int64
			for oracleBernoulliExp(one, one, r) {
				k++
			}
			x := u + t*k
			neg := r.Uint64()&1 == 1
			if neg && x == 0 {
				continue
			}
			if y = x; neg {
				y = -x
			}
			break
		}
		a := new(big.Int).Mul(big.NewInt(abs(y)), tNum)
		a.Sub(a, num)
		a.Mul(a, a)
		if oracleBernoulliExp(a, expDen, r) {
			return y
		}
	}
}

func oracleBernoulliExp(n, d *big.Int, r *rand.Rand) bool {
	q, rem := new(big.Int).QuoRem(n, d, new(big.Int))
	one := big.NewInt(1)
	for i := new(big.Int); i.Cmp(q) < 0; i.Add(i, one) {
		if !oracleBernoulliExpFrac(one, one, r) {
			return false
		}
	}
	return oracleBernoulliExpFrac(rem, d, r)
}

func oracleBernoulliExpFrac(n, d *big.Int, r *rand.Rand) bool {
	for k := int64(1); ; k++ {
		dk := new(big.Int).Mul(d, big.NewInt(k))
		if n.Sign() != 0 {
			var x *big.Int
			if dk.IsUint64() {
				x = new(big.Int).SetUint64(r.Uint64N(dk.Uint64()))
			} else {
				words := make([]big.Word, (dk.BitLen()+63)/64)
				for {
					for i := range words {
						words[i] = big.Word(r.Uint64())
					}
					if extra := len(words)*64 - dk.BitLen(); extra > 0 {
						words[len(words)-1] &= math.MaxUint64 >> extra
					}
					if x = new(big.Int).SetBits(words); x.Cmp(dk) < 0 {
						break
					}
				}
			}
			if x.Cmp(n) < 0 {
				continue
			}
		}
		return k%2 == 1
	}
}

func BenchmarkSample(b *testing.B) {
	for _, sigma2 := range []float64{100, 17.3} {
		b.Run(fmt.Sprint(sigma2), func(b *testing.B) {
			s, _ := New(sigma2)
			r := stream(1)
			for b.Loop() {
				s.Sample(r)
			}
		})
	}
}
