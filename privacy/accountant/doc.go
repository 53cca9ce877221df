// Package accountant computes privacy guarantees: the seed papers' ε(i) of
// differential privacy "with high probability" for decentralized and
// federated learning under Laplace noise, its inverse (the σ_g that reaches a
// target ε) and the norm convention of the Laplace density; and for Gaussian
// noise the exact (ε, δ) of the Gaussian mechanism and Rényi-DP bounds, with
// and without subsampling.
//
// # Decentralized learning (paper 001 eq. 31, thesis eq. 4.34; spec §3.5)
//
// With the sensitivity Δ(j) = ‖w_j − w′_j‖ of the network-stacked iterates of
// two runs that differ in agent 1's dataset, the Laplace ratio chain (eq. 30)
// gives
//
//	ε(i) = (√2·P/σ_g) Σ_{j=0}^{i−1} Δ(j)  ≤  (√2·P/σ_g)(B + B′ + √P‖w^o − w′^o‖)·i,
//
// where the bound on Δ holds with high probability (Markov's inequality:
// P(‖w̃_i‖ ≥ B) ≤ E‖w̃_i‖²/B², thesis eq. 2.64, paper 001 eq. 67).
// DecentralizedEpsilon evaluates the bound; DecentralizedSigma solves it for σ_g,
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
// # Norm convention (spec §3.4, thesis-ch1-2 spec §2.4 caveat 3)
//
// The papers' ratio chain uses a vector Laplace density ∝ exp(−√2‖x‖₂/σ_g). maple
// draws i.i.d. per-coordinate Laplace noise, whose density ratio is bounded by
// exp(√2‖Δ‖₁/σ_g), and ‖Δ‖₁ ≤ √M‖Δ‖₂ for M coordinates. NormFactor returns the
// factor (1 for ℓ2, √M for ℓ1) by which an ε computed from ℓ2 sensitivities must
// be multiplied — and σ_g for a target ε — under the per-coordinate mechanism.
//
// # Gaussian noise: (ε, δ), exact and Rényi (gaussian.go, rdp.go)
//
// Gaussian noise gives no pure ε: the Laplace formulas above do not apply to
// it. For the Gaussian mechanism with ℓ2 sensitivity Δ and noise N(0, σ²I),
// GaussianDelta is the exact δ(ε) (Balle & Wang 2018, Theorem 8) and
// GaussianEpsilon its inverse. n compositions are exactly one Gaussian
// mechanism of sensitivity √n·Δ (Gaussian DP, Dong, Roth & Su 2022), so
// GaussianComposedMu gives the exact (ε, δ) of a whole run.
//
// The Rényi route composes by addition: GaussianRDP is α/(2z²) for the noise
// multiplier z = σ/Δ (Mironov 2017, Prop. 7), SubsampledGaussianRDP the
// bound for a fixed-size subsample without replacement under replace-one
// neighbours (Wang, Balle & Kasiviswanathan 2019, Theorem 9), which is what
// amplification by partial participation needs, and RDPToDP converts
// (Mironov 2017, Prop. 3).
//
// # DP-SGD and DP-FedAvg (poisson.go, convert.go, dpsgd.go)
//
// PoissonGaussianRDP is the exact RDP of the Poisson-subsampled Gaussian
// mechanism at integer and fractional orders (Mironov, Talwar & Zhang 2019,
// §3.3; add/remove-one neighbours), the accountant of DP-SGD (Abadi et al.
// 2016) in TensorFlow Privacy and Opacus. Two conversions to (ε, δ) are
// offered: Classic (Mironov 2017, Prop. 3) and the tighter Balle2020
// (Balle et al. 2020, Theorem 21); BestEpsilon minimizes over orders
// (DefaultOrders: 1.1 … 10.9 and every integer from 11 to 1024). SubsampledGaussian
// composes a number of steps under Poisson or fixed-size sampling; DPSGD
// (sample level: batch/N, ⌈epochs·N/batch⌉ steps) and DPFedAvg (client
// level: L of K clients per round, one step per round) build it, and
// NoiseMultiplier solves for the z that reaches a target ε. The tests
// match the values TensorFlow Privacy's tutorial README and Opacus'
// documentation print (N = 60000, batch 256, z = 1.12, 60 epochs, δ = 1e-5:
// ε = 2.92) to their printed precision, and check fractional orders against
// quadrature.
//
// # Distributed discrete Gaussian (ddg.go)
//
// DDG is the accounting of Kairouz, Liu & Steinke 2021 for n clients that
// each add discrete Gaussian noise to their scaled, randomly rounded input
// before secure aggregation: the sensitivity after rounding (Theorem 1)
// and the RDP of the sum of n discrete Gaussians, which is not itself a
// discrete Gaussian (Proposition 14, eq. 17, with τ of Theorem 1).
//
// # Relations and sampling (relation.go, dpsgd.go)
//
// Relation (add-remove, replace-one) and Sampling (poisson, fixed) are the
// declared choices every accountant is stated for, with Parse and String
// for scenarios and the command line; Relation.Sensitivity gives the ℓ2
// sensitivity each implies for a sum of clipped contributions. The
// privacy-loss-distribution accountant, the tightest for the Gaussian,
// Laplace and randomized-response mechanisms under either sampling, is the
// subpackage pld.
//
// The guarantees are vacuous at the papers' settings (P = 30, σ_g = 0.1,
// i = 1000 gives ε ≤ 4.24·10⁵·(B + B′ + √30‖w^o − w′^o‖)); maple reports them
// anyway. Inputs outside the documented domains are bugs in the caller (a
// scenario validator should have refused them) and panic.
package accountant
