// Package gamma implements the Gamma mechanism of paper 003 (Ayache and El
// Rouayheb, "Private weighted random walk stochastic gradient descent",
// Definition 2) and its privacy statement, Lemma 1.
//
// # The mechanism
//
// A node privatizes one positive scalar, the Lipschitz constant L of its
// gradient, by releasing R(L) ~ Gamma(shape L/θ, scale θ) once: E[R] = L and
// Var[R] = Lθ, and R > 0, so a Metropolis–Hastings ratio of released values is
// always defined. The mechanism is scalar; there is no multivariate density
// and no dimension parameter (spec random-walk §0).
//
// Draws are returned as ln R. When θ ≫ L the shape L/θ is tiny and R itself
// underflows float64 (the ratio of two such values would be 0/0); ln R stays
// finite. Shapes below 1 use ln G(a) = ln G(a+1) + ln(U)/a, U uniform on (0, 1].
// gonum's distuv.Gamma takes a RATE β = 1/θ, not a scale (a verified pitfall,
// DESIGN.md); TestSampleMoments would catch the confusion.
//
// # Lemma 1
//
// For inputs in [inf L, sup L] the mechanism is (ε, δ)-LDP whenever δ is at
// least
//
//	δ(ε, θ) = max{ Q(sup L/θ, t₊), P(inf L/θ, t₋) },
//	ln t± = (±ε + ln Γ(sup L/θ) − ln Γ(inf L/θ))·θ/(sup L − inf L),
//
// with P and Q the regularized lower and upper incomplete gamma functions:
// the two tails P[privacy loss ≥ ε] of the extreme pair of inputs, one in each
// direction. Everything is computed in log space (Γ(sup L/θ) overflows above
// shape ≈ 171). For θ beyond 2⁶⁰·sup L the terms are their limits as θ → ∞,
// which they equal to float64 precision and which the direct evaluation no
// longer reaches (it overflowed to δ = 0 near θ = 10³⁰⁸); NoiseSD gives the
// output's standard deviation √(Lθ) without overflowing. As θ grows, δ tends to a positive floor δ_∞(ε) (Floor), so
// more noise cannot reach an arbitrarily small δ. The spec expected δ to
// decrease in θ; it does for ε ≥ ln(sup L/inf L), but for smaller ε it dips
// slightly below the floor before rising back to it. Theta inverts δ by a
// geometric scan in θ followed by bisection, which copes with that.
// MonteCarloDelta estimates the same tails by sampling the privacy loss,
// which the tests compare with Delta.
//
// # The tight profile
//
// Lemma 1 bounds only the tail P[loss ≥ ε], which suffices for (ε, δ)-LDP but
// is not necessary. Profile is the smallest δ at ε, the hockey-stick
// divergence P[loss ≥ ε] − e^ε·P′[loss ≥ ε] of the extreme pair in either
// direction, in closed form from the same incomplete gamma functions (the
// loss is affine in ln Z); Epsilon inverts it, Lemma1Epsilon inverts Lemma 1,
// and Divergence gives the KL divergences, the expected log-likelihood
// ratios a privacy audit scores (LossUp, TruncatedLossUp). The tests check the
// profile against gonum's quadrature of its definition, Monte Carlo, a
// closed form and every interior pair of inputs.
//
// The values depend only on (ε, θ/inf L, sup L/inf L): scaling L and θ by c
// scales R by c (spec random-walk §3.3).
package gamma
