package onerun

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// Guesses is how an auditor with a score per canary (higher meaning "more
// likely in") guesses: "in" for the In highest scores, "out" for the Out
// lowest, abstaining on the rest — Steinke et al.'s k₊ and k₋. Abstaining
// on the canaries it is least sure of raises the fraction of right guesses
// and with it the bound, up to the point where too few guesses remain for
// the binomial tail to be small.
type Guesses struct {
	In, Out int
}

// String returns "in/out" guess counts.
func (g Guesses) String() string { return fmt.Sprintf("%d in/%d out", g.In, g.Out) }

func (g Guesses) check(m int) error {
	if g.In < 0 || g.Out < 0 || g.In+g.Out < 1 || g.In+g.Out > m {
		return fmt.Errorf("guesses: %d in and %d out must be non-negative, at least one in all and at most the %d canaries", g.In, g.Out, m)
	}
	return nil
}

// Result is a one-run audit's lower bound and what it rests on.
type Result struct {
	// Epsilon is the lower bound: with probability at least Confidence the
	// audited training is not (ε′, Delta)-DP for any ε′ < Epsilon.
	Epsilon float64
	// Outcome is the canaries, guesses and right guesses behind Epsilon,
	// and Guesses the guess counts that produced it.
	Outcome Outcome
	Guesses Guesses
	// Candidates is how many guess counts the bound is the best of (1 for
	// Audit), and Level the confidence each was evaluated at,
	// 1 − (1 − Confidence)/Candidates.
	Candidates int
	Level      float64
	// Confidence and Delta are the audit's.
	Confidence, Delta float64
	// Description says in English what was computed and what it assumes.
	Description string
}

// Guess ranks the canaries by score (ties by index, so the guesses depend
// on the scores' order only) and counts the right guesses when the g.In
// highest are guessed in and the g.Out lowest out. included[i] is the truth
// of canary i, which the scores must not have seen.
func Guess(scores []float64, included []bool, g Guesses) (Outcome, error) {
	order, err := rank(scores, included)
	if err != nil {
		return Outcome{}, err
	}
	if err := g.check(len(scores)); err != nil {
		return Outcome{}, err
	}
	return outcome(order, included, g), nil
}

// Audit guesses as Guess does and returns the lower bound at delta and
// confidence (LowerBound). The guess counts must be fixed before the run is
// seen — from the scenario, or by Plan — for the confidence to hold.
func Audit(scores []float64, included []bool, g Guesses, delta, confidence float64) (Result, error) {
	return AuditBest(scores, included, []Guesses{g}, delta, confidence)
}

// AuditBest returns the largest of the lower bounds over the candidate guess
// counts, each evaluated at confidence 1 − (1 − confidence)/len(grid).
// Choosing the best of G candidates on the audited run itself is a multiple
// test: each candidate's bound exceeds the true ε with probability at most
// (1 − confidence)/G, so by the union bound the largest exceeds it with
// probability at most 1 − confidence. The price is a stricter level per
// candidate — with G = 10 at 95 %, each is evaluated at 99.5 % — so a small
// grid is worth more than a fine one. Ties go to the earlier candidate.
func AuditBest(scores []float64, included []bool, grid []Guesses, delta, confidence float64) (Result, error) {
	order, err := rank(scores, included)
	if err != nil {
		return Result{}, err
	}
	if len(grid) == 0 {
		return Result{}, fmt.Errorf("guesses: no candidate guess counts")
	}
	for _, g := range grid {
		if err := g.check(len(scores)); err != nil {
			return Result{}, err
		}
	}
	if err := checkLevels(delta, confidence); err != nil {
		return Result{}, err
	}
	level := confidence
	if len(grid) > 1 {
		level = 1 - (1-confidence)/float64(len(grid))
	}
	res := Result{Epsilon: -1, Candidates: len(grid), Level: level, Confidence: confidence, Delta: delta}
	for _, g := range grid {
		o := outcome(order, included, g)
		eps, err := LowerBound(o, delta, level)
		if err != nil {
			return Result{}, err
		}
		if eps > res.Epsilon {
			res.Epsilon, res.Outcome, res.Guesses = eps, o, g
		}
	}
	res.Description = describe(res)
	return res, nil
}

