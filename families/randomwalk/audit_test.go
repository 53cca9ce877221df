package randomwalk_test

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"maple/actors/trace"
	"maple/families/internal/familytest"
	_ "maple/families/randomwalk"
	"maple/privacy/gamma"
	"maple/scenarios"
	"maple/scenarios/run"
)

const audited = `name: audited
seed: 3
runs: 4
iterations: 8
data: {agents: 6, samples: [8, 12], dim: 2}
algorithm:
  kind: randomwalk
  randomwalk:
    target: importance
    mechanism: {epsilon: 3, delta: 0.06, l_range: [1, 2]}
privacy: {scheme: gamma, audit: {method: many-run}}
topology: {graph: ring}
output: {every: 2, plot: false}
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

// details returns the run's audit details.
// schemeSet returns the overrides that select a scheme: the Laplace
// baseline is pure ε-LDP and takes no δ.
func schemeSet(scheme string) []string {
	s := []string{"privacy.scheme=" + scheme}
	if scheme == "laplace" {
		s = append(s, "algorithm.randomwalk.mechanism={epsilon: 3, l_range: [1, 2]}")
	}
	return s
}

func details(t *testing.T, r familytest.AuditRun) map[string]any {
	t.Helper()
	var d map[string]any
	if err := json.Unmarshal(r.Details["audit"], &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// For each mechanism both engines record the same audit, bit for bit; a run
// scores node 0's announcement by its log-likelihood ratio on every row
// after iteration 0, beside the mechanism's tight ε: the Gamma profile's at
// δ (the truncated Gamma's by post-processing) and the Laplace baseline's
// (sup L − inf L)/b at δ = 0. The node announced the input of the run's
// side of the canary.
func TestRecordsOnBothEngines(t *testing.T) {
	b := gamma.Bounds{Inf: 1, Sup: 2}
	theta, err := gamma.Theta(3, 0.06, b)
	if err != nil {
		t.Fatal(err)
	}
	for _, scheme := range []string{"gamma", "truncated-gamma", "laplace"} {
		a := familytest.MustAuditRuns(t, audited, run.Actors, schemeSet(scheme)...)
		r := familytest.MustAuditRuns(t, audited, run.Reference, schemeSet(scheme)...)
		if d := familytest.SameAudits(a, r); d != "" {
			t.Fatalf("%s: the engines' audits differ: %s", scheme, d)
		}
		for _, rec := range a {
			d := details(t, rec)
			if len(rec.Scores) != 5 || len(rec.Upper.Epsilon) != 5 || rec.Scores[0] != 0 || rec.Upper.Epsilon[0] != 0 {
				t.Fatalf("%s run %d: %+v", scheme, rec.Run, rec)
			}
			wantEps, wantDelta := gamma.Epsilon(0.06, theta, b), 0.06
			if scheme == "laplace" {
				wantEps, wantDelta = (2-1)/(1.0/3), 0 // b = (sup L − inf L)/ε
			}
			for k := 1; k < 5; k++ {
				if rec.Scores[k] != d["score"].(float64) || math.Abs(rec.Upper.Epsilon[k]-wantEps) > 1e-12 {
					t.Fatalf("%s run %d row %d: score %v (details %v), bound %v want %v", scheme, rec.Run, k, rec.Scores[k], d["score"], rec.Upper.Epsilon[k], wantEps)
				}
			}
			if rec.Upper.Delta != wantDelta || (d["input"].(float64) == 2) != rec.In {
				t.Errorf("%s run %d: δ %v, input %v with the canary %v", scheme, rec.Run, rec.Upper.Delta, d["input"], rec.In)
			}
		}
	}
}

// Over many runs the mean score with the canary exceeds the mean without by
// the expected gap, 2·KL for the symmetric Laplace and KL(P_sup‖P_inf) +
// KL(P_inf‖P_sup) for the Gamma mechanism, within five standard errors of
// the difference of the two sample means.
func TestScoreGapMatchesTheory(t *testing.T) {
	for _, scheme := range []string{"gamma", "laplace"} {
		recs := familytest.MustAuditRuns(t, audited, run.Reference, append(schemeSet(scheme), "runs=600", "iterations=2")...)
		in, out := familytest.SplitScores(recs, 0, 1)
		mi, si := meanSE(in)
		mo, so := meanSE(out)
		want := details(t, recs[0])["score_gap_theory"].(float64)
		if gap := mi - mo; math.Abs(gap-want) > 5*math.Hypot(si, so) {
			t.Errorf("%s: score gap %.4f, theory %.4f ± %.3f", scheme, gap, want, 5*math.Hypot(si, so))
		}
	}
}

// The auditor's view is what crosses the wire: the log weight node 0
// announces to each neighbour, as the trace records it, is the value its
// score is computed from, in the runs with the canary and without.
func TestTheViewIsTheWire(t *testing.T) {
	p, err := scenarios.Parse([]byte(audited), "a.yaml", t.TempDir(), []string{"runs=4"})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := run.Execute(p, dir, run.Options{Engine: run.Actors, Trace: true, TracePayload: true}); err != nil {
		t.Fatal(err)
	}
	recs := familytest.MustAuditRuns(t, audited, run.Actors, "runs=4")
	tr, err := trace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	seen := map[int]int{}
	err = tr.Scan(trace.Filter{}, func(rec *trace.Record) error {
		if rec.Type != "WalkAnnounce" || rec.From != "node/0" {
			return nil
		}
		want := details(t, recs[rec.Run])["announced_log_weight"].(float64)
		if got, _ := rec.Fields["log_weight"].(float64); got != want {
			t.Errorf("run %d: node 0 announced %v to %s, the audit scored %v", rec.Run, got, rec.To, want)
		}
		seen[rec.Run]++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for r := range 4 {
		if seen[r] != 2 { // node 0 of a ring has two neighbours
			t.Errorf("announcements of node 0 per run: %v", seen)
		}
	}
}

// What an audit of a walk needs is refused by name when missing.
func TestAuditNeedsAMechanismAndARange(t *testing.T) {
	for _, c := range []struct{ set, want string }{
		{"privacy.scheme=none", "privacy.audit: the walk audits the mechanism"},
		{"algorithm.randomwalk.mechanism={epsilon: 3, delta: 0.06}", "algorithm.randomwalk.mechanism.l_range: privacy.audit needs the mechanism's input range"},
	} {
		src := audited
		if c.set == "privacy.scheme=none" {
			src = strings.Replace(src, "    mechanism: {epsilon: 3, delta: 0.06, l_range: [1, 2]}\n", "", 1)
		}
		_, err := scenarios.Parse([]byte(src), "a.yaml", t.TempDir(), []string{c.set})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.set, err, c.want)
		}
	}
}

// The runner's strict bound from 500 walks a side stays below each
// mechanism's tight ε and finds some of it.
func TestRunnerBoundIsBelowTheTightEpsilon(t *testing.T) {
	for _, scheme := range []string{"gamma", "laplace"} {
		p, err := scenarios.Parse([]byte(audited), "a.yaml", t.TempDir(), append(schemeSet(scheme), "runs=1000", "iterations=2"))
		if err != nil {
			t.Fatal(err)
		}
		res, err := run.Execute(p, t.TempDir(), run.Options{Engine: run.Reference})
		if err != nil {
			t.Fatal(err)
		}
		a := res.Summary.Curves[0].Audit
		if a == nil || a.RunsIn != 500 || !(a.LowerFinal <= a.UpperFinal) || !(a.LowerFinal > 0.5) {
			t.Errorf("%s: audit %+v", scheme, a)
		}
	}
}
