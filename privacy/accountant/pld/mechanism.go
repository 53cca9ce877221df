package pld

import (
	"fmt"
	"math"

	"maple/internal/enum"
	"maple/privacy/accountant"
)

// Noise is the kind of randomization a mechanism applies.
type Noise int

const (
	// Gaussian adds N(0, σ²) per coordinate to a sum of contributions
	// clipped to ℓ2 norm C; NoiseMultiplier is z = σ/C.
	Gaussian Noise = iota
	// Laplace adds Laplace noise of scale b to a scalar sum of
	// contributions clipped to |x| ≤ C (or to a vector whose ℓ1 norm
	// bounds it); NoiseMultiplier is b/C.
	Laplace
	// RandomizedResponse reports each respondent's answer among Buckets
	// values truthfully with probability 1 − Flip and uniformly at random
	// otherwise (the parameterization of Google's dp_accounting); it is
	// defined under the replace-one relation (an answer changes).
	RandomizedResponse
)

var noiseNames = enum.Of[Noise]("noise", "gaussian", "laplace", "randomized-response")

// String returns the noise's name.
func (n Noise) String() string { return noiseNames.String(n) }

// Mechanism is one round's release: a noise applied to the contributions
// of records sampled at Rate under Sampling, with privacy stated for the
// neighbouring Relation. Sensitivities are in units of the clip norm C of
// one record's contribution.
type Mechanism struct {
	Noise Noise
	// NoiseMultiplier is σ/C (Gaussian) or b/C (Laplace).
	NoiseMultiplier float64
	// Flip and Buckets parameterize RandomizedResponse.
	Flip    float64
	Buckets int
	// Rate is the sampling probability q (Poisson) or the sampled fraction
	// γ = m/n (fixed size), in [0, 1]; 1 means every record, whatever
	// Sampling says for Poisson; 0 releases nothing about anyone.
	Rate     float64
	Sampling accountant.Sampling
	Relation accountant.Relation
}

// GaussianMechanism returns the Gaussian mechanism with noise multiplier z applied
// to records sampled at rate q.
func GaussianMechanism(z, q float64, s accountant.Sampling, r accountant.Relation) Mechanism {
	return Mechanism{Noise: Gaussian, NoiseMultiplier: z, Rate: q, Sampling: s, Relation: r}
}

// Validate reports the first impossible field by name.
func (m Mechanism) Validate() error {
	switch {
	case m.Noise < Gaussian || m.Noise > RandomizedResponse:
		return fmt.Errorf("noise: %v is not a mechanism", m.Noise)
	case !(m.Rate >= 0 && m.Rate <= 1):
		return fmt.Errorf("rate: the sampling rate must lie in [0, 1], got %v", m.Rate)
	case m.Sampling != accountant.Poisson && m.Sampling != accountant.FixedSize:
		return fmt.Errorf("sampling: %v", m.Sampling)
	case m.Relation != accountant.AddRemove && m.Relation != accountant.ReplaceOne:
		return fmt.Errorf("relation: %v", m.Relation)
	}
	if m.Noise == RandomizedResponse {
		switch {
		case m.Buckets < 2:
			return fmt.Errorf("buckets: randomized response needs at least 2 answers, got %d", m.Buckets)
		case !(m.Flip > 0 && m.Flip <= 1):
			return fmt.Errorf("flip: the probability of a random answer must lie in (0, 1], got %v", m.Flip)
		case m.Relation != accountant.ReplaceOne:
			return fmt.Errorf("relation: randomized response is accounted under replace-one (a respondent's answer changes), not %v", m.Relation)
		}
		return nil
	}
	if !(m.NoiseMultiplier > 0) || math.IsInf(m.NoiseMultiplier, 1) {
		return fmt.Errorf("noise_multiplier: must be positive and finite, got %v", m.NoiseMultiplier)
	}
	return nil
}

// pairs returns the profiles that dominate one round in each direction:
// remove (the data set with the record first) and add; add is nil when the
// pair is symmetric (remove's swap has the same profile), and both are nil
// when the round releases nothing (Rate 0).
//
// With μ the noise and C = 1:
//
//   - no sampling (Rate 1, Poisson): the Gaussian or Laplace mechanism of
//     sensitivity 1 (add-remove) or 2 (replace-one), symmetric;
//   - Poisson, add-remove: ((1 − q)μ + qμ(· − 1), μ) and its swap
//     (Zhu, Dong & Wang 2022, "Optimal accounting of differential privacy
//     via characteristic function", tight; Google's dp_accounting);
//   - Poisson, replace-one: ((1 − q)μ + qμ(· − 1), (1 − q)μ + qμ(· + 1)),
//     symmetric: the record is drawn with the same probability from both
//     data sets and the rest of the sum is common (as dp_accounting's
//     REPLACE adjacency);
//   - fixed size, add-remove: the batch keeps its size, so the added record
//     displaces another when drawn (probability γ): the sum moves by up to
//     2, ((1 − γ)μ + γμ(· − 2), μ) and its swap, each direction the same in
//     every round;
//   - fixed size, replace-one: the same pair, but which of the two data
//     sets plays P can change from round to round, so one round is
//     dominated by the larger of the pair's and its swap's profiles
//     (symmetrized; Lebeda, Regehr, Kamath & Steinke 2024).
//
// Randomized response (replace-one only) has outcomes x, x′ and the rest,
// P = (1 − p + p/k, p/k, (k − 2)p/k) and Q with the first two swapped;
// Poisson sampling adds a common outcome "absent" of mass 1 − q (the
// adversary is told whether the respondent answered, an upper bound), and
// fixed-size sampling uses ((1 − γ)Q + γP, Q) symmetrized as above.
func (m Mechanism) pairs() (remove, add profile) {
	q := m.Rate
	if q == 0 {
		return nil, nil
	}
	if m.Noise == RandomizedResponse {
		k := float64(m.Buckets)
		hit, miss := 1-m.Flip+m.Flip/k, m.Flip/k
		rest := (k - 2) * m.Flip / k
		if m.Sampling == accountant.Poisson || q == 1 {
			return discretePair{p: []float64{1 - q, q * hit, q * miss, q * rest}, q: []float64{1 - q, q * miss, q * hit, q * rest}}, nil
		}
		mix := discretePair{p: []float64{(1-q)*miss + q*hit, (1-q)*hit + q*miss, rest}, q: []float64{miss, hit, rest}}
		swap := discretePair{p: mix.q, q: mix.p}
		return symmetrized{mix, swap}, nil
	}
	var mu noise = gaussian{m.NoiseMultiplier}
	if m.Noise == Laplace {
		mu = laplace{m.NoiseMultiplier}
	}
	switch {
	case m.Sampling == accountant.Poisson && m.Relation == accountant.AddRemove:
		if q == 1 {
			return newShiftPair(mu, 1, 1, 0, 0), nil
		}
		return newShiftPair(mu, q, 1, 0, 0), newShiftPair(mu, 0, 0, q, 1)
	case m.Sampling == accountant.Poisson:
		return newShiftPair(mu, q, 1, q, 1), nil
	case m.Relation == accountant.AddRemove:
		return newShiftPair(mu, q, 2, 0, 0), newShiftPair(mu, 0, 0, q, 2)
	}
	r, a := newShiftPair(mu, q, 2, 0, 0), newShiftPair(mu, 0, 0, q, 2)
	if q == 1 {
		return r, nil // μ(· − 2) against μ: symmetric
	}
	return symmetrized{r, a}, nil
}
