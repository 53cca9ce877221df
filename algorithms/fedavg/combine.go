package fedavg

import (
	"math"
	"slices"

	"maple/internal/params"
)

// Rule is how a synchronous server combines the replies of a round into
// the model: a server behaviour's pure rule, which both engines apply (the
// actor server through Server.Combine, reference.Reference and
// reference.Simulate likewise).
// replies are in slot order (ascending agent), never in arrival order;
// Combine updates model in place, to the combination itself when share is
// Models and by −μ times it when share is Updates, and leaves it unchanged
// without replies. A Rule is a value: it keeps no state between rounds.
type Rule interface {
	Combine(model []float64, replies [][]float64, share Share, mu float64)
}

// MeanRule is the rule of thesis eq. 1.31, the mean of the replies (Mean):
// the rule of a Config whose Rule is nil.
type MeanRule struct{}

// Combine implements Rule.
func (MeanRule) Combine(model []float64, replies [][]float64, share Share, mu float64) {
	Mean(model, replies, share, mu)
}

// MedianRule combines the replies by their coordinate-wise median (Median).
type MedianRule struct{}

// Combine implements Rule.
func (MedianRule) Combine(model []float64, replies [][]float64, share Share, mu float64) {
	Median(model, replies, share, mu, make([]float64, 0, len(replies)))
}

// TrimmedMeanRule combines the replies by their coordinate-wise trimmed
// mean (TrimmedMean), dropping the fraction Trim of them at each end.
type TrimmedMeanRule struct {
	Trim float64 `yaml:"trim" range:"[0, 0.5)" doc:"fraction of the replies dropped at each end of every coordinate (⌊trim·n⌋ of n)"`
}

// Combine implements Rule.
func (r TrimmedMeanRule) Combine(model []float64, replies [][]float64, share Share, mu float64) {
	TrimmedMean(model, replies, share, mu, r.Trim, make([]float64, 0, len(replies)))
}

// Validate implements Checker: a trim that drops none of a round's replies
// would be the plain mean.
func (r TrimmedMeanRule) Validate(cfg *Config) error {
	if draws := cfg.Draws(); r.Trim > 0 && TrimCount(draws, r.Trim) == 0 {
		return params.Errorf("trim", "%v of %d replies per round drops none: the trimmed mean would be the plain mean (need trim ≥ 1/%d)", r.Trim, draws, draws)
	}
	return nil
}

// Mean combines replies into model in place: model = mean(replies) when share
// is Models, model −= μ·mean(replies) when it is Updates. Without replies the
// model is unchanged.
func Mean(model []float64, replies [][]float64, share Share, mu float64) {
	if len(replies) == 0 {
		return
	}
	inv := 1 / float64(len(replies))
	if share == Models {
		clear(model)
		for _, r := range replies {
			for j, v := range r {
				model[j] += v
			}
		}
		for j := range model {
			model[j] *= inv
		}
		return
	}
	for j := range model {
		var sum float64
		for _, r := range replies {
			sum += r[j]
		}
		model[j] -= mu * sum * inv
	}
}

// Median combines replies into model in place by their coordinate-wise
// median, a classical defence against agents that send outlying models:
// model = median(replies) when share is Models, model −= μ·median(replies)
// when it is Updates. column is scratch of capacity len(replies) (it is
// grown if smaller) and is returned for reuse. Without replies the model is
// unchanged.
func Median(model []float64, replies [][]float64, share Share, mu float64, column []float64) []float64 {
	if len(replies) == 0 {
		return column
	}
	for j := range model {
		column = column[:0]
		for _, r := range replies {
			column = append(column, r[j])
		}
		med := median(column)
		if share == Updates {
			model[j] -= mu * med
		} else {
			model[j] = med
		}
	}
	return column
}

// median returns the median of xs (the mean of the two middle values when
// len(xs) is even), sorting xs in place.
func median(xs []float64) float64 {
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// TrimmedMean combines replies into model in place by their coordinate-wise
// trimmed mean: per coordinate, the ⌊trim·n⌋ smallest and the ⌊trim·n⌋
// largest of the n values are dropped and the rest averaged (trim ∈ [0, ½),
// so at least one value remains). trim = 0 is the mean; as trim nears ½ it
// approaches the median. model = trimmed mean when share is Models,
// model −= μ·trimmed mean when it is Updates; without replies it is
// unchanged. column is scratch as for Median.
func TrimmedMean(model []float64, replies [][]float64, share Share, mu, trim float64, column []float64) []float64 {
	k := TrimCount(len(replies), trim)
	if len(replies) == 0 {
		return column
	}
	for j := range model {
		column = column[:0]
		for _, r := range replies {
			column = append(column, r[j])
		}
		slices.Sort(column)
		var sum float64
		for _, v := range column[k : len(column)-k] {
			sum += v
		}
		m := sum / float64(len(column)-2*k)
		if share == Updates {
			model[j] -= mu * m
		} else {
			model[j] = m
		}
	}
	return column
}

// TrimCount returns ⌊trim·n⌋, the number of values TrimmedMean drops at each
// end of n. It panics unless trim ∈ [0, ½), a caller's bug.
func TrimCount(n int, trim float64) int {
	if !(trim >= 0 && trim < 0.5) {
		panic("fedavg: trim fraction must lie in [0, 0.5)")
	}
	return int(math.Floor(trim * float64(n)))
}
