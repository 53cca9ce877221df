package accountant

import (
	"math"
	"strings"
	"testing"
)

// Far from the discrete regime (σ/γ = 10, τ ≈ 10·n·e^{−986} = 0) the DDG
// is the Gaussian mechanism with sensitivity Δ₂ and noise √n·σ: ε(α) =
// α·Δ₂²/(2nσ²), and without rounding bias Δ₂ = c + γ√d. Rounding (≈ 4u),
// hence 1e-14 relative.
func TestDDGIsGaussianAtLargeNoise(t *testing.T) {
	p := DDG{Clip: 1, Gamma: 0.01, Beta: 0, Dim: 100, Clients: 10, Sigma: 0.1}
	if tau := p.Tau(); tau != 0 {
		t.Fatalf("τ = %g", tau)
	}
	delta := 1 + 0.01*10
	for _, a := range []float64{1.5, 2, 10} {
		want := a * delta * delta / (2 * 10 * 0.01)
		if got := p.RDP(a); math.Abs(got-want) > 1e-14*want {
			t.Errorf("α = %g: %v, want %v", a, got, want)
		}
	}
}

// τ by hand for n = 2, σ/γ = 0.5: 10·e^{−2π²·0.25·½} = 10·e^{−π²/4}.
// Conditional rounding tightens the sensitivity: with β = e^{−0.5}
// (√(2 ln(1/β)) = 1), c = 1, γ = 0.1, d = 4 the bound is
// 1 + 0.01 + 0.1·1.1 = 1.12 < (1 + 0.2)² = 1.44.
func TestDDGByHand(t *testing.T) {
	p := DDG{Clip: 1, Gamma: 0.1, Beta: math.Exp(-0.5), Dim: 4, Clients: 2, Sigma: 0.05}
	if got, want := p.Tau(), 10*math.Exp(-math.Pi*math.Pi/4); math.Abs(got-want) > 1e-15*want {
		t.Errorf("τ = %v, want %v", got, want)
	}
	if got := p.SensitivitySquared(); math.Abs(got-1.12) > 1e-15 {
		t.Errorf("Δ₂² = %v, want 1.12", got)
	}
	p.Beta = 0
	if got := p.SensitivitySquared(); math.Abs(got-1.44) > 1e-15 {
		t.Errorf("Δ₂² without bias = %v, want 1.44", got)
	}
	// More clients at the same per-client noise: more total noise, but τ
	// grows; more noise per client always helps.
	small, more := p, p
	more.Sigma = 0.2
	if !(more.RDP(4) < small.RDP(4)) {
		t.Errorf("more noise: %v ≥ %v", more.RDP(4), small.RDP(4))
	}
	bad := p
	bad.Beta = 1
	if err := bad.Validate(); err == nil || !strings.HasPrefix(err.Error(), "beta:") {
		t.Errorf("β = 1: %v", err)
	}
}
