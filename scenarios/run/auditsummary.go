package run

import (
	"errors"
	"fmt"
	"math"

	"maple/privacy/accountant"
	"maple/privacy/accountant/pld"
	"maple/privacy/manyrun"
	"maple/privacy/onerun"
	"maple/rundir"
	"maple/scenarios"
)

// maxAuditRows is how many rows of the metrics table an audit is evaluated
// at: every row up to that many, otherwise that many spread evenly with the
// last always among them (the others are reported as null).
const maxAuditRows = 101

// oneRunFractions are the guess counts a one-run audit with guesses: 0
// chooses among, as fractions of the canaries (half guessed in, half out):
// few enough that the union bound over them costs little (each is
// evaluated at 1 − (1 − confidence)/6), spread enough to find the
// abstention that suits the scores.
var oneRunFractions = []float64{0.01, 0.03, 0.1, 0.3, 0.6, 1}

// auditOf turns the audit records of a curve's runs, in run order, into the
// summary's Audit: the lower bound after each row of the metrics table
// (iterations), beside the accountant's bound of run 0.
func auditOf(a *scenarios.Audit, jobs []*Job, iterations []int) (*rundir.Audit, error) {
	up := jobs[0].Stats.auditUpper
	if up == nil {
		return nil, errors.New("run 0 recorded no bound to audit against")
	}
	out := &rundir.Audit{Method: a.Method, Canary: a.Canary, View: a.View, Confidence: a.Confidence, Delta: up.Delta,
		Iterations: iterations, Accountant: up.Accountant, Relation: up.Relation, Sampling: up.Sampling}
	rows := auditRows(len(iterations))
	out.Lower = nulls(len(iterations))
	var err error
	switch a.Method {
	case scenarios.AuditManyRun:
		err = manyRunAudit(out, jobs, rows)
	case scenarios.AuditOneRun:
		err = oneRunAudit(out, a, jobs, rows)
	default:
		err = fmt.Errorf("unknown audit method %q", a.Method)
	}
	if err != nil {
		return nil, err
	}
	if up.Model != nil {
		if err := measuredAudit(out, a, up.Model, jobs, iterations, rows); err != nil {
			return nil, err
		}
	}
	last := len(iterations) - 1
	out.LowerFinal = out.Lower[last]
	if up.Epsilon != nil {
		out.Upper = make([]rundir.Number, len(up.Epsilon))
		for k, e := range up.Epsilon {
			out.Upper[k] = rundir.Number(e)
		}
		out.UpperFinal = rundir.Number(up.Epsilon[last])
		if u := up.Epsilon[last]; u > 0 && !math.IsInf(u, 1) {
			out.Ratio = rundir.Number(float64(out.LowerFinal) / u)
		}
	}
	return out, nil
}

// auditRows returns the rows an audit is evaluated at.
func auditRows(n int) []int {
	if n <= maxAuditRows {
		rows := make([]int, n)
		for k := range rows {
			rows[k] = k
		}
		return rows
	}
	rows := make([]int, maxAuditRows)
	for i := range rows {
		rows[i] = i * (n - 1) / (maxAuditRows - 1)
	}
	return rows
}

// nulls returns n numbers that encode as null: rows not evaluated.
func nulls(n int) []rundir.Number {
	x := make([]rundir.Number, n)
	for k := range x {
		x[k] = rundir.Number(math.NaN())
	}
	return x
}

// manyRunAudit bounds ε after each row from the scores of the runs with the
// canary (odd runs) and without (even runs): the strict bound, which
// assumes nothing of the mechanism, and, at δ > 0, the GDP bound of Nasr et
// al. 2023, which assumes a Gaussian trade-off curve.
func manyRunAudit(out *rundir.Audit, jobs []*Job, rows []int) error {
	var in, no []*AuditRecord
	for _, j := range jobs {
		if j.CanaryIn() {
			in = append(in, j.Stats.audit)
		} else {
			no = append(no, j.Stats.audit)
		}
	}
	out.RunsIn, out.RunsOut = len(in), len(no)
	if len(in) < 2 || len(no) < 2 {
		return fmt.Errorf("a many-run audit needs at least 2 runs with the canary and 2 without, got %d and %d", len(in), len(no))
	}
	gdp := out.Delta > 0
	if gdp {
		out.Assumed = nulls(len(out.Lower))
	}
	scores := func(recs []*AuditRecord, k int) []float64 {
		s := make([]float64, len(recs))
		for r, rec := range recs {
			s[r] = rec.Scores[k]
		}
		return s
	}
	for _, k := range rows {
		s := manyrun.Samples{In: scores(in, k), Out: scores(no, k)}
		b, err := manyrun.LowerBound(manyrun.Strict, s, out.Delta, out.Confidence)
		if err != nil {
			return err
		}
		out.Lower[k] = rundir.Number(b.Epsilon)
		out.Statistic = b.Description
		if gdp {
			g, err := manyrun.LowerBound(manyrun.GDP, s, out.Delta, out.Confidence)
			if err != nil {
				return err
			}
			out.Assumed[k] = rundir.Number(g.Epsilon)
			out.AssumedStatistic = g.Description
		}
	}
	if gdp {
		out.AssumedFinal = out.Assumed[len(out.Assumed)-1]
	}
	return nil
}

