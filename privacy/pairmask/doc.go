// Package pairmask implements local graph-homomorphic (LGH) masks, scheme LGH
// of the decentralized-privacy spec §3.3 (paper 001 §III-D, eqs. 49–54; thesis
// §4.3.4, eqs. 4.55–4.60).
//
// # Scheme
//
// Every receiver k (the "orchestrator") splits its neighbours N_k∖{k} into N₊
// and N₋ (SplitRoles) and tells each its role and, unless A is doubly
// stochastic, the weight a_{jk} it gives it. Each pair ℓ ∈ N₊, m ∈ N₋ shares a
// zero-mean Laplace mask g_{ℓm} of variance σ_g² per coordinate, fresh for every
// receiver, iteration and stage. The senders' messages to k are (eqs. 50–51)
//
//	ℓ ∈ N₊:  y_ℓ + (1/a_{ℓk}) Σ_{m∈N₋} g_{ℓm},     m ∈ N₋:  y_m − (1/a_{mk}) Σ_{ℓ∈N₊} g_{ℓm},
//
// built with ApplyMask, so that k's combination Σ_j a_{jk}·(message_j) equals
// Σ_j a_{jk} y_j up to rounding: every receiver gets exactly the non-private
// aggregate (eq. 49 / thesis eq. 4.55, with the stage's own weights), while
// each message on a link carries the sum of |N∓| independent masks divided by
// a_{jk}, of variance |N∓|·σ_g²/a_{jk}² ≥ σ_g² per coordinate.
// The self term a_kk y_k is local and unmasked. A receiver with fewer than two
// neighbours cannot form a pair; SplitRoles reports it so that the caller can
// flag its incoming edges as unmasked (or the topology can require degree ≥ 2).
//
// # Errata corrected here
//
//   - Weight index (eqs. 50–51): the paper divides by a₁₂ and calls it "the
//     weight attributed by agent 1 to agent 2"; in its own convention that is
//     a₂₁. The divisor is the weight the receiver gives the sender, a_{jk} =
//     A.At(j, k).
//   - Scale (eq. 54 / thesis eq. 4.60): (√2/σ_g)·ln(v/v′) is Laplace with scale
//     √2/σ_g and variance 4/σ_g². The intended mask, as App. E's own
//     derivation shows, is (σ_g/√2)·ln(v/v′), of variance σ_g². PaperParams
//     uses it; its Literal flag keeps the printed scale for the tests.
//   - Role split: "N_k = N₊ ∪ N₋" includes k, but the paper's example does not;
//     k is excluded.
//
// # Modes
//
//   - Secure: each agent has an X25519 KeyPair drawn from its own deterministic
//     stream; the two agents of a pair exchange public keys through the
//     receiver, compute the same Secret, and derive the mask of slot
//     (receiver, iteration, stage) from a ChaCha8 stream keyed by
//     HKDF-SHA256(secret, "maple/lgh", receiver ‖ iteration ‖ stage)
//     (MaskStream). The relay learns nothing it could not learn from the
//     public keys; the paper's man-in-the-middle and collusion threats are out
//     of scope.
//   - Paper: the construction of Definition 2, U(0,1)×Gamma(2,1) keys exchanged
//     as e^{−v}, with the corrected scale (PaperKeys, PaperParams). Over the
//     reals the exchange is not secret (v = −ln e^{−v}); it exists for
//     distributional fidelity to the paper.
//   - Oracle: both agents derive the pair secret from the run seed
//     (OracleSecret, drawn from a stream both ends open) and use the same
//     MaskStream; no key messages.
//
// Secrets stay home (DESIGN rule 5): Secret, KeyPair, PaperKeys and
// MaskStream format as placeholders with every fmt verb, and Secret refuses JSON
// encoding. Per-message work (MaskStream.Fill, PaperParams.Mask, ApplyMask)
// fills caller-provided slices and does not allocate.
package pairmask