func describe(r Result) string {
	s := fmt.Sprintf("one-run audit (Steinke, Nasr & Jagielski 2023, Theorem 3.1 with δ = %g): %d canaries, each included "+
		"independently with probability 1/2; the %d highest scores guessed in and the %d lowest out, abstaining on the rest; "+
		"%d of %d guesses right; with confidence %g the training is not (ε, δ)-DP for any ε below %.4g. "+
		"It assumes only that the canaries' inclusions are independent fair coins and that the scores are computed from the "+
		"run's output without the inclusions",
		r.Delta, r.Outcome.Canaries, r.Guesses.In, r.Guesses.Out, r.Outcome.Correct, r.Outcome.Guesses, r.Confidence, r.Epsilon)
	if r.Candidates > 1 {
		s += fmt.Sprintf("; the guess counts are the best of %d candidates on this run, each evaluated at confidence %.6g "+
			"so that the best holds at %g (union bound)", r.Candidates, r.Level, r.Confidence)
	}
	return s
}

// ExpectedBound returns the bound an audit of m canaries would give with
// guess counts g if the fraction of its guesses that are right were
// precision: the LowerBound of ⌊precision·r⌋ right out of r = g.In + g.Out.
// It plans an audit; it proves nothing.
func ExpectedBound(m int, g Guesses, precision, delta, confidence float64) (float64, error) {
	if err := g.check(m); err != nil {
		return 0, err
	}
	if !(precision >= 0 && precision <= 1) {
		return 0, fmt.Errorf("precision: must lie in [0, 1], got %v", precision)
	}
	r := g.In + g.Out
	v := int(math.Floor(precision * float64(r)))
	return LowerBound(Outcome{Canaries: m, Guesses: r, Correct: v}, delta, confidence)
}

// Plan returns the candidate guess counts with the largest ExpectedBound,
// and that bound, given the precision each would reach. When the precisions
// come from a model of the mechanism or from a pilot run with other seeds —
// anything but the audited run — the choice is fixed before the audited run
// is seen, and Audit with it holds at the full confidence, with no union
// bound to pay. Ties go to the earlier candidate.
func Plan(m int, grid []Guesses, precision func(Guesses) float64, delta, confidence float64) (Guesses, float64, error) {
	if len(grid) == 0 {
		return Guesses{}, 0, fmt.Errorf("guesses: no candidate guess counts")
	}
	best, bound := Guesses{}, -1.0
	for _, g := range grid {
		b, err := ExpectedBound(m, g, precision(g), delta, confidence)
		if err != nil {
			return Guesses{}, 0, fmt.Errorf("%v: %w", g, err)
		}
		if b > bound {
			best, bound = g, b
		}
	}
	return best, bound, nil
}

// rank returns the canaries' indices by decreasing score, ties by index.
func rank(scores []float64, included []bool) ([]int, error) {
	if len(scores) == 0 {
		return nil, fmt.Errorf("scores: no canaries")
	}
	if len(included) != len(scores) {
		return nil, fmt.Errorf("included: %d truths for %d scores", len(included), len(scores))
	}
	for i, s := range scores {
		if math.IsNaN(s) {
			return nil, fmt.Errorf("scores[%d]: NaN", i)
		}
	}
	order := make([]int, len(scores))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		if c := cmp.Compare(scores[b], scores[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	return order, nil
}

func outcome(order []int, included []bool, g Guesses) Outcome {
	m := len(order)
	v := 0
	for _, i := range order[:g.In] {
		if included[i] {
			v++
		}
	}
	for _, i := range order[m-g.Out:] {
		if !included[i] {
			v++
		}
	}
	return Outcome{Canaries: m, Guesses: g.In + g.Out, Correct: v}
}

func checkLevels(delta, confidence float64) error {
	if !(delta >= 0 && delta < 1) {
		return fmt.Errorf("delta: must lie in [0, 1), got %v", delta)
	}
	if !(confidence > 0 && confidence < 1) {
		return fmt.Errorf("confidence: must lie in (0, 1), got %v", confidence)
	}
	return nil
}
