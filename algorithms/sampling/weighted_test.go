package sampling

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// The thesis's worked example of systematic sampling (§2.4.3, after eq.
// 2.55): 6 elements, 2 to select, normalized inclusion probabilities
// {15, 81, 26, 42, 20, 16}/200, so progressive totals
// Π = {0.15, 0.96, 1.22, 1.64, 1.84, 2}, and d = 0.57. The targets 0.57 and
// 1.57 fall in [0.15, 0.96) and [1.22, 1.64): the second and fourth elements.
// The thesis says "the first and fourth" — an erratum (spec §1.8, errata 1):
// the stated rule selects the second.
func TestSystematicWorkedExample(t *testing.T) {
	pi := []float64{15, 81, 26, 42, 20, 16}
	for k := range pi {
		pi[k] = 2 * pi[k] / 200
	}
	dst := make([]int, 2)
	systematicAt(dst, pi, nil, 0.57)
	if !slices.Equal(dst, []int{1, 3}) {
		t.Errorf("selected %v (0-based), want [1 3]: the second and fourth elements", dst)
	}
}

// Systematic sampling includes index k for exactly the starts d in a set of
// measure π_k (the interval [Π_{k−1}, Π_k) taken modulo 1). Sweeping d over a
// grid of G midpoints therefore gives inclusion frequencies within 2/G of π_k
// (the set is at most two intervals, each boundary misplacing at most one
// grid cell): a deterministic check of the first-order inclusion
// probabilities, including capped units (π = 1) and a zero one.
func TestSystematicInclusionIsExact(t *testing.T) {
	p := []float64{0.5, 0.3, 0.1, 0.05, 0.05, 0, 0.2, 0.4}
	pi := make([]float64, len(p))
	if err := Inclusion(pi, p, 4); err != nil {
		t.Fatal(err)
	}
	const G = 100000
	counts := make([]int, len(pi))
	dst := make([]int, 4)
	for g := 0; g < G; g++ {
		systematicAt(dst, pi, nil, (float64(g)+0.5)/G)
		for i, k := range dst {
			if i > 0 && dst[i-1] >= k {
				t.Fatalf("d=%v: selection %v not strictly increasing", (float64(g)+0.5)/G, dst)
			}
			counts[k]++
		}
	}
	for k := range pi {
		if got := float64(counts[k]) / G; math.Abs(got-pi[k]) > 2.0/G {
			t.Errorf("index %d: included for a fraction %v of starts, want π = %v", k, got, pi[k])
		}
	}
}

// With a random order (Hartley–Rao's original scheme) the first-order
// inclusion probabilities are unchanged. Over 100000 samples the count of
// index k is Binomial(100000, π_k); 6 standard deviations bound a correct
// sampler's deviation with probability > 1 − 1e-8 per index. The random order
// must also make the adjacent indices 3 and 4, which the fixed order never
// selects together (their intervals lie within one unit), appear together.
func TestSystematicRandomOrderKeepsInclusion(t *testing.T) {
	p := []float64{0.5, 0.3, 0.1, 0.05, 0.05, 0, 0.2, 0.4}
	pi := make([]float64, len(p))
	if err := Inclusion(pi, p, 4); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	const draws = 100000
	counts := make([]int, len(pi))
	dst, order := make([]int, 4), make([]int, len(pi))
	together := 0
	for d := 0; d < draws; d++ {
		Systematic(dst, pi, order, r)
		for i, k := range dst {
			if i > 0 && dst[i-1] >= k {
				t.Fatalf("selection %v not strictly increasing", dst)
			}
			counts[k]++
		}
		if slices.Contains(dst, 3) && slices.Contains(dst, 4) {
			together++
		}
	}
	for k := range pi {
		sd := math.Sqrt(draws * pi[k] * (1 - pi[k]))
		if dev := math.Abs(float64(counts[k]) - draws*pi[k]); dev > 6*sd+1e-9 {
			t.Errorf("index %d included %d times, expected %.0f ± %.0f", k, counts[k], draws*pi[k], sd)
		}
	}
	if together == 0 {
		t.Error("indices 3 and 4 never selected together: the order was not randomized")
	}
}

