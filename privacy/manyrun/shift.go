package manyrun

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// The measured-noise statistic. The strict and GDP methods test one score
// per run; when the auditor also sees each round's observation — a
// white-box auditor of DP-FedAvg sees every released model, and projects
// each round's step on the canary's direction — and the mechanism is known
// up to its noise, it can measure the noise instead: per round an
// observation is
//
//	x = m_t + s·b + σ·ξ,  ξ ~ N(0, 1),
//
// with b ~ Bernoulli(q) when the canary is in (the round samples it with
// probability q) and b = 0 — or, for replace-one neighbours, −Bernoulli(q)
// — when it is out, and m_t what the rest of the round adds, alike with
// the canary and without. The difference of the mean observations of units
// with the canary and without is q·s (2q·s for replace-one); the spread of
// the units without it around each round's mean is at least σ. Lower
// confidence bounds on the first and an upper one on the second bound
// θ = s/σ from below, and the ε of the mechanism the accountant composes
// at noise multiplier 1/θ — the declared mechanism with the least noise
// the observation allows — is then a lower bound on ε under the
// assumption that each round is that mechanism up to its noise.

// ShiftBound is a lower confidence bound on θ = s/σ, a round's shift when
// the canary takes part in units of the round's noise.
type ShiftBound struct {
	// Theta is the lower bound (0 when the observations prove no shift)
	// and Estimate the point estimate D/(k·q·σ̂).
	Theta, Estimate float64
	// Difference is D, the mean observation of the units with the canary
	// less that of those without, DifferenceLower its lower confidence
	// bound; Sigma is σ̂, the spread of the units without it, SigmaUpper
	// its upper confidence bound.
	Difference, DifferenceLower, Sigma, SigmaUpper float64
	// In and Out are the units (runs, or canaries) with and without the
	// canary, Rounds the observations of each.
	In, Out, Rounds int
	// Confidence is the probability with which Theta holds.
	Confidence float64
	// Description says what was computed and what it assumes.
	Description string
}

// shiftAssumption is what the measured-noise statistic assumes.
const shiftAssumption = "It assumes that each round is the declared mechanism up to the scale of its noise — a Gaussian observation shifted by s when the " +
	"canary takes part, with the declared probability — independently of the other rounds given the rest of the training, and that the units " +
	"(runs, or canaries with nearly orthogonal directions) are independent; the bound on the difference of means is Student's t interval " +
	"of the units' means (Welch), which needs the means nearly normal — at least 30 units a side and 30 rounds expected to carry the canary —, the bound on σ the χ² interval of the units without the canary."

// MinShiftUnits is the fewest units a side, and MinShiftEvents the fewest
// rounds expected to carry the canary among the units with it (their
// number times the rounds times the rate), that GaussianShift accepts:
// the interval of the difference of means rests on the units' means being
// nearly normal, which a handful of units, or a canary that shows in a
// handful of rounds, does not give (a page's tests found the bound above
// the accountant's ε with 4 runs a side and 4 canary rounds in all).
const (
	MinShiftUnits  = 30
	MinShiftEvents = 30
)

