package fedavg

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"maple/internal/enum"
	"maple/privacy/accountant"
	"maple/privacy/clip"
	"maple/privacy/discretegaussian"
	"maple/privacy/fixedpoint"
	"maple/privacy/ledger"
)

// This file holds DP-FedAvg (McMahan, Ramage, Talwar & Zhang, "Learning
// differentially private recurrent language models", ICLR 2018): every
// client's model update w_{i−1} − w_k is clipped to ℓ2 norm C, and the sum
// of the clipped updates gets Gaussian noise of standard deviation z·C —
// added by the server (central DP) or, under secure aggregation, in
// shares by the clients, so that only the sum is noisy (distributed DP,
// with the distributed discrete Gaussian of Kairouz, Liu & Steinke, ICML
// 2021). The server divides by the number of clients drawn, whatever
// arrives (their fixed-denominator estimator). Updates travel as
// ψ_k = (w_{i−1} − w_k)/μ (update sharing), so their clip is C/μ.

// DPMode is who adds the noise of DP-FedAvg.
type DPMode int

const (
	// NoDP trains without differential privacy.
	NoDP DPMode = iota
	// CentralDP: the server clips each update (or the clients do, under
	// secure aggregation) and adds N(0, (zC)²) to their sum.
	CentralDP
	// DistributedDP: each client clips its update, rounds it to the
	// secure-aggregation grid and adds its share of discrete Gaussian
	// noise; only the sum the server decodes is noisy.
	DistributedDP
)

var dpModeNames = enum.Of[DPMode]("dp mode", "none", "central", "distributed")

// String returns the scenario-file name of the mode.
func (m DPMode) String() string { return dpModeNames.String(m) }

// ParseDPMode returns the mode named s.
func ParseDPMode(s string) (DPMode, error) { return dpModeNames.Parse(s) }

// StreamDP is the purpose of the streams DP draws from: the server's
// Gaussian noise and count noise (central DP) and each agent's rounding and
// discrete Gaussian noise (distributed DP).
const StreamDP = "dp"

// DP configures DP-FedAvg; its zero value trains without DP.
type DP struct {
	Mode DPMode
	// Clip is C, the ℓ2 bound of each client's update w_{i−1} − w_k (its
	// starting value under adaptive clipping).
	Clip float64
	// NoiseMultiplier is z > 0: the noise on the sum of the clipped updates
	// has standard deviation z·C (under adaptive clipping, z is the total
	// of the pair of queries, Andrew et al. 2021, §3.1).
	NoiseMultiplier float64
	// Adaptive, if set, moves C toward a quantile of the update norms
	// after every round (Andrew et al., NeurIPS 2021): central DP only,
	// where the server sees each update's norm.
	Adaptive *clip.Adaptive
	// Beta is the bias β of the conditional randomized rounding of
	// distributed DP (Kairouz et al. 2021, §4.1); 0 rounds unconditionally.
	Beta float64
	// Delta is the δ of the (ε, δ) guarantee reported.
	Delta float64
	// Relation is the neighbouring relation the guarantee is stated for,
	// and Accountant the accountant that composes the rounds
	// (accounting.go).
	Relation   accountant.Relation
	Accountant ledger.Kind
	// Audit inserts the canary clients of an audit (audit.go).
	Audit Audit
}

// Why DP-FedAvg with secure aggregation is refused under Poisson
// participation, where a round's number of clients n is random and
// depends on whether a given client takes part.
const (
	// PoissonDistributedDP: the distributed discrete Gaussian's shares
	// σ_c = zC/(μ√n) and its grid would follow the round's n.
	PoissonDistributedDP = "distributed DP splits the noise into shares σ_c = zC/(μ√n) over a round's n clients; under poisson participation n is random and changes with whether a client takes part, so the sum's noise would reveal it, and the distributed discrete Gaussian's accountant (Kairouz, Liu & Steinke 2021) is for a fixed number of shares: use central DP, or participation without-replacement"
	// PoissonSecureDP: whether a securely aggregated round releases
	// anything depends on n.
	PoissonSecureDP = "under poisson participation a round of secure aggregation completes only with at least 2 clients and t surviving share holders, both of which depend on its random size and so on whether a client takes part, while the Poisson-sampled Gaussian's accountant assumes every round releases its noisy sum: central DP with poisson participation runs without secure aggregation, or use participation without-replacement"
)

// PoissonAdaptiveClip is why adaptive clipping is refused under Poisson
// participation.
const PoissonAdaptiveClip = "adaptive clipping divides the noisy count of unclipped updates by the round's number of clients, which under poisson participation is random and depends on whether a client takes part (an unbiased estimate would divide by the expected number, as TensorFlow Federated does; maple does not): use a fixed clip, or participation without-replacement"

