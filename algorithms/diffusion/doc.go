// Package diffusion implements decentralized learning with privacy as paper 001
// and thesis chapter 4 define it (spec: decentralized-privacy.md): the
// generalized consensus/CTA/ATC recursion over a network of P agents, with
// random, graph-homomorphic (GH) or local graph-homomorphic (LGH) privacy noise.
//
// # The recursion
//
// With A.At(m, p) = a_mp the weight receiver p gives sender m (A
// left-stochastic, columns summing to 1) and each stage matrix A_j equal to A
// or I (eqs. 21–23, spec §2.2):
//
//	stage 1:  φ_{p,i−1} = Σ_m a_{1,mp} w_{m,i−1}
//	stage 0:  ψ_{p,i}   = Σ_m a_{0,mp} φ_{m,i−1} − μ ∇̂J_p(φ_{p,i−1})
//	stage 2:  w_{p,i}   = Σ_m a_{2,mp} ψ_{m,i}
//
// Consensus is (A0, A1, A2) = (A, I, I) — the gradient is then taken at the
// agent's old w_{p,i−1}, which is φ_p —, CTA is (I, A, I), ATC is (I, I, A), and
// General lets any of the three be A. The gradient oracle is the full local
// gradient, one sample, or a batch of B distinct samples (spec §2.1, §5).
//
// Two steps are behaviours users can plug in, which the agents of both
// engines run alike: each stage's combination (Config.Combine, a Combiner;
// Linear by default) and the adaptation step that subtracts μ∇̂J_p(φ_p) in
// stage 0 (Config.Adapt, an Adapter; SGD by default), whose memory between
// iterations, if it keeps any, is every agent's own AdaptState.
//
// # Message flow
//
// A stage whose matrix is I is a local copy. In a communicating stage every
// agent m sends y_m (w, φ or ψ) plus its privacy noise to each receiver p ≠ m
// with a_mp > 0, and each receiver, once it holds all its senders' messages,
// forms Σ_m a_mp·(message) with its own self term, which is local and never
// sent. The sum runs in ascending sender id whatever the order of arrival
// (DESIGN rule 1), messages of a later stage are buffered, and stages run in
// the order 1, 0, 2. Agent is the per-agent state machine (Begin, Step, an
// Outbox for what it sends); it reuses its buffers, so that a steady-state
// iteration allocates nothing. The actor behaviours live in
// maple/actors/diffusion.
//
// # Privacy schemes (spec §3)
//
//   - Random (scheme R, eqs. 24–26): each sender draws independent noise of
//     standard deviation σ_g for each receiver, stage and iteration. The self
//     term is noise-free unless SelfNoise (the DP definition only involves
//     the neighbours; spec §3.1).
//   - GraphHomomorphic (eqs. 43–46): each agent draws one g_p per stage and
//     iteration; its self term is y_p + c·g_p with c = −(1 − a_pp)/a_pp, and its
//     messages y_p + g_p (ratio-free form, thesis eq. 3.51, the default) or
//     y_p + (a_mp/a_pm)·g_p (the printed ratio form, refused unless A is
//     doubly stochastic with symmetric support; homomorphic.CheckForm). The
//     noise cancels in the Perron-weighted network sum Σ_p q_p Σ_m a_mp g_mp
//     (GHResidual). Which q (spec §3.2): every communicating stage uses the
//     same A, so the stage-specific weights q, A₂q, A₀A₂q are all the Perron
//     vector q of A (Network.Perron).
//   - LocalGraphHomomorphic (eqs. 49–54): pairwise masks that cancel in each
//     receiver's aggregate, so the trajectory is the noise-free one up to
//     rounding; see the next section.
//
// # The LGH protocol
//
// For every receiver k:
//
//  1. In the first round k splits its senders N_k∖{k} into N₊ and N₋
//     (pairmask.SplitRoles, rule alternating or parity) and sends each sender
//     ℓ a Role message: its role, the weight a_{ℓk} that k gives it (omitted
//     when A is symmetric, since ℓ then knows it as its own a_{kℓ}) and its
//     partners, the opposite set. A receiver with fewer than two senders
//     cannot mask: it announces the role Unmasked, its senders send plain
//     values, and it warns (Network.Unmasked lists those edges).
//  2. Secure mode: ℓ answers with its X25519 public key (PublicKey); k relays
//     it to each of ℓ's partners (RelayedKey). Each agent derives one key pair
//     from its own stream, and each pair the same secret; private keys and
//     secrets never leave the agent (package pairmask seals them). Paper
//     mode: in every iteration, for every stage, ℓ draws fresh U(0,1) (N₊) or
//     Gamma(2,1) (N₋) keys per coordinate and partner and sends their public
//     values e^{−v} to k (PaperPublic), which relays them (RelayedPaper).
//     Oracle mode has no messages: roles follow from the public topology and
//     each pair's secret is drawn from a stream named by the pair
//     (pairmask.OracleSecret); it is for speed, not secrecy.
//  3. For each stage and iteration each pair (ℓ, m) derives the same Laplace
//     mask, of standard deviation σ_g per coordinate: HKDF(secret, receiver
//     k, iteration, stage) → ChaCha8 (secure and oracle), or the corrected
//     U×Gamma transform (paper).
//  4. ℓ sends k the value y_ℓ ± (1/a_{ℓk}) Σ_partners g (+ for N₊, − for N₋;
//     pairmask.ApplyMask), and k's weighted sum Σ_ℓ a_{ℓk}·(message) equals
//     the noise-free Σ_ℓ a_{ℓk} y_ℓ.
//
// A sender masks its message to k as soon as it knows its role there and
// holds its partners' keys (or values); messages between two agents are
// delivered in the order they were sent, so a relay never overtakes the role
// announcement it depends on.
//
// Counts of the set-up messages each agent sends (SetupCounts) sit beside the
// paper's bound |N_k| + Σ_{j∈N_k}|N_j|/2 (Network.SetupBound). In secure mode
// a sender sends one public key per receiver, so roles + keys stay within the
// bound; relays, which the bound does not count, are reported separately.
//
// # Errata corrected
//
//   - Laplace scale of eq. (54): masks have scale σ_g/√2 (variance σ_g²), not
//     √2/σ_g (package pairmask, PaperParams).
//   - Ratio GH form of eq. (44): it cancels only for doubly-stochastic A;
//     the ratio-free form is the default and the ratio form is refused
//     elsewhere.
//   - Weights of eqs. (50)–(51): the divisor is a_{ℓk} = A.At(ℓ, k), the
//     weight receiver k gives sender ℓ.
//   - Role split: N₊ ∪ N₋ = N_k∖{k}; the self term is unmasked.
//   - Weight announcement: the paper has k publish weights "if A is not
//     doubly stochastic"; a sender can only know a_{ℓk} untold when A is
//     symmetric, so k announces it unless A is symmetric.
//
// # Random streams (package rng)
//
// Agent p (owner "agent/p", AgentName) draws from
//
//   - "batch": the samples of the sample and batch gradient oracles;
//   - "noise": the random and GH noise, per stage in the order 1, 0, 2 and,
//     under Random, per receiver in ascending order (its self term, with
//     SelfNoise, at its own position);
//   - "lgh-key": the 32 bytes of its X25519 private key (secure mode),
//     unless Privacy.OSKeys draws the key pair from crypto/rand instead;
//   - "lgh-paper/k": its paper-mode keys for receiver k, per iteration, stage
//     and partner in ascending order (one stream per receiver, so that the
//     draws do not depend on the order of the role announcements).
//
// Oracle masks come from the stream ("lgh-pair/lo/hi", "oracle/k") of the pair
// {lo, hi} at receiver k, which both agents open and consume in the same order.
//
// # Reference and metrics
//
// Reference is an independent matrix-form implementation of the whole
// recursion that draws from the same streams in the same order, the oracle of
// the actor tests and the flat baseline of the benchmarks. Measure computes
// the centroid MSD ‖w_c − w^o‖² (w_c = Σ_p q_p w_p), the average MSD, the
// disagreement and the test errors; GHResidual the residual of GH noise.
package diffusion
