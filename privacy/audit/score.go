package audit

import (
	"math"

	"gonum.org/v1/gonum/floats"
)

// The scores of a differential-privacy auditor that observes K messages
// x_k = y + n_k carrying one value y, whose mean it predicts as μ₀ under one
// dataset and μ₁ under its neighbour, for the three ways the messages can
// relate to y: independent noises (IndependentScore), one draw repeated on
// every link (IndependentScore of that draw's law on one link), or a value
// the messages determine exactly (RevealedScore).

// IndependentScore returns the log-likelihood ratio of the observations
// obs[k] (k < len(laws)) of a value of mean mu1 against mean mu0, the noise
// on coordinate c of link k independent of law laws[k]:
// Σ_k Σ_c laws[k].LogRatio(obs[k][c], mu0[c], mu1[c]).
func IndependentScore(laws []Noise, obs [][]float64, mu0, mu1 []float64) float64 {
	var s float64
	for k, law := range laws {
		for c, x := range obs[k] {
			s += law.LogRatio(x, mu0[c], mu1[c])
		}
	}
	return s
}

// IndependentDivergence returns the Kullback–Leibler divergence of the laws
// of IndependentScore's observations when their mean moves by d:
// Σ_k Σ_c laws[k].Divergence(d[c]), the expected score of observations of
// mean μ₁ = μ₀ + d.
func IndependentDivergence(laws []Noise, d []float64) float64 {
	var div float64
	for _, law := range laws {
		for _, dc := range d {
			div += law.Divergence(dc)
		}
	}
	return div
}

// Draws returns how many draws of standard deviation std the observations
// of IndependentScore are worth for a pure-ε (Laplace) or Gaussian
// accountant: Σ_k (std/√2)/b_k for Laplace laws of scale b_k, each link's ε
// for one shift relative to one draw's (a sum of Laplace terms scaled by c
// has the log-Lipschitz constant of one term scaled by c), and Σ_k (std/σ_k)²
// for Gaussian ones, the ratio of their μ².
func Draws(laws []Noise, std float64) float64 {
	var w float64
	for _, law := range laws {
		if law.law == gaussianLaw {
			r := std / law.scale
			w += r * r
		} else {
			w += std / math.Sqrt2 / law.scale
		}
	}
	return w
}

// RevealedScore returns ½(‖y − μ₀‖² − ‖y − μ₁‖²) for a revealed value y:
// positive when y is nearer μ₁. Where μ₀ and μ₁ are y's exact means under the
// two datasets, the likelihood ratio is ±∞ and this has its sign.
func RevealedScore(y, mu0, mu1 []float64) float64 {
	d0, d1 := floats.Distance(y, mu0, 2), floats.Distance(y, mu1, 2)
	return (d0*d0 - d1*d1) / 2
}

// SolveMultiples sets dst to the value y of two messages xa = y + ca·g and
// xb = y + cb·g carrying multiples ca ≠ cb of one draw g:
// y = (cb·xa − ca·xb)/(cb − ca).
func SolveMultiples(dst, xa, xb []float64, ca, cb float64) {
	for c := range dst {
		dst[c] = (cb*xa[c] - ca*xb[c]) / (cb - ca)
	}
}
