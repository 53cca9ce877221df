package fedplt_test

import (
	"encoding/json"
	"math"
	"runtime"
	"strings"
	"testing"

	_ "maple/families/fedplt"
	"maple/families/internal/familytest"
	"maple/privacy/accountant"
	"maple/scenarios"
	"maple/scenarios/run"
)

const audited = `name: audited
seed: 3
runs: 4
iterations: 5
data: {agents: 3, samples: [8, 12], dim: 2, regenerate: once}
algorithm:
  kind: fedplt
  fedplt:
    init: prior
    tolerance: 0
    solver: {kind: noisy-gd, noise: 0.3}
    accountant: {sensitivity: 2}
privacy: {audit: {method: many-run}}
output: {plot: false}
`

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

func auditDetails(t *testing.T, r familytest.AuditRun) (mu, exact []float64) {
	t.Helper()
	var d struct {
		Mu    []float64 `json:"mu"`
		Exact []float64 `json:"exact_epsilon"`
	}
	if err := json.Unmarshal(r.Details["audit"], &d); err != nil {
		t.Fatal(err)
	}
	return d.Mu, d.Exact
}

// Both engines record the same audit, bit for bit. Each run scores the
// final models after every round (0 at round 0), beside Proposition 4's ε
// after as many rounds, which grows with them; μ of the final models is
// the same in every run (the data are drawn once), and the exact ε of the
// final models it gives is below Proposition 4's at every row — the paper's
// bound holds here, by a wide margin.
func TestRecordsOnBothEngines(t *testing.T) {
	a := familytest.MustAuditRuns(t, audited, run.Actors)
	r := familytest.MustAuditRuns(t, audited, run.Reference)
	if d := familytest.SameAudits(a, r); d != "" {
		t.Fatalf("the engines' audits differ: %s", d)
	}
	mu0, _ := auditDetails(t, a[0])
	for _, rec := range a {
		mu, exact := auditDetails(t, rec)
		if len(rec.Scores) != 6 || len(rec.Upper.Epsilon) != 6 || rec.Scores[0] != 0 || rec.Upper.Epsilon[0] != 0 || rec.Upper.Delta != 1e-5 {
			t.Fatalf("run %d: %+v", rec.Run, rec)
		}
		for k := 1; k < 6; k++ {
			if !(rec.Upper.Epsilon[k] > rec.Upper.Epsilon[k-1]) || mu[k] != mu0[k] || !(mu[k] > 0) {
				t.Errorf("run %d row %d: bound %v after %v, μ %v (run 0: %v)", rec.Run, k, rec.Upper.Epsilon[k], rec.Upper.Epsilon[k-1], mu[k], mu0[k])
			}
			if want := accountant.GaussianEpsilon(mu[k], 1e-5); exact[k] != want || !(exact[k] < rec.Upper.Epsilon[k]) {
				t.Errorf("row %d: exact ε %v (want %v) against Proposition 4's %v", k, exact[k], want, rec.Upper.Epsilon[k])
			}
		}
	}
}

// Over many runs the score is N(±½μ², μ²): the mean with the canary
// exceeds the mean without by μ² (twice the KL divergence of the final
// models), within five standard errors of the difference of the means.
func TestScoreGapIsMuSquared(t *testing.T) {
	recs := familytest.MustAuditRuns(t, audited, run.Reference, "runs=800")
	mu, _ := auditDetails(t, recs[0])
	for _, k := range []int{1, 5} {
		in, out := familytest.SplitScores(recs, 0, k)
		mi, si := meanSE(in)
		mo, so := meanSE(out)
		if gap, want := mi-mo, mu[k]*mu[k]; math.Abs(gap-want) > 5*math.Hypot(si, so) {
			t.Errorf("row %d: score gap %.4f, μ² = %.4f ± %.4f", k, gap, want, 5*math.Hypot(si, so))
		}
	}
}

