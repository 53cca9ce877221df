package accountant

import (
	"fmt"
	"math"

	"maple/internal/enum"
)

// Sampling is how each step chooses the records it uses.
type Sampling int

const (
	// Poisson includes each record independently with probability q
	// (DP-SGD as Abadi et al. 2016 analyse it; Opacus' and TF Privacy's
	// default), accounted by PoissonGaussianRDP under add/remove-one
	// neighbours, at every order.
	Poisson Sampling = iota
	// FixedSize draws a fixed number of records without replacement
	// (maple's FedAvg server sampling L of K clients), accounted by
	// SubsampledGaussianRDP under replace-one neighbours, at integer orders
	// only. Replacing one record moves a sum of contributions clipped to C
	// by up to 2C, so the noise multiplier relative to that sensitivity is
	// z/2.
	FixedSize
)

var samplingNames = enum.Of[Sampling]("sampling", "poisson", "fixed")

// String returns the sampling scheme's name: poisson or fixed.
func (s Sampling) String() string { return samplingNames.String(s) }

// ParseSampling returns the sampling scheme named s ("poisson" or "fixed").
func ParseSampling(s string) (Sampling, error) { return samplingNames.Parse(s) }

// SubsampledGaussian is Steps adaptive compositions of the subsampled
// Gaussian mechanism: a fraction Rate of the records (examples for DP-SGD,
// clients for DP-FedAvg) is sampled, each contribution is clipped to ℓ2
// norm C, and N(0, z²C²) noise is added to their sum, z = NoiseMultiplier.
type SubsampledGaussian struct {
	Rate            float64
	NoiseMultiplier float64
	Steps           int
	Sampling        Sampling
}

// DPSGD returns the sample-level accounting of DP-SGD (Abadi et al., CCS
// 2016) over a data set of samples examples with (expected) batch size
// batch for the given epochs: q = batch/samples and
// ⌈epochs·samples/batch⌉ steps, as TensorFlow Privacy's
// compute_dp_sgd_privacy counts them.
func DPSGD(samples, batch int, epochs, noiseMultiplier float64, sampling Sampling) SubsampledGaussian {
	q := float64(batch) / float64(samples)
	return SubsampledGaussian{Rate: q, NoiseMultiplier: noiseMultiplier,
		Steps: int(math.Ceil(epochs * float64(samples) / float64(batch))), Sampling: sampling}
}

// DPFedAvg returns the client-level accounting of DP-FedAvg (McMahan et
// al., ICLR 2018): perRound of clients clients sampled per round, each
// update clipped and the sum noised with multiplier z, for rounds rounds.
func DPFedAvg(clients, perRound, rounds int, noiseMultiplier float64, sampling Sampling) SubsampledGaussian {
	return SubsampledGaussian{Rate: float64(perRound) / float64(clients), NoiseMultiplier: noiseMultiplier,
		Steps: rounds, Sampling: sampling}
}

// Validate reports the first impossible field, named as the CLI's flags and
// a scenario's dp section name them.
func (s SubsampledGaussian) Validate() error {
	switch {
	case !(s.Rate > 0 && s.Rate <= 1):
		return fmt.Errorf("sampling rate: must lie in (0, 1] (batch at most the samples), got %v", s.Rate)
	case !(s.NoiseMultiplier > 0) || math.IsInf(s.NoiseMultiplier, 1):
		return fmt.Errorf("noise_multiplier: must be positive and finite, got %v", s.NoiseMultiplier)
	case s.Steps < 0:
		return fmt.Errorf("steps: must be non-negative, got %d", s.Steps)
	case s.Sampling != Poisson && s.Sampling != FixedSize:
		return fmt.Errorf("sampling: %v", s.Sampling)
	}
	return nil
}

// RDP returns the composition's Rényi DP at order alpha: Steps times the
// per-step bound. Fixed-size sampling has a bound at integer orders only and
// returns +Inf elsewhere; its replace-one sensitivity is 2C, so the
// per-step bound is that of noise multiplier z/2.
func (s SubsampledGaussian) RDP(alpha float64) float64 {
	if s.Steps == 0 {
		return 0
	}
	if s.Sampling == FixedSize {
		if alpha != math.Trunc(alpha) || alpha < 2 {
			return math.Inf(1)
		}
		return float64(s.Steps) * SubsampledGaussianRDP(int(alpha), s.Rate, s.NoiseMultiplier/2)
	}
	return float64(s.Steps) * PoissonGaussianRDP(alpha, s.Rate, s.NoiseMultiplier)
}

// Epsilon returns the composition's ε at delta over DefaultOrders with conv,
// and the best order.
func (s SubsampledGaussian) Epsilon(delta float64, conv Conversion) (epsilon, order float64) {
	if err := s.Validate(); err != nil {
		panic("accountant: " + err.Error())
	}
	return BestEpsilon(DefaultOrders(), s.RDP, delta, conv)
}

// NoiseMultiplier returns the smallest noise multiplier z (to relative
// precision 1e-9) at which s, with its own NoiseMultiplier replaced by z,
// is (target, delta)-DP under conv. ε falls as z grows, so z is found by
// bisection; it fails when even z = 10⁶ does not reach the target.
func NoiseMultiplier(s SubsampledGaussian, target, delta float64, conv Conversion) (float64, error) {
	if !(target > 0) || math.IsInf(target, 1) {
		return 0, fmt.Errorf("epsilon: the target must be positive and finite, got %v", target)
	}
	if !(delta > 0 && delta < 1) {
		return 0, fmt.Errorf("delta: must lie in (0, 1), got %v", delta)
	}
	s.NoiseMultiplier = 1
	if err := s.Validate(); err != nil {
		return 0, err
	}
	eps := func(z float64) float64 {
		s.NoiseMultiplier = z
		e, _ := s.Epsilon(delta, conv)
		return e
	}
	lo, hi := 0.0, 1.0
	for eps(hi) > target {
		lo, hi = hi, 2*hi
		if hi > 1e6 {
			return 0, fmt.Errorf("epsilon: %v is out of reach at δ = %v for any noise multiplier up to 10⁶", target, delta)
		}
	}
	for hi-lo > 1e-9*hi {
		mid := lo + (hi-lo)/2
		if eps(mid) > target {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi, nil
}