// maxRoundings bounds the draws of conditional randomized rounding: each
// succeeds with probability at least 1 − β, so 1000 fail together with
// probability at most β¹⁰⁰⁰.
const maxRoundings = 1000

// validateDP checks DP-FedAvg against the rest of the configuration.
func (c *Config) validateDP() error {
	d := &c.DP
	if d.Mode == NoDP {
		return nil
	}
	switch {
	case !(d.Clip > 0) || math.IsInf(d.Clip, 1):
		return fmt.Errorf("clip: must be positive and finite, got %v", d.Clip)
	case !(d.NoiseMultiplier > 0) || math.IsInf(d.NoiseMultiplier, 1):
		return fmt.Errorf("noise_multiplier: must be positive and finite, got %v", d.NoiseMultiplier)
	case !(d.Delta > 0 && d.Delta < 1):
		return fmt.Errorf("delta: must lie in (0, 1), got %v", d.Delta)
	case !(d.Beta >= 0 && d.Beta < 1):
		return fmt.Errorf("beta: must lie in [0, 1), got %v", d.Beta)
	case c.Share != Updates:
		return errors.New("DP-FedAvg clips the clients' updates: share must be updates")
	case c.NoiseStd > 0:
		return errors.New("DP-FedAvg adds its own noise: the replies must carry none")
	case c.Async.Mode != Sync:
		return fmt.Errorf("DP-FedAvg noises the sum of a synchronous round: server %v is asynchronous", c.Async.Mode)
	case c.Importance.Agents != Uniform:
		return errors.New("DP-FedAvg's accountant assumes a uniform sample of clients: importance sampling of agents does not apply")
	case c.Participation == WithReplacement:
		return errors.New("DP-FedAvg's accountant assumes a sample without replacement: an agent drawn twice would count twice")
	case d.Mode == DistributedDP && c.SecAgg == nil:
		return errors.New("distributed DP adds the noise in shares that only secure aggregation sums: it needs secure aggregation")
	case d.Mode == DistributedDP && c.Participation == Poisson:
		return errors.New(PoissonDistributedDP)
	case d.Mode == CentralDP && c.SecAgg != nil && c.Participation == Poisson:
		return errors.New(PoissonSecureDP)
	case d.Audit.Canaries < 0 || d.Audit.Canaries > c.Agents:
		return fmt.Errorf("canaries: must lie in [0, %d], got %d", c.Agents, d.Audit.Canaries)
	case d.Adaptive != nil && c.Participation == Poisson:
		return errors.New(PoissonAdaptiveClip)
	case d.Adaptive != nil && (d.Mode != CentralDP || c.SecAgg != nil):
		return errors.New("adaptive_clip: the server adapts C from each update's norm, which it sees only under central DP without secure aggregation")
	}
	if !c.meanRule() {
		return fmt.Errorf("DP-FedAvg noises the sum of the round's updates; the server's rule %T is not their mean", c.ServerBehaviour())
	}
	if err := ledger.Check(c.DP.Accountant, c.Round(1, c.Draws())); err != nil {
		return err
	}
	if a := d.Adaptive; a != nil {
		if err := a.Validate(); err != nil {
			return err
		}
		if _, err := a.UpdateNoiseMultiplier(d.NoiseMultiplier); err != nil {
			return err
		}
	}
	return nil
}

// clientNoise returns σ_c, the standard deviation (in update units ψ) of
// the noise each of n clients adds under distributed DP: their sum has
// the z·C/μ of central DP.
func (d *DP) clientNoise(mu float64, n int) float64 {
	return d.NoiseMultiplier * d.Clip / mu / math.Sqrt(float64(n))
}

// DDG returns the distributed discrete Gaussian mechanism of a round whose
// noise was added by survivors of n clients, on the grid of enc, for the
// accountant (update units ψ).
func (c *Config) DDG(enc fixedpoint.Encoder, dim, survivors int) accountant.DDG {
	d := &c.DP
	return accountant.DDG{Clip: d.Clip / c.StepSize, Gamma: enc.Step(), Beta: d.Beta, Dim: dim,
		Clients: survivors, Sigma: d.clientNoise(c.StepSize, c.Draws())}
}