// Settings in which the final models are not the affine Gaussian recursion,
// or Proposition 4 has no L, are refused by name.
func TestAuditRefusals(t *testing.T) {
	for _, c := range []struct{ set, want string }{
		{"algorithm.fedplt.participation={kind: subset, fraction: 0.5}", "algorithm.fedplt.participation.kind: privacy.audit computes the exact likelihood ratio"},
		{"algorithm.fedplt.init=zero", "algorithm.fedplt.init: privacy.audit"},
		{"algorithm.fedplt.tolerance=1e-5", "algorithm.fedplt.tolerance: privacy.audit"},
		{"algorithm.fedplt.solvers=[{agents: [1, 1], kind: noisy-gd, noise: 0.3, clip: 4}]", "algorithm.fedplt.solvers[0]: privacy.audit"},
		{"algorithm.fedplt.solver={kind: noisy-gd, noise: 0}", "algorithm.fedplt.solver: privacy.audit"},
		{"algorithm.fedplt.regularizer={kind: l1, weight: 0.1}", "algorithm.fedplt.regularizer.kind: privacy.audit"},
		{"algorithm.fedplt.accountant={delta: 1e-5}", "algorithm.fedplt.accountant.sensitivity: privacy.audit's label canary"},
	} {
		_, err := scenarios.Parse([]byte(audited), "a.yaml", t.TempDir(), []string{c.set})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.set, err, c.want)
		}
	}
	// The sensitivity is L of least squares without clipping only.
	noAudit := strings.Replace(audited, "privacy: {audit: {method: many-run}}\n", "", 1)
	for _, set := range []string{"algorithm.fedplt.solver={kind: noisy-gd, noise: 0.3, clip: 4}", "algorithm.fedplt.solver={kind: gd}"} {
		if _, err := scenarios.Parse([]byte(noAudit), "a.yaml", t.TempDir(), []string{set}); err == nil || !strings.Contains(err.Error(), "algorithm.fedplt.accountant.sensitivity: does not apply") {
			t.Errorf("%s: err = %v", set, err)
		}
	}
}

// The auditor's matrix products go parallel in gonum from 128×128 on (here
// D = 2nN = 130): its records are the same, bit for bit, with one thread
// and with four.
func TestRecordsAtAnyGOMAXPROCS(t *testing.T) {
	set := []string{"data={agents: 13, samples: 10, dim: 5, regenerate: once}", "runs=4", "iterations=2"}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	one := familytest.MustAuditRuns(t, audited, run.Reference, set...)
	runtime.GOMAXPROCS(4)
	four := familytest.MustAuditRuns(t, audited, run.Reference, set...)
	if d := familytest.SameAudits(one, four); d != "" {
		t.Errorf("GOMAXPROCS 1 and 4 differ: %s", d)
	}
}

// The runner's bounds from 400 runs a side never exceed the exact ε of the
// final models at any row (with less noise than the other tests, ε from 3.6
// to 6.2):
// neither the strict bound nor the GDP bound, whose Gaussian assumption is
// exact for this view; and the GDP bound comes within a factor 2 of it.
func TestRunnerBoundsAreBelowTheExactEpsilon(t *testing.T) {
	p, err := scenarios.Parse([]byte(audited), "a.yaml", t.TempDir(), []string{"runs=800", "algorithm.fedplt.solver={kind: noisy-gd, noise: 0.05}"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := run.Execute(p, t.TempDir(), run.Options{Engine: run.Reference})
	if err != nil {
		t.Fatal(err)
	}
	c := res.Summary.Curves[0]
	a := c.Audit
	d, _ := json.Marshal(c.Details["audit"])
	var exact struct {
		Eps []float64 `json:"exact_epsilon"`
	}
	if err := json.Unmarshal(d, &exact); err != nil || a == nil || len(a.Lower) != 6 || len(a.Assumed) != 6 {
		t.Fatalf("audit %+v, details %s: %v", a, d, err)
	}
	for k := range a.Lower {
		if float64(a.Lower[k]) > exact.Eps[k] || float64(a.Assumed[k]) > exact.Eps[k] {
			t.Errorf("row %d: bounds %v (GDP %v) above the exact ε %v", k, a.Lower[k], a.Assumed[k], exact.Eps[k])
		}
	}
	if !(float64(a.AssumedFinal) > exact.Eps[5]/2) {
		t.Errorf("the GDP bound %v is not within a factor 2 of the exact ε %v", a.AssumedFinal, exact.Eps[5])
	}
}
