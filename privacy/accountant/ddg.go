package accountant

import (
	"fmt"
	"math"
)

// DDG describes one round of the distributed discrete Gaussian mechanism
// (Kairouz, Liu & Steinke, "The distributed discrete Gaussian mechanism for
// federated learning with secure aggregation", ICML 2021): each of Clients
// clients clips its d-dimensional update to ℓ2 norm Clip, scales it by
// 1/Gamma, rounds it to integers by conditional randomized rounding with
// bias Beta, and adds discrete Gaussian noise N_Z(0, (Sigma/Gamma)²) per
// coordinate; secure aggregation reveals only the modular sum. Sigma is each
// client's noise standard deviation in the update's units.
type DDG struct {
	Clip    float64
	Gamma   float64
	Beta    float64
	Dim     int
	Clients int
	Sigma   float64
}

// Validate reports the first impossible field.
func (p DDG) Validate() error {
	switch {
	case !(p.Clip > 0) || math.IsInf(p.Clip, 1):
		return fmt.Errorf("clip: must be positive and finite, got %v", p.Clip)
	case !(p.Gamma > 0) || math.IsInf(p.Gamma, 1):
		return fmt.Errorf("gamma: must be positive and finite, got %v", p.Gamma)
	case !(p.Beta >= 0 && p.Beta < 1):
		return fmt.Errorf("beta: must lie in [0, 1), got %v", p.Beta)
	case p.Dim < 1:
		return fmt.Errorf("dim: must be at least 1, got %d", p.Dim)
	case p.Clients < 1:
		return fmt.Errorf("clients: must be at least 1, got %d", p.Clients)
	case !(p.Sigma > 0) || math.IsInf(p.Sigma, 1):
		return fmt.Errorf("noise: must be positive and finite, got %v", p.Sigma)
	}
	return nil
}

// SensitivitySquared returns Δ₂², the squared ℓ2 norm bound of one client's
// rounded update (Theorem 1, eq. 2): min{c² + γ²d/4 +
// √(2 ln(1/β))·γ·(c + γ√d/2), (c + γ√d)²}, the first term only when β > 0
// (conditional rounding retries until the norm is below it).
func (p DDG) SensitivitySquared() float64 {
	c, g, d := p.Clip, p.Gamma, float64(p.Dim)
	plain := (c + g*math.Sqrt(d)) * (c + g*math.Sqrt(d))
	if p.Beta == 0 {
		return plain
	}
	cond := c*c + g*g*d/4 + math.Sqrt(2*math.Log(1/p.Beta))*g*(c+g*math.Sqrt(d)/2)
	return math.Min(cond, plain)
}

// Tau returns τ = 10·Σ_{k=1}^{n−1} exp(−2π²(σ/γ)²·k/(k + 1)) (Theorem 1,
// eq. 3): how far the sum of n discrete Gaussians of variance (σ/γ)² is from
// one discrete Gaussian; it vanishes as σ/γ grows.
func (p DDG) Tau() float64 {
	s2 := (p.Sigma / p.Gamma) * (p.Sigma / p.Gamma)
	var t float64
	for k := 1; k < p.Clients; k++ {
		t += math.Exp(-2 * math.Pi * math.Pi * s2 * float64(k) / float64(k+1))
	}
	return 10 * t
}

// RDP returns one round's Rényi DP at order alpha > 1 (Proposition 14,
// eq. 17, without its ℓ1 term): with s = Δ₂/(√n·σ),
//
//	ε(α) = min{α·s²/2 + τ·d, (α/2)·(s + τ√d)²}.
//
// With τ = 0 it is the Gaussian mechanism's α·s²/2 for the summed noise
// N(0, nσ²).
func (p DDG) RDP(alpha float64) float64 {
	if err := p.Validate(); err != nil {
		panic("accountant: " + err.Error())
	}
	if !(alpha > 1) {
		panic(fmt.Sprintf("accountant: Rényi order %g must exceed 1", alpha))
	}
	s := math.Sqrt(p.SensitivitySquared() / (float64(p.Clients) * p.Sigma * p.Sigma))
	tau, d := p.Tau(), float64(p.Dim)
	return math.Min(alpha*s*s/2+tau*d, alpha/2*(s+tau*math.Sqrt(d))*(s+tau*math.Sqrt(d)))
}
