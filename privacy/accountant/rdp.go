package accountant

import (
	"fmt"
	"math"
)

// MaxOrder is the largest Rényi order RDPToDP and DefaultOrders search.
// The Gaussian mechanism's RDP ρ·α (ρ = T/(2z²) after T rounds) converts
// best at α* = 1 + √(ln(1/δ)/ρ), which stays below 1024 for ρ > 2.7·10⁻⁵
// at δ = 10⁻¹²; beyond it the guarantee is already ε < 0.06.
const MaxOrder = 1024

// GaussianRDP returns the Rényi differential privacy of the Gaussian
// mechanism at order alpha > 1 with noise multiplier z = σ/Δ: α/(2z²)
// (Mironov 2017, "Rényi differential privacy", Proposition 7). RDP composes
// by addition: T rounds give T·GaussianRDP(α, z).
func GaussianRDP(alpha, z float64) float64 {
	if !(alpha > 1) {
		panic(fmt.Sprintf("accountant: Rényi order %g must exceed 1", alpha))
	}
	mustPositive("z", z)
	return alpha / (2 * z) / z // not z·z, which underflows to 0 at z = 1e-300
}

// SubsampledGaussianRDP returns an upper bound on the Rényi differential
// privacy at integer order alpha ≥ 2 of the Gaussian mechanism with noise
// multiplier z applied to a subsample of a fraction q ∈ (0, 1] of the
// records drawn without replacement, under the replace-one neighbouring
// relation: Theorem 9 of Wang, Balle & Kasiviswanathan 2019 ("Subsampled
// Rényi differential privacy and analytical moments accountant"), with the
// Gaussian's ε(j) = j/(2z²) and ε(∞) = ∞:
//
//	ε′(α) ≤ 1/(α−1) · log(1 + q²·C(α,2)·min(4(e^{ε(2)} − 1), 2e^{ε(2)})
//	                      + Σ_{j=3}^{α} 2·q^j·C(α,j)·e^{(j−1)ε(j)}).
//
// That bound is for a fixed-size sample without replacement, which is how
// maple's FedAvg server draws its L of K agents (Poisson sampling bounds such
// as Mironov, Talwar & Zhang 2019 assume another sampling scheme and the
// add/remove relation). The unsampled bound GaussianRDP also holds (Rényi
// divergence is quasi-convex in the pair of mixtures), so the smaller of the
// two is returned; at q = 1 that is GaussianRDP.
func SubsampledGaussianRDP(alpha int, q, z float64) float64 {
	if alpha < 2 {
		panic(fmt.Sprintf("accountant: integer Rényi order %d must be at least 2", alpha))
	}
	if !(q > 0 && q <= 1) {
		panic(fmt.Sprintf("accountant: sampling fraction q = %g must lie in (0, 1]", q))
	}
	plain := GaussianRDP(float64(alpha), z)
	if q == 1 {
		return plain
	}
	return SubsampledRDP(alpha, q, func(j int) float64 { return float64(j) / (2 * z * z) })
}

// SubsampledRDP returns Theorem 9 of Wang, Balle & Kasiviswanathan 2019 for
// any mechanism whose Rényi DP at integer order j ≥ 2 under the replace-one
// relation is eps(j) (and unbounded at order ∞), applied to a fraction
// q ∈ (0, 1) of the records drawn without replacement:
//
//	ε′(α) ≤ 1/(α−1) · log(1 + q²·C(α,2)·min(4(e^{ε(2)} − 1), 2e^{ε(2)})
//	                      + Σ_{j=3}^{α} 2·q^j·C(α,j)·e^{(j−1)ε(j)}),
//
// or eps(α) itself when that is smaller (the unsampled bound holds too).
func SubsampledRDP(alpha int, q float64, eps func(j int) float64) float64 {
	logQ := math.Log(q)
	e2 := eps(2)
	// log of min(4(e^{ε(2)} − 1), 2e^{ε(2)}), without overflow.
	second := math.Min(math.Log(4)+e2+math.Log(-math.Expm1(-e2)), math.Ln2+e2)
	terms := []float64{0, 2*logQ + logBinomial(alpha, 2) + second}
	for j := 3; j <= alpha; j++ {
		terms = append(terms, math.Ln2+float64(j)*logQ+logBinomial(alpha, j)+float64(j-1)*eps(j))
	}
	return math.Min(eps(alpha), logSumExp(terms)/float64(alpha-1))
}

// RDPToDP converts a Rényi DP curve into (ε, δ)-DP: ε = min over integer
// orders α ∈ [2, MaxOrder] of rdp(α) + ln(1/δ)/(α − 1) (Mironov 2017,
// Proposition 3). It returns ε and the order that achieves it.
func RDPToDP(rdp func(alpha int) float64, delta float64) (epsilon float64, order int) {
	mustProbability("δ", delta)
	epsilon = math.Inf(1)
	for a := 2; a <= MaxOrder; a++ {
		if e := rdp(a) + math.Log(1/delta)/float64(a-1); e < epsilon {
			epsilon, order = e, a
		}
	}
	return epsilon, order
}

// logBinomial returns ln C(n, k).
func logBinomial(n, k int) float64 {
	return logFactorial(n) - logFactorial(k) - logFactorial(n-k)
}

// logFactorials holds ln n! = ln Γ(n + 1) for the n that the binomial sums
// of integer orders up to a few times MaxOrder need: the sums over j ≤ α of
// every order α call it O(α²) times per conversion, and math.Lgamma was
// most of an accountant's time. The table holds math.Lgamma's own values,
// so the results are unchanged.
var logFactorials = func() []float64 {
	t := make([]float64, 4*MaxOrder+1)
	for n := range t {
		t[n], _ = math.Lgamma(float64(n + 1))
	}
	return t
}()

// logFactorial returns ln n!, n ≥ 0.
func logFactorial(n int) float64 {
	if n < len(logFactorials) {
		return logFactorials[n]
	}
	v, _ := math.Lgamma(float64(n + 1))
	return v
}

// logSumExp returns ln Σ e^{x_i} without overflow, and accurately when one
// term dominates: m + log1p(Σ_{i≠k} e^{x_i − m}) with m = x_k the largest.
func logSumExp(xs []float64) float64 {
	k := 0
	for i, x := range xs {
		if x > xs[k] {
			k = i
		}
	}
	if math.IsInf(xs[k], 0) || math.IsNaN(xs[k]) {
		return xs[k] // +Inf: a term overflowed; −Inf: every term is 0
	}
	var s float64
	for i, x := range xs {
		if i != k {
			s += math.Exp(x - xs[k])
		}
	}
	return xs[k] + math.Log1p(s)
}
