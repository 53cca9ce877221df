package fedavg

import (
	"math"
	"slices"

	"maple/internal/enum"
)

// Rule is how the server combines the replies of a round into the model.
type Rule int

const (
	// MeanRule averages them (thesis eq. 1.31).
	MeanRule Rule = iota
	// MedianRule takes their coordinate-wise median (Median).
	MedianRule
	// TrimmedMeanRule averages them per coordinate after dropping the Trim
	// fraction of smallest and of largest values (TrimmedMean).
	TrimmedMeanRule
)

var ruleNames = enum.Of[Rule]("combination rule", "mean", "median", "trimmed-mean")

// String returns the scenario-file name of the rule, which is also the name
// of the actor server behaviour that applies it.
func (r Rule) String() string { return ruleNames.String(r) }

// ParseRule returns the rule named s.
func ParseRule(s string) (Rule, error) { return ruleNames.Parse(s) }

// Combine applies cfg.Rule to the round's replies (in slot order) and
// updates model in place. scratch is reused by Median and TrimmedMean and
// returned for the next round.
func Combine(cfg *Config, model []float64, replies [][]float64, scratch []float64) []float64 {
	switch cfg.Rule {
	case MedianRule:
		return Median(model, replies, cfg.Share, cfg.StepSize, scratch)
	case TrimmedMeanRule:
		return TrimmedMean(model, replies, cfg.Share, cfg.StepSize, cfg.Trim, scratch)
	}
	Mean(model, replies, cfg.Share, cfg.StepSize)
	return scratch
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
// model −= μ·trimmed mean when it is Updates. column is scratch as for
// Median.
func TrimmedMean(model []float64, replies [][]float64, share Share, mu, trim float64, column []float64) []float64 {
	k := TrimCount(len(replies), trim)
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
