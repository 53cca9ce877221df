package accountant

import (
	"math"
	"testing"
)

// Far from the discrete regime (τ = 0) the replace-one DDG is the Gaussian
// mechanism with sensitivity 2Δ₂: four times the add/remove RDP, exactly
// up to rounding (a few ulps, hence 1e-14 relative).
func TestDDGReplaceOneIsFourTimesAddRemove(t *testing.T) {
	p := DDG{Clip: 1, Gamma: 0.01, Beta: 0, Dim: 100, Clients: 10, Sigma: 0.1}
	for _, a := range []float64{1.5, 2, 10} {
		if got, want := p.ReplaceOneRDP(a), 4*p.RDP(a); math.Abs(got-want) > 1e-14*want {
			t.Errorf("α = %g: %v, want %v", a, got, want)
		}
	}
}

// Fixed-size sampling is replace-one, whose sensitivity is 2C: at q = 1 the
// composition is that of the Gaussian mechanism with noise multiplier z/2,
// Steps·α/(2(z/2)²) = Steps·2α/z², exactly.
func TestFixedSizeSamplingDoublesTheSensitivity(t *testing.T) {
	s := SubsampledGaussian{Rate: 1, NoiseMultiplier: 1.5, Steps: 7, Sampling: FixedSize}
	for _, a := range []float64{2, 3, 17} {
		if got, want := s.RDP(a), 7*2*a/(1.5*1.5); math.Abs(got-want) > 1e-15*want {
			t.Errorf("α = %g: %v, want %v", a, got, want)
		}
	}
}

// The generic subsampling bound with the Gaussian's ε(j) = j/(2z²) is
// SubsampledGaussianRDP bit for bit, and it never exceeds the unsampled
// ε(α) of the mechanism it subsamples.
func TestSubsampledRDPIsGeneric(t *testing.T) {
	for _, z := range []float64{0.5, 1, 3} {
		eps := func(j int) float64 { return float64(j) / (2 * z * z) }
		for _, a := range []int{2, 5, 40} {
			for _, q := range []float64{0.001, 0.1, 0.7} {
				if g, want := SubsampledRDP(a, q, eps), SubsampledGaussianRDP(a, q, z); g != want {
					t.Errorf("z %g α %d q %g: %v, want %v", z, a, q, g, want)
				}
			}
		}
	}
	p := DDG{Clip: 1, Gamma: 0.05, Beta: 0, Dim: 10, Clients: 5, Sigma: 0.3}
	eps := func(j int) float64 { return p.ReplaceOneRDP(float64(j)) }
	for _, a := range []int{2, 8, 32} {
		if got := SubsampledRDP(a, 0.05, eps); !(got <= eps(a)) || !(got > 0) {
			t.Errorf("α = %d: subsampled %v, unsampled %v", a, got, eps(a))
		}
	}
}