// The example of thesis §2.1.2 (eqs. 2.3–2.5): drawing B = 2 of N = 4 balls
// one after the other without replacement with sampling probabilities
// π = {1/3, 1/6, 1/3, 1/6} includes them with probabilities {19/30, 11/30,
// 19/30, 11/30}, not B·π = {2/3, 1/3, 2/3, 1/3}: draw-by-draw sampling does not
// have prescribed inclusion probabilities, which is why the thesis (and maple)
// use systematic sampling, whose inclusion probabilities are exactly B·π.
func TestSuccessiveDrawsDoNotGiveInclusionProbabilities(t *testing.T) {
	pi := []float64{1.0 / 3, 1.0 / 6, 1.0 / 3, 1.0 / 6}
	want := []float64{19.0 / 30, 11.0 / 30, 19.0 / 30, 11.0 / 30}
	for n := range pi {
		// eq. 2.5: P(n chosen) = Σ_{m≠n} π_n π_m/(1−π_n) + π_m π_n/(1−π_m).
		var got float64
		for m := range pi {
			if m != n {
				got += pi[n]*pi[m]/(1-pi[n]) + pi[m]*pi[n]/(1-pi[m])
			}
		}
		if math.Abs(got-want[n]) > 1e-15 {
			t.Errorf("ball %d: eq. 2.5 gives %v, want %v", n+1, got, want[n])
		}
	}
	// The systematic sampler with π_k = 2·π reaches B·π exactly.
	incl := make([]float64, len(pi))
	for k := range pi {
		incl[k] = 2 * pi[k]
	}
	const G = 60000
	counts := make([]int, len(pi))
	dst := make([]int, 2)
	for g := 0; g < G; g++ {
		systematicAt(dst, incl, nil, (float64(g)+0.5)/G)
		for _, k := range dst {
			counts[k]++
		}
	}
	for k := range pi {
		if got := float64(counts[k]) / G; math.Abs(got-incl[k]) > 2.0/G {
			t.Errorf("ball %d: systematic inclusion %v, want %v", k+1, got, incl[k])
		}
	}
}

func TestInclusionCapsAndRedistributes(t *testing.T) {
	// n = 3: 3·p = {1.5, 0.9, 0.3, 0.15, 0.15}. Index 0 is capped, the other
	// four share 2 in proportion to p: {1.2, 0.4, 0.2, 0.2}; index 1 is
	// capped too, and the last three share 1: {0.5, 0.25, 0.25}.
	p := []float64{0.5, 0.3, 0.1, 0.05, 0.05}
	got := make([]float64, len(p))
	if err := Inclusion(got, p, 3); err != nil {
		t.Fatal(err)
	}
	want := []float64{1, 1, 0.5, 0.25, 0.25}
	for k := range want {
		if math.Abs(got[k]-want[k]) > 1e-15 {
			t.Fatalf("Inclusion(%v, 3) = %v, want %v", p, got, want)
		}
	}
	// Unnormalized weights give the same result, and no cap is needed when
	// every n·p_k ≤ 1.
	if err := Inclusion(got, []float64{1, 1, 2}, 2); err != nil || got[0] != 0.5 || got[1] != 0.5 || got[2] != 1 {
		t.Errorf("Inclusion([1 1 2], 2) = %v, %v; want [0.5 0.5 1]", got, err)
	}
	if err := Inclusion(got[:3], []float64{0.2, 0, 0.8}, 3); err != ErrTooFewPositive {
		t.Errorf("3 of 3 with a zero weight: err = %v, want ErrTooFewPositive", err)
	}
}

// Independent weighted draws: index k is drawn with probability p_k, so over
// 200000 draws its count is Binomial(200000, p_k); 6 standard deviations as
// above. An index of weight zero is never drawn.
func TestWeightedFrequencies(t *testing.T) {
	p := []float64{0, 2, 5, 0, 1, 2}
	r := rand.New(rand.NewPCG(3, 4))
	const rounds, size = 40000, 5
	dst, u := make([]int, size), make([]float64, size)
	counts := make([]int, len(p))
	for i := 0; i < rounds; i++ {
		Weighted(dst, p, u, r)
		if !slices.IsSorted(dst) {
			t.Fatalf("sample %v not sorted", dst)
		}
		for _, k := range dst {
			counts[k]++
		}
	}
	const draws = rounds * size
	for k, w := range p {
		q := w / 10
		sd := math.Sqrt(draws * q * (1 - q))
		if math.Abs(float64(counts[k])-draws*q) > 6*sd+1e-9 {
			t.Errorf("index %d drawn %d times, expected %.0f ± %.0f", k, counts[k], draws*q, sd)
		}
	}
}