// oneRunAudit bounds ε after each row from the canaries of every run
// pooled: each canary is in one run only, so the runs together are one
// mechanism with all of them as independent canaries. The guesses are the
// section's, or the best of oneRunFractions at a union-bounded confidence.
func oneRunAudit(out *rundir.Audit, a *scenarios.Audit, jobs []*Job, rows []int) error {
	var included []bool
	for _, j := range jobs {
		included = append(included, j.Stats.audit.Included...)
	}
	m := len(included)
	out.Canaries = m
	for _, in := range included {
		if in {
			out.Included++
		}
	}
	if m == 0 {
		return errors.New("the one-run audit's runs held no canary")
	}
	grid := guessGrid(a.Guesses, m)
	scores := make([]float64, 0, m)
	for _, k := range rows {
		scores = scores[:0]
		for _, j := range jobs {
			scores = append(scores, j.Stats.audit.CanaryScores[k]...)
		}
		r, err := onerun.AuditBest(scores, included, grid, out.Delta, out.Confidence)
		if err != nil {
			return err
		}
		out.Lower[k] = rundir.Number(r.Epsilon)
		out.Statistic = r.Description
		out.Guesses, out.Correct = r.Outcome.Guesses, r.Outcome.Correct
	}
	return nil
}

// guessGrid returns the guess counts a one-run audit of m canaries tries:
// the section's guesses (half in, rounded up, half out), or a count per
// fraction of oneRunFractions.
func guessGrid(guesses, m int) []onerun.Guesses {
	split := func(g int) onerun.Guesses { return onerun.Guesses{In: (g + 1) / 2, Out: g / 2} }
	if guesses > 0 {
		return []onerun.Guesses{split(min(guesses, m))}
	}
	var grid []onerun.Guesses
	for _, f := range oneRunFractions {
		g := max(1, int(math.Round(f*float64(m))))
		if len(grid) == 0 || split(g) != grid[len(grid)-1] {
			grid = append(grid, split(g))
		}
	}
	return grid
}

// maxMeasuredRows is how many rows the measured-noise bound is evaluated at
// (each costs a PLD composition at its own noise), the last among them.
const maxMeasuredRows = 21

// measuredAudit bounds ε after some rows by the measured-noise statistic
// (privacy/manyrun.GaussianShift): from the rounds the auditor observed up
// to the row, a lower confidence bound θ⁻ on the shift-to-noise ratio of a
// round, then the ε the PLD accountant gives that many rounds of the
// declared mechanism at noise multiplier 1/θ⁻, less the discretization's
// largest excess n·Δ (the accountant's ε is an upper bound on the exact
// one by at most that much), so that the bound does not rest on the
// accountant's rounding. Units are runs (many-run) or canaries (one-run).
func measuredAudit(out *rundir.Audit, a *scenarios.Audit, m *AuditModel, jobs []*Job, iterations, rows []int) error {
	sampling, err := accountant.ParseSampling(m.Sampling)
	if err != nil {
		return err
	}
	relation, err := accountant.ParseRelation(m.Relation)
	if err != nil {
		return err
	}
	var in, no [][]float64
	for _, j := range jobs {
		r := j.Stats.audit
		if a.Method == scenarios.AuditManyRun {
			if j.CanaryIn() {
				in = append(in, r.Rounds)
			} else {
				no = append(no, r.Rounds)
			}
			continue
		}
		for c, x := range r.CanaryRounds {
			if r.Included[c] {
				in = append(in, x)
			} else {
				no = append(no, x)
			}
		}
	}
	if len(in) < 2 || len(no) < 2 {
		return nil // the strict bound's error says so
	}
	out.Measured = nulls(len(iterations))
	var eval []int
	for i, k := range rows {
		if i%max(1, (len(rows)+maxMeasuredRows-2)/(maxMeasuredRows-1)) == 0 || i == len(rows)-1 {
			eval = append(eval, k)
		}
	}
	prefix := func(units [][]float64, n int) [][]float64 {
		p := make([][]float64, len(units))
		for u, x := range units {
			p[u] = x[:n]
		}
		return p
	}
	for _, k := range eval {
		n := iterations[k] * m.RoundsPerIteration
		if n == 0 {
			out.Measured[k] = 0
			continue
		}
		b, err := manyrun.GaussianShift(prefix(in, n), prefix(no, n), m.Rate, relation == accountant.ReplaceOne, out.Confidence)
		if err != nil {
			// Too few units or canary rounds for the interval: no bound
			// at this row (null), and the statistic says why.
			out.MeasuredStatistic = "measured noise not computed at iteration " + fmt.Sprint(iterations[k]) + ": " + err.Error()
			continue
		}
		eps := 0.0
		if b.Theta > 0 {
			opt := pld.Options{}
			d, err := pld.Compose(pld.GaussianMechanism(1/b.Theta, m.Rate, sampling, relation), int64(n), opt)
			if err != nil {
				return err
			}
			// +Inf where the accountant's grid cannot hold the losses:
			// no lower bound follows (the row stays null).
			eps = max(0, d.Epsilon(out.Delta)-float64(n)*pld.DefaultInterval)
			if math.IsInf(eps, 1) {
				eps = math.NaN()
			}
		}
		out.Measured[k] = rundir.Number(eps)
		if k == rows[len(rows)-1] {
			out.MeasuredNoise = rundir.Number(math.Inf(1))
			if b.Theta > 0 {
				out.MeasuredNoise = rundir.Number(1 / b.Theta)
			}
			out.MeasuredStatistic = fmt.Sprintf("%s Declared: shift %g, noise %g (noise multiplier %g), rate %g, %s sampling, %s neighbours; "+
				"ε of %d rounds of that Gaussian mechanism at noise multiplier 1/θ⁻ = %.4g by the PLD accountant, less n·Δ = %g for its discretization.",
				b.Description, m.Shift, m.Noise, m.Noise/m.Shift, m.Rate, m.Sampling, m.Relation, n, 1/b.Theta, float64(n)*pld.DefaultInterval)
			out.MeasuredFinal = rundir.Number(eps)
		}
	}
	return nil
}
