// Package homomorphic computes graph-homomorphic (GH) privacy noise, scheme GH of
// the decentralized-privacy spec §3.2 (paper 001 eqs. 43–46, thesis eqs.
// 4.49–4.52 and 3.51; origin Vlaski & Sayed, ICASSP 2021).
//
// # Convention
//
// A is the P×P combination matrix of one stage j, with A.At(m, p) = a_{mp} the
// weight receiver p gives sender m; A is left-stochastic (columns sum to 1) and
// its Perron vector q satisfies Aq = q, q > 0, 1ᵀq = 1. The noise on the
// message m → p is g_{mp}.
//
// # Construction
//
// At each stage and iteration every agent p draws one noise vector g_p (package
// noise, variance σ_g² per coordinate), sends y_p + c_{pm}·g_p to each
// neighbour m and uses y_p + s_p·g_p for its own self term, with
//
//	c_{pm} = EdgeCoefficient(A, form, p, m),   s_p = SelfCoefficient(A, p) = −(1 − a_pp)/a_pp.
//
// The construction is meant to satisfy the GH condition, paper 001 eq. (43):
// the Perron-weighted noise entering the network vanishes,
//
//	Σ_p q_p Σ_m a_{mp} g_{mp} = 0,
//
// so the centroid Σ_p q_p w_p evolves as without noise. Sender m's draw enters
// that sum with the coefficient Σ_{p≠m} q_p a_{mp} c_{mp} − q_m(1 − a_mm).
// Residual evaluates the sum for a given set of draws, for the run-time check.
//
// # Forms
//
// RatioFree (thesis eq. 3.51, Vlaski–Sayed) uses c = 1: every neighbour
// receives the same y_p + g_p, so one broadcast serves all of them. The
// coefficient of g_m is Σ_p q_p a_{mp} − q_m = (Aq)_m − q_m = 0 for every
// left-stochastic A with Aq = q. This is the general, correct form.
//
// Ratio is paper 001 eq. (44), printed as g_{pm} = (a_pm/a_mp)·g_p for the
// message p → m. Read literally in the convention above, receiver m weighs that
// message by a_pm, so g_p enters with Σ_m q_m a_pm²/a_mp, which does not cancel
// even for a doubly-stochastic A unless A is symmetric. The paper swaps the two
// indices of a weight in the same way in eqs. (50)–(51), where a₁₂ is called
// "the weight attributed by agent 1 to agent 2" (spec §3.3, step 4). Undoing
// that swap gives the multiplier implemented here,
//
//	c_{pm} = a_{mp}/a_{pm}  (A.At(m, p)/A.At(p, m): the sender's weight on the
//	                         receiver over the receiver's weight on the sender),
//
// so receiver m's weighted noise is a_{mp}·g_p and g_p enters with
// Σ_m q_m a_{mp} − q_p = (Aᵀq)_p − q_p. That is the coefficient the spec derives
// (§3.2, "Printed ratio form"): it vanishes when Aᵀq = q, i.e. q = 1/P and A
// doubly stochastic, and not for a general left-stochastic A. The two readings,
// and the ratio-free form, coincide for a symmetric A. The ratio also needs
// symmetric support (a_mp > 0 ⇔ a_pm > 0), needs every sender to know the
// weight each receiver gives it, and lets an observer of two differently scaled
// copies of y_p + c·g_p solve for y_p; it exists to reproduce the paper, and
// CheckForm refuses it where it does not cancel.
//
// # Self-weights
//
// The self-correction divides by a_pp, so GH needs a_pp > 0 for every agent,
// not merely for one agent as primitivity does (spec §0). CheckForm enforces it.
//
// # Several active stages
//
// Pass each stage its own A_j. With only one non-identity stage, q is the Perron
// vector of that A. When several stages communicate, exact cancellation of stage
// j's noise in the centroid needs the stage-specific weights of spec §3.2
// ("Which q"); computing them is the caller's job.
package homomorphic