// estimate returns the importance-weighted mini-batch mean of thesis
// eqs. 2.78–2.79, (1/B) Σ_b x_b/(N·p_b), for the drawn indices idx.
func estimate(dst []float64, x [][]float64, p []float64, idx []int) {
	clear(dst)
	N, B := float64(len(x)), float64(len(idx))
	for _, n := range idx {
		for j := range dst {
			dst[j] += x[n][j] / (B * N * p[n])
		}
	}
}

// meanSE returns the mean of xs and its standard error.
func meanSE(xs []float64) (mean, se float64) {
	for _, v := range xs {
		mean += v
	}
	mean /= float64(len(xs))
	var ss float64
	for _, v := range xs {
		ss += (v - mean) * (v - mean)
	}
	return mean, math.Sqrt(ss / float64(len(xs)-1) / float64(len(xs)))
}

// Appendix 2.A, eq. 2.80: sampling B indices independently with
// probabilities p, the estimator (1/B) Σ_b x_b/(N p_b) of x̄ = (1/N) Σ x_n is
// unbiased with variance exactly (1/B) Σ_n p_n ‖x_n/(N p_n) − x̄‖² (σ_n = 0
// for fixed x_n). Both are checked by Monte Carlo: the sample mean of each
// coordinate within 5 standard errors of x̄, and the mean squared error
// within 5 standard errors (estimated from the draws themselves) of the
// formula — a correct sampler fails either with probability < 1e-6. The
// formula is also checked to differ from the uniform-sampling variance by far
// more than that margin, so that a sampler ignoring p would fail.
func TestWithReplacementVarianceMatchesEq280(t *testing.T) {
	x := [][]float64{{1, 0}, {3, -1}, {-2, 4}, {0.5, 0.5}, {6, 2}, {-1, -3}}
	p := []float64{0.05, 0.2, 0.25, 0.05, 0.3, 0.15}
	const B, draws = 3, 200000
	N := float64(len(x))
	mean := make([]float64, 2)
	for _, v := range x {
		mean[0] += v[0] / N
		mean[1] += v[1] / N
	}
	variance := func(q []float64) float64 {
		var s float64
		for n, v := range x {
			d0, d1 := v[0]/(N*q[n])-mean[0], v[1]/(N*q[n])-mean[1]
			s += q[n] * (d0*d0 + d1*d1)
		}
		return s / B
	}
	want := variance(p)
	r := rand.New(rand.NewPCG(5, 6))
	idx, u, est := make([]int, B), make([]float64, B), make([]float64, 2)
	sq, c0, c1 := make([]float64, draws), make([]float64, draws), make([]float64, draws)
	for d := range sq {
		Weighted(idx, p, u, r)
		estimate(est, x, p, idx)
		c0[d], c1[d] = est[0], est[1]
		e0, e1 := est[0]-mean[0], est[1]-mean[1]
		sq[d] = e0*e0 + e1*e1
	}
	for j, c := range [][]float64{c0, c1} {
		if m, se := meanSE(c); math.Abs(m-mean[j]) > 5*se {
			t.Errorf("coordinate %d: estimator mean %v ± %v, want x̄ = %v (biased)", j, m, se, mean[j])
		}
	}
	got, se := meanSE(sq)
	t.Logf("MSE %v ± %v, eq. 2.80 gives %v", got, se, want)
	if math.Abs(got-want) > 5*se {
		t.Errorf("mean squared error %v ± %v, eq. 2.80 gives %v", got, se, want)
	}
	uniform := []float64{1 / N, 1 / N, 1 / N, 1 / N, 1 / N, 1 / N}
	if math.Abs(variance(uniform)-want) < 20*se {
		t.Fatalf("test is not sensitive: uniform variance %v vs %v", variance(uniform), want)
	}
}

