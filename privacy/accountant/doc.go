// Package accountant computes the privacy guarantees of the seed papers: the
// ε(i) of differential privacy "with high probability" for decentralized and
// federated learning under Laplace noise, its inverse (the σ_g that reaches a
// target ε), the probability level of the guarantee, and the mutual-information
// alternative.
//
// # Decentralized learning (paper 001 eq. 31, thesis eq. 4.34; spec §3.5)
//
// With the sensitivity Δ(j) = ‖w_j − w′_j‖ of the network-stacked iterates of
// two runs that differ in agent 1's dataset, the Laplace ratio chain (eq. 30)
// gives
//
//	ε(i) = (√2·P/σ_g) Σ_{j=0}^{i−1} Δ(j)  ≤  (√2·P/σ_g)(B + B′ + √P‖w^o − w′^o‖)·i,
//
// where the bound on Δ holds with the probability of HighProbabilityLevel.
// RealizedDecentralizedEpsilon evaluates the sum from measured Δ(j);
// DecentralizedEpsilon the bound; DecentralizedSigma solves the bound for σ_g,
// σ_g = √2·P·(B + B′ + √P‖w^o − w′^o‖)·i/ε (spec §3.5). Thesis Ch. 3 (eq. 3.58)
// prints a variant without the factor P and with i+1; it is not implemented.
//
// # Federated learning (thesis eqs. 2.63–2.69; thesis-ch1-2 spec §2.4)
//
//	ε(i) = (√2/σ_g)(B + B′ + ‖w^o − w′^o‖)·i,
//
// the decentralized formula with P = 1: the √P that eq. (2.64) carries over is
// a leftover from Ch. 3 and is 1 for a single server.
//
// # Probability level (Markov's inequality; thesis eq. 2.64, paper 001 eq. 67)
//
// P(‖w̃_i‖ ≥ B) ≤ E‖w̃_i‖²/B², so the sensitivity bound holds with probability
// at least (1 − MSD/B²)(1 − MSD′/B′²), each factor clipped at 0 (a negative
// Markov bound says nothing). MSD must be the mean-square error of the same
// vector whose norm B bounds: the network-stacked E‖w̃_i‖² = Σ_p E‖w^o − w_{p,i}‖²
// for decentralized learning, not the per-agent average.
//
// # Norm convention (spec §3.4, thesis-ch1-2 spec §2.4 caveat 3)
//
// The papers' ratio chain uses a vector Laplace density ∝ exp(−√2‖x‖₂/σ_g). maple
// draws i.i.d. per-coordinate Laplace noise, whose density ratio is bounded by
// exp(√2‖Δ‖₁/σ_g), and ‖Δ‖₁ ≤ √M‖Δ‖₂ for M coordinates. NormFactor returns the
// factor (1 for ℓ2, √M for ℓ1) by which an ε computed from ℓ2 sensitivities must
// be multiplied — and σ_g for a target ε — under the per-coordinate mechanism.
//
// # Mutual information (paper 001 eq. 55, thesis eq. 4.61)
//
// For a Gaussian message of variance σ_w² plus independent Gaussian noise of
// variance σ_g², I(w; w + g) = ½·ln(1 + σ_w²/σ_g²) nats.
//
// The guarantees are vacuous at the papers' settings (P = 30, σ_g = 0.1,
// i = 1000 gives ε ≤ 4.24·10⁵·(B + B′ + √30‖w^o − w′^o‖)); maple reports them
// anyway. Inputs outside the documented domains are bugs in the caller (a
// scenario validator should have refused them) and panic.
package accountant