// GaussianShift returns the lower bound on θ at the given confidence from
// the observations x[u][t] of the units with the canary (in) and without
// (out), round t of each: the rounds sample the canary with probability
// rate, and opposite says that a unit without it is shifted by −s instead
// of not at all (replace-one neighbours). The confidence is split evenly
// between the two bounds (union bound). Each side needs MinShiftUnits
// units, every unit the same rounds, and the rounds expected to carry the
// canary must number MinShiftEvents; the difference of means is bounded
// with Student's t on Welch's degrees of freedom.
func GaussianShift(in, out [][]float64, rate float64, opposite bool, confidence float64) (ShiftBound, error) {
	switch {
	case len(in) < MinShiftUnits || len(out) < MinShiftUnits:
		return ShiftBound{}, fmt.Errorf("units: the measured noise needs at least %d units with the canary and %d without, got %d and %d", MinShiftUnits, MinShiftUnits, len(in), len(out))
	case !(rate > 0 && rate <= 1):
		return ShiftBound{}, fmt.Errorf("rate: must lie in (0, 1], got %v", rate)
	case !(confidence > 0 && confidence < 1):
		return ShiftBound{}, fmt.Errorf("confidence: must lie in (0, 1), got %v", confidence)
	}
	rounds := len(in[0])
	if rounds == 0 {
		return ShiftBound{}, fmt.Errorf("rounds: the units hold no observation")
	}
	if events := float64(len(in)) * float64(rounds) * rate; events < MinShiftEvents {
		return ShiftBound{}, fmt.Errorf("rounds: the canary is expected in %.3g rounds of the units with it (%d units × %d rounds × rate %g), fewer than the %d the measured noise needs", events, len(in), rounds, rate, MinShiftEvents)
	}
	means := func(side string, units [][]float64) ([]float64, error) {
		m := make([]float64, len(units))
		for u, x := range units {
			if len(x) != rounds {
				return nil, fmt.Errorf("%s[%d]: %d rounds, not %d", side, u, len(x), rounds)
			}
			for t, v := range x {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return nil, fmt.Errorf("%s[%d][%d]: %v", side, u, t, v)
				}
			}
			m[u] = stat.Mean(x, nil)
		}
		return m, nil
	}
	mIn, err := means("in", in)
	if err != nil {
		return ShiftBound{}, err
	}
	mOut, err := means("out", out)
	if err != nil {
		return ShiftBound{}, err
	}
	alpha := (1 - confidence) / 2
	b := ShiftBound{In: len(in), Out: len(out), Rounds: rounds, Confidence: confidence}
	muIn, varIn := stat.MeanVariance(mIn, nil)
	muOut, varOut := stat.MeanVariance(mOut, nil)
	b.Difference = muIn - muOut
	vin, vout := varIn/float64(len(in)), varOut/float64(len(out))
	se := math.Sqrt(vin + vout)
	// Welch–Satterthwaite degrees of freedom for Student's t.
	df := (vin + vout) * (vin + vout) / (vin*vin/float64(len(in)-1) + vout*vout/float64(len(out)-1))
	if math.IsNaN(df) || df < 1 {
		df = float64(min(len(in), len(out)) - 1)
	}
	b.DifferenceLower = b.Difference + distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(alpha)*se
	// σ²: the units without the canary around each round's mean, on
	// (n − 1)·T degrees of freedom.
	var ss float64
	for t := range rounds {
		var m float64
		for _, x := range out {
			m += x[t]
		}
		m /= float64(len(out))
		for _, x := range out {
			ss += (x[t] - m) * (x[t] - m)
		}
	}
	dfSigma := float64((len(out) - 1) * rounds)
	b.Sigma = math.Sqrt(ss / dfSigma)
	b.SigmaUpper = math.Sqrt(ss / distuv.ChiSquared{K: dfSigma}.Quantile(alpha))
	k := 1.0
	if opposite {
		k = 2
	}
	if b.Sigma > 0 {
		b.Estimate = b.Difference / (k * rate * b.Sigma)
	}
	if b.SigmaUpper > 0 && b.DifferenceLower > 0 {
		b.Theta = b.DifferenceLower / (k * rate * b.SigmaUpper)
	}
	b.Description = fmt.Sprintf("measured noise: over %d rounds of %d units with the canary and %d without, the mean observation differs by D = %.4g (≥ %.4g at level %.3g, "+
		"Student's t on %.0f degrees of freedom for the units' means) and the units without it spread by σ̂ = %.4g (≤ %.4g at level %.3g, χ² on %g degrees of freedom), "+
		"so θ = s/σ ≥ %.4g (estimate %.4g) with confidence %g (union bound). %s",
		rounds, b.In, b.Out, b.Difference, b.DifferenceLower, 1-alpha, df, b.Sigma, b.SigmaUpper, 1-alpha, dfSigma, b.Theta, b.Estimate, confidence, shiftAssumption)
	return b, nil
}