// Thesis eq. 1.13: averaging a mini-batch of B samples reduces the variance
// of a single uniformly drawn sample, σ² = (1/N) Σ ‖x_n − x̄‖², by
// τ_B = B with replacement and τ_B = B(N − 1)/(N − B) without. The mean
// squared error of the batch mean is estimated by Monte Carlo for both
// samplers and compared with σ²/τ_B within 5 standard errors.
func TestMiniBatchVarianceReductionTauB(t *testing.T) {
	x := []float64{4, -1, 2.5, 0, 7, -3, 1, 2}
	const B, draws = 3, 200000
	N := float64(len(x))
	var mean, sigma2 float64
	for _, v := range x {
		mean += v / N
	}
	for _, v := range x {
		sigma2 += (v - mean) * (v - mean) / N
	}
	cases := []struct {
		name   string
		draw   func(dst []int, r *rand.Rand)
		tauB   float64
		stream uint64
	}{
		{"with replacement", func(dst []int, r *rand.Rand) { WithReplacement(dst, len(x), r) }, B, 7},
		{"without replacement", func(dst []int, r *rand.Rand) { WithoutReplacement(dst, len(x), r) }, B * (N - 1) / (N - B), 8},
	}
	for _, c := range cases {
		r := rand.New(rand.NewPCG(c.stream, 9))
		idx := make([]int, B)
		sq := make([]float64, draws)
		for d := range sq {
			c.draw(idx, r)
			var m float64
			for _, n := range idx {
				m += x[n] / B
			}
			sq[d] = (m - mean) * (m - mean)
		}
		got, se := meanSE(sq)
		want := sigma2 / c.tauB
		t.Logf("%s: MSE %v ± %v, σ²/τ_B = %v", c.name, got, se, want)
		if math.Abs(got-want) > 5*se {
			t.Errorf("%s: mini-batch MSE %v ± %v, want σ²/τ_B = %v", c.name, got, se, want)
		}
	}
}

// The single-agent worked example of thesis eqs. 1.22–1.24: N = 5, B = 2,
// uniform start p = 1/5, and the first batch {1, 2}. Only the two sampled
// entries are rewritten, to (2/5)·‖∇Q_n‖/(‖∇Q_1‖ + ‖∇Q_2‖), and the
// probabilities still sum to 2/5 + 3/5 = 1.
func TestPartialUpdateWorkedExample(t *testing.T) {
	p := []float64{0.2, 0.2, 0.2, 0.2, 0.2}
	PartialUpdate(p, []int{0, 1}, []float64{3, 1})
	want := []float64{0.4 * 3 / 4, 0.4 * 1 / 4, 0.2, 0.2, 0.2}
	var sum float64
	for n := range p {
		if math.Abs(p[n]-want[n]) > 1e-16 {
			t.Errorf("p = %v, want %v", p, want)
			break
		}
		sum += p[n]
	}
	if math.Abs(sum-1) > 1e-15 {
		t.Errorf("probabilities sum to %v, want 1", sum)
	}
	// A repeated index (sampling with replacement) counts once; zero
	// weights leave p unchanged.
	q := []float64{0.1, 0.3, 0.6}
	PartialUpdate(q, []int{1, 1, 2}, []float64{1, 1, 3})
	if math.Abs(q[1]-0.9/4) > 1e-15 || math.Abs(q[2]-0.9*3/4) > 1e-15 || q[0] != 0.1 {
		t.Errorf("with a repeated index: %v, want [0.1 0.225 0.675]", q)
	}
	PartialUpdate(q, []int{0}, []float64{0})
	if q[0] != 0.1 {
		t.Errorf("zero weights changed p: %v", q)
	}
}

func TestProportional(t *testing.T) {
	dst := make([]float64, 3)
	Proportional(dst, []float64{1, 3, 4})
	if dst[0] != 0.125 || dst[1] != 0.375 || dst[2] != 0.5 {
		t.Errorf("Proportional([1 3 4]) = %v", dst)
	}
	Proportional(dst, []float64{0, 0, 0})
	if dst[0] != 1.0/3 || dst[2] != 1.0/3 {
		t.Errorf("all-zero weights give %v, want uniform", dst)
	}
}

