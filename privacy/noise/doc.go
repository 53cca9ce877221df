// Package noise draws the additive privacy noise of the seed papers: i.i.d.
// zero-mean Laplace or Gaussian noise, per coordinate, with a given standard
// deviation.
//
// # Convention
//
// σ_g is the standard deviation of each coordinate, as in thesis Ch. 1 eq. (1.41),
// whose Laplace density is (√2/(2σ_g))·exp(−√2|x|/σ_g): the Laplace scale is
// b = σ_g/√2 and the variance is 2b² = σ_g². Vectors get i.i.d. coordinates with
// that variance (decentralized-privacy spec §3.4, thesis-ch1-2 spec §2.2).
//
// # Erratum
//
// Paper 001 eq. (54) / thesis eq. (4.60) write the LGH noise as (√2/σ_g)·ln(v/v′),
// a Laplace of scale √2/σ_g and variance 4/σ_g² (10⁴× too large at σ_g = 0.1).
// The scale used here and everywhere in maple is σ_g/√2 (spec §3.3, "Scale bug
// in P(54)"). The tests show that the printed scale fails a KS test against
// the intended distribution.
//
// # Sampling
//
// A Laplace draw consumes exactly one 64-bit word of the caller's stream: bit 63
// is the sign and the low 53 bits give u ∈ (0, 1], so that b·(−ln u) is Exp(1/b)
// by inversion of its CDF (see LaplaceFromUint64). One word per draw keeps the
// stream position a function of the number of draws only, which the pairwise
// masks of package pairmask rely on. Gaussian draws use the stream's
// NormFloat64.
//
// All functions fill caller-provided slices and never allocate.
package noise
