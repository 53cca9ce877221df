package gammamechanism_test

import (
	"math"
	"testing"

	_ "maple/families/gammamechanism"
	"maple/families/internal/familytest"
	"maple/privacy/gamma"
	"maple/scenarios"
	"maple/scenarios/run"
)

const audited = `name: audited
seed: 5
runs: 400
iterations: 4
algorithm:
  kind: gamma-mechanism
  gamma-mechanism: {l_range: [1, 2], delta: 0.06, epsilon_max: 6, samples: 10}
privacy: {audit: {method: many-run}}
output: {plot: false}
`

// meanSE returns the mean of x and its standard error.
func meanSE(x []float64) (mean, se float64) {
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	var ss float64
	for _, v := range x {
		ss += (v - mean) * (v - mean)
	}
	return mean, math.Sqrt(ss / float64(len(x)-1) / float64(len(x)))
}

// Both engines record the same audit, bit for bit; the records have a score
// and a bound per row, nothing where no θ reaches δ (ε = 0 and 1.5 at
// sup L/inf L = 2, δ = 0.06), and the bound is the tight ε of the row's θ,
// below the row's ε (Lemma 1's claim). The mean score with the canary minus
// without is the sum of the two KL divergences, within five standard
// errors of the difference of the two sample means.
func TestManyRunAudit(t *testing.T) {
	a := familytest.MustAuditRuns(t, audited, run.Actors)
	r := familytest.MustAuditRuns(t, audited, run.Reference)
	if d := familytest.SameAudits(a, r); d != "" {
		t.Fatalf("the engines' audits differ: %s", d)
	}
	b := gamma.Bounds{Inf: 1, Sup: 2}
	eps := []float64{0, 1.5, 3, 4.5, 6}
	for _, rec := range a {
		if len(rec.Scores) != 5 || len(rec.Upper.Epsilon) != 5 || rec.Upper.Delta != 0.06 || rec.Included != nil || rec.CanaryScores != nil {
			t.Fatalf("run %d: record %+v", rec.Run, rec)
		}
		for k := range 2 {
			if rec.Scores[k] != 0 || !math.IsNaN(rec.Upper.Epsilon[k]) {
				t.Fatalf("run %d, row %d (no θ): score %v, bound %v", rec.Run, k, rec.Scores[k], rec.Upper.Epsilon[k])
			}
		}
	}
	for k := 2; k < 5; k++ {
		theta, err := gamma.Theta(eps[k], 0.06, b)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := a[0].Upper.Epsilon[k], gamma.Epsilon(0.06, theta, b); got != want || !(got < eps[k]) {
			t.Errorf("row %d: bound %v, want the tight ε %v below ε = %v", k, got, want, eps[k])
		}
		in, out := familytest.SplitScores(a, 0, k)
		if len(in) != 200 || len(out) != 200 {
			t.Fatalf("%d runs in, %d out", len(in), len(out))
		}
		mi, si := meanSE(in)
		mo, so := meanSE(out)
		up, down := gamma.Divergence(theta, b)
		if gap := mi - mo; math.Abs(gap-(up+down)) > 5*math.Hypot(si, so) {
			t.Errorf("row %d (θ = %.4g): score gap %.4f, theory %.4f ± %.3f", k, theta, gap, up+down, 5*math.Hypot(si, so))
		}
	}
}

// A one-run audit includes each of its canaries with probability ½ and
// scores every canary on every row; both engines agree, the number included
// is binomial (within five standard deviations of half), and the included
// canaries' mean score exceeds the others' by the KL sum.
func TestOneRunAudit(t *testing.T) {
	a := familytest.MustAuditRuns(t, audited, run.Actors, "privacy.audit={method: one-run, canaries: 2000}", "runs=1")
	r := familytest.MustAuditRuns(t, audited, run.Reference, "privacy.audit={method: one-run, canaries: 2000}", "runs=1")
	if d := familytest.SameAudits(a, r); d != "" {
		t.Fatalf("the engines' audits differ: %s", d)
	}
	rec := a[0]
	if len(rec.Included) != 2000 || len(rec.CanaryScores) != 5 || rec.Scores != nil {
		t.Fatalf("record: %d canaries, %d rows, scores %v", len(rec.Included), len(rec.CanaryScores), rec.Scores)
	}
	n := 0
	for _, in := range rec.Included {
		if in {
			n++
		}
	}
	if math.Abs(float64(n)-1000) > 5*math.Sqrt(500) {
		t.Errorf("%d of 2000 canaries included", n)
	}
	b := gamma.Bounds{Inf: 1, Sup: 2}
	theta, _ := gamma.Theta(6, 0.06, b)
	var in, out []float64
	for c, s := range rec.CanaryScores[4] {
		if rec.Included[c] {
			in = append(in, s)
		} else {
			out = append(out, s)
		}
	}
	mi, si := meanSE(in)
	mo, so := meanSE(out)
	up, down := gamma.Divergence(theta, b)
	if gap := mi - mo; math.Abs(gap-(up+down)) > 5*math.Hypot(si, so) {
		t.Errorf("score gap %.4f, theory %.4f ± %.3f", gap, up+down, 5*math.Hypot(si, so))
	}
}

// The runner's strict lower bound (Clopper–Pearson, no assumption) from 500
// runs a side never exceeds the tight ε of a row, and finds something at
// the largest ε (the score separates the two inputs there).
func TestRunnerBoundIsBelowTheTightEpsilon(t *testing.T) {
	p, err := scenarios.Parse([]byte(audited), "a.yaml", t.TempDir(), []string{"runs=1000"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := run.Execute(p, t.TempDir(), run.Options{Engine: run.Reference})
	if err != nil {
		t.Fatal(err)
	}
	a := res.Summary.Curves[0].Audit
	if a == nil || len(a.Lower) != 5 || a.RunsIn != 500 || a.RunsOut != 500 {
		t.Fatalf("audit %+v", a)
	}
	for k, lo := range a.Lower {
		if up := float64(a.Upper[k]); !math.IsNaN(up) && float64(lo) > up {
			t.Errorf("row %d: lower bound %v above the tight ε %v", k, lo, up)
		}
	}
	if !(a.LowerFinal > 0.5) {
		t.Errorf("the audit found ε ≥ %v at ε_i = 6 (tight %v)", a.LowerFinal, a.UpperFinal)
	}
}