// plainInclusion is Inclusion as first written, one pass to count the
// positive p's and, per threshold, one to tally and one to look for a p
// between the next threshold and this one: Inclusion must give its results
// bit for bit.
func plainInclusion(dst, p []float64, n int) error {
	positive := 0
	for _, v := range p {
		if v > 0 {
			positive++
		}
	}
	if positive < n {
		return ErrTooFewPositive
	}
	threshold := math.Inf(1)
	capped, rest := 0, 0.0
	for {
		capped, rest = 0, 0
		for _, v := range p {
			if v >= threshold {
				capped++
			} else {
				rest += v
			}
		}
		if capped == n {
			break
		}
		next := rest / float64(n-capped)
		if !slices.ContainsFunc(p, func(v float64) bool { return v < threshold && v >= next }) {
			break
		}
		threshold = next
	}
	scale := 0.0
	if capped < n {
		scale = float64(n-capped) / rest
	}
	for k, v := range p {
		if v >= threshold {
			dst[k] = 1
		} else {
			dst[k] = v * scale
		}
	}
	return nil
}

// Inclusion gives plainInclusion's inclusion probabilities bit for bit, and
// its errors, on random weights with zeros, ties and a few large weights
// that cap one index after another, for every sample size.
func TestInclusionIsThePlainAlgorithm(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for trial := range 400 {
		p := make([]float64, 1+r.IntN(120))
		for k := range p {
			switch r.IntN(10) {
			case 0:
				p[k] = 0
			case 1:
				p[k] = 0.5 // ties
			case 2:
				p[k] = math.Exp(10 * r.Float64()) // large: capped
			default:
				p[k] = r.Float64()
			}
		}
		got, want := make([]float64, len(p)), make([]float64, len(p))
		for n := 1; n <= len(p); n++ {
			errGot, errWant := Inclusion(got, p, n), plainInclusion(want, p, n)
			if errGot != errWant {
				t.Fatalf("trial %d, n %d: error %v, plain %v", trial, n, errGot, errWant)
			}
			for k := range p {
				if math.Float64bits(got[k]) != math.Float64bits(want[k]) {
					t.Fatalf("trial %d, n %d: π = %v, plain %v", trial, n, got, want)
				}
			}
		}
	}
}

// BenchmarkImportanceDraw times a mini-batch draw of importance sampling
// without replacement as a FedAvg agent makes it (fedavg's drawer): the
// inclusion probabilities of 5 samples among 100 with unequal
// probabilities, then Hartley–Rao systematic sampling in index order.
func BenchmarkImportanceDraw(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	p := make([]float64, 100)
	for k := range p {
		p[k] = r.Float64()
	}
	Proportional(p, p)
	pi, dst := make([]float64, len(p)), make([]int, 5)
	for b.Loop() {
		if err := Inclusion(pi, p, len(dst)); err != nil {
			b.Fatal(err)
		}
		Systematic(dst, pi, nil, r)
	}
}

// Systematic sampling in index order (systematicInOrder) selects what the
// general walk selects with the identity order, on inclusion probabilities
// with zeros and capped entries, for every sample size and many starts,
// among them starts that put targets on interval boundaries.
func TestSystematicInOrderIsTheIdentityOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for trial := range 200 {
		p := make([]float64, 1+r.IntN(60))
		for k := range p {
			switch r.IntN(5) {
			case 0:
			case 1:
				p[k] = 0.25
			default:
				p[k] = math.Exp(3 * r.NormFloat64())
			}
		}
		identity := make([]int, len(p))
		for k := range identity {
			identity[k] = k
		}
		pi := make([]float64, len(p))
		for n := 1; n <= len(p); n++ {
			if Inclusion(pi, p, n) != nil {
				break
			}
			got, want := make([]int, n), make([]int, n)
			for i := range 20 {
				d := r.Float64()
				if i < 2 { // targets on the boundaries of capped entries
					d = float64(i) / 2
				}
				systematicAt(got, pi, nil, d)
				systematicAt(want, pi, identity, d)
				if !slices.Equal(got, want) {
					t.Fatalf("trial %d, n %d, d %v: in order %v, identity order %v", trial, n, d, got, want)
				}
			}
		}
	}
}