// distributedInput turns a client's clipped update x (in place) into its
// secure-aggregation input under distributed DP: x rounded to the grid of
// enc by conditional randomized rounding and noised with the discrete
// Gaussian N_Z(0, (σ_c/γ)²), both drawn from r, so that x is an integer
// multiple of the grid step γ. n is the number of clients drawn. It adds
// the rounding's error to e.Error2 and counts in e.Clipped the coordinates
// beyond the encoder's range: before rounding (where they are clipped to
// it, so that x/γ fits an int64 whatever the grid) or after the noise.
func (d *DP) distributedInput(x []float64, mu float64, enc fixedpoint.Encoder, n int, r *rand.Rand, e *Encoding) error {
	cfg := accountant.DDG{Clip: d.Clip / mu, Gamma: enc.Step(), Beta: d.Beta, Dim: len(x), Clients: n, Sigma: d.clientNoise(mu, n)}
	bound := 0.0
	if d.Beta > 0 {
		bound = math.Sqrt(cfg.SensitivitySquared()) / cfg.Gamma
	}
	beyond := make([]bool, len(x))
	clipped := make([]float64, len(x))
	for i, v := range x {
		clipped[i] = max(-enc.Clip(), min(enc.Clip(), v))
		beyond[i] = clipped[i] != v
	}
	q := make([]int64, len(x))
	if _, err := discretegaussian.RandomizedRound(q, clipped, cfg.Gamma, bound, maxRoundings, r); err != nil {
		return err
	}
	sampler, err := discretegaussian.New((cfg.Sigma / cfg.Gamma) * (cfg.Sigma / cfg.Gamma))
	if err != nil {
		return fmt.Errorf("noise: %w", err)
	}
	for i := range x {
		g := enc.Value(q[i])
		e.Error2 += (g - x[i]) * (g - x[i])
		x[i] = enc.Value(q[i] + sampler.Sample(r))
		if _, out := enc.Quantize(x[i]); out || beyond[i] {
			e.Clipped++
		}
	}
	return nil
}

// privateServer is the server's state under central DP: the clipping norm
// C (which adaptive clipping moves) and the noise stream.
type privateServer struct {
	clip  float64
	noise *rand.Rand
	buf   []float64
}

// UseStreams opens the server's streams that the configuration draws from
// besides its participation stream: under central DP, the noise
// (StreamDP). stream(purpose) is the server's stream for purpose. Both
// engines call it right after NewServer.
func (s *Server) UseStreams(stream func(purpose string) *rand.Rand) {
	if s.cfg.DP.Mode == CentralDP {
		s.priv = &privateServer{clip: s.cfg.DP.Clip, noise: stream(StreamDP)}
	}
}

// Clip returns the current clipping norm C of DP-FedAvg (moved by adaptive
// clipping under central DP), 0 without DP.
func (s *Server) Clip() float64 {
	if s.priv != nil {
		return s.priv.clip
	}
	return s.cfg.DP.Clip
}

func (s *Server) central() *privateServer {
	if s.priv == nil {
		panic("fedavg: central DP without Server.UseStreams")
	}
	return s.priv
}

// combineDP is Combine under central DP without secure aggregation: the
// server clips each update received to C/μ, adds N(0, (z_Δ·C/μ)²) to their
// sum (z_Δ = z, or under adaptive clipping the update query's share of
// it), applies w ← w − μ·sum/L with L the draws, and then, under adaptive
// clipping, moves C by the noisy fraction of unclipped updates.
func (s *Server) combineDP() {
	p := s.central()
	d := &s.cfg.DP
	mu := s.cfg.StepSize
	sum := make([]float64, len(s.model))
	if cap(p.buf) < len(s.model) {
		p.buf = make([]float64, len(s.model))
	}
	buf := p.buf[:len(s.model)]
	received, unclipped := 0, 0
	for _, r := range s.replies {
		if r == nil {
			continue
		}
		received++
		copy(buf, r)
		if _, clipped := clip.L2(buf, p.clip/mu); !clipped {
			unclipped++
		}
		for j, v := range buf {
			sum[j] += v
		}
	}
	z := d.NoiseMultiplier
	if d.Adaptive != nil {
		z, _ = d.Adaptive.UpdateNoiseMultiplier(z) // validated
	}
	clip.AddGaussian(sum, z, p.clip/mu, p.noise)
	s.applySum(sum)
	if d.Adaptive != nil && received > 0 {
		p.clip = d.Adaptive.Update(p.clip, received, unclipped, p.noise)
	}
}

// privateSum is CombineSum under DP: sum holds the decoded sum of the
// included clients' inputs, clipped (and under distributed DP already
// noisy); under central DP the server adds N(0, (zC/μ)²) first.
func (s *Server) privateSum(sum []float64) {
	if s.cfg.DP.Mode == CentralDP {
		p := s.central()
		clip.AddGaussian(sum, s.cfg.DP.NoiseMultiplier, p.clip/s.cfg.StepSize, p.noise)
	}
	s.applySum(sum)
}

// applySum takes DP-FedAvg's step from a noisy sum of updates:
// w ← w − μ·sum/L, L the round's draws.
func (s *Server) applySum(sum []float64) {
	scale := s.cfg.StepSize / float64(s.cfg.Draws())
	for j := range s.model {
		s.model[j] -= scale * sum[j]
	}
}
