// Package clip holds the building blocks of DP-FedAvg (McMahan, Ramage,
// Talwar & Zhang, "Learning differentially private recurrent language
// models", ICLR 2018) and DP-SGD (Abadi et al., CCS 2016) that act on one
// vector: ℓ2 clipping to a norm C, the Gaussian noise of standard deviation
// z·C added to a sum of clipped vectors, and adaptive clipping to a target
// quantile of the norms (Andrew, Thakkar, McMahan & Ramaswamy,
// "Differentially private learning with adaptive clipping", NeurIPS 2021).
//
// Clipping bounds each contribution's ℓ2 sensitivity by C, so a sum of
// clipped vectors plus N(0, (zC)²I) is the Gaussian mechanism with noise
// multiplier z, which package accountant accounts for.
package clip

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/floats"
)

// L2 scales x in place to ℓ2 norm at most c: x ← x·min(1, c/‖x‖₂). It
// returns the norm before clipping and whether x was scaled.
func L2(x []float64, c float64) (norm float64, clipped bool) {
	if !(c > 0) {
		panic(fmt.Sprintf("clip: norm bound %v must be positive", c))
	}
	norm = floats.Norm(x, 2)
	if norm > c {
		floats.Scale(c/norm, x)
		return norm, true
	}
	return norm, false
}

// AddGaussian adds independent N(0, (z·c)²) noise to every coordinate of
// sum: the noise of the Gaussian mechanism with noise multiplier z for a sum
// of vectors clipped to norm c (DP-FedAvg's server noise, DP-SGD's batch
// noise).
func AddGaussian(sum []float64, z, c float64, r *rand.Rand) {
	if !(z >= 0) || !(c > 0) {
		panic(fmt.Sprintf("clip: noise multiplier %v and norm %v", z, c))
	}
	sd := z * c
	for i := range sum {
		sum[i] += sd * r.NormFloat64()
	}
}

// Adaptive is the geometric update of the clipping norm toward the γ-th
// quantile of the clients' update norms (Andrew et al. 2021, Algorithm 1 and
// §3): each round every sampled client reports the bit b_i = [‖Δ_i‖ ≤ C],
// the server forms the noisy fraction
//
//	b̃ = (Σ_i b_i + N(0, σ_b²)) / m
//
// over the m sampled clients and sets C ← C·exp(−η_C(b̃ − γ)). Since the
// bits are also private, the noise on the update sum must be raised: with a
// total noise multiplier z for the pair of queries, the update sum gets
// z_Δ = (z⁻² − (2σ_b)⁻²)^{−1/2} (their Theorem 1, §3.1).
type Adaptive struct {
	// Quantile is γ ∈ (0, 1), the target fraction of unclipped updates.
	Quantile float64
	// LearningRate is η_C > 0.
	LearningRate float64
	// CountNoise is σ_b ≥ 0, the standard deviation of the noise on the
	// count of unclipped updates.
	CountNoise float64
}

// Validate reports the first impossible field, named as a scenario would.
func (a Adaptive) Validate() error {
	switch {
	case !(a.Quantile > 0 && a.Quantile < 1):
		return fmt.Errorf("target_quantile: must lie in (0, 1), got %v", a.Quantile)
	case !(a.LearningRate > 0) || math.IsInf(a.LearningRate, 1):
		return fmt.Errorf("clip_learning_rate: must be positive and finite, got %v", a.LearningRate)
	case !(a.CountNoise >= 0) || math.IsInf(a.CountNoise, 1):
		return fmt.Errorf("count_noise: must be non-negative and finite, got %v", a.CountNoise)
	}
	return nil
}

// Update returns the next clipping norm from the current norm c, the number
// of sampled clients m and the number whose update norm was at most c,
// drawing the count's noise from r (nothing is drawn when CountNoise is 0).
func (a Adaptive) Update(c float64, m, unclipped int, r *rand.Rand) float64 {
	if m < 1 || unclipped < 0 || unclipped > m {
		panic(fmt.Sprintf("clip: %d unclipped of %d", unclipped, m))
	}
	count := float64(unclipped)
	if a.CountNoise > 0 {
		count += a.CountNoise * r.NormFloat64()
	}
	return c * math.Exp(-a.LearningRate*(count/float64(m)-a.Quantile))
}

// UpdateNoiseMultiplier returns z_Δ = (z⁻² − (2σ_b)⁻²)^{−1/2}, the noise
// multiplier of the update sum that keeps the pair (clipped sum, noisy
// count) at total noise multiplier z; it fails when σ_b is too small for z
// (2σ_b ≤ z leaves no budget for the sum).
func (a Adaptive) UpdateNoiseMultiplier(z float64) (float64, error) {
	if a.CountNoise == 0 {
		return 0, fmt.Errorf("count_noise: adaptive clipping under DP needs noise on the count")
	}
	rest := 1/(z*z) - 1/(4*a.CountNoise*a.CountNoise)
	if !(rest > 0) {
		return 0, fmt.Errorf("count_noise: σ_b = %v must exceed z/2 = %v", a.CountNoise, z/2)
	}
	return 1 / math.Sqrt(rest), nil
}
