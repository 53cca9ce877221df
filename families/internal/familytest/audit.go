package familytest

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"strconv"
	"testing"

	"maple/scenarios"
	"maple/scenarios/run"
)

// AuditRun is what one run of an audited curve recorded for privacy.audit
// (its run.AuditRecord and run.AuditUpper), with its metrics table and
// details as an Outcome carries them: what the tests of a family's audit
// read back before the runner aggregates the runs, and compare between the
// engines bit for bit.
type AuditRun struct {
	// Curve and CurveIndex name the job's curve, Run its run; In reports
	// whether a many-run audit's canary was in it.
	Curve      string
	CurveIndex int
	Run        int
	In         bool
	// AuditRecord is what the run recorded (Scores, Included,
	// CanaryScores, Rounds, CanaryRounds), Upper the accountant's bound.
	run.AuditRecord
	Upper run.AuditUpper
	// Table is the run's metrics table, encoded, and Details the facts the
	// summary reports of it, as JSON.
	Table   []byte
	Details map[string]json.RawMessage
}

// AuditRuns parses src with the overrides sets and runs every job of the
// plan on engine e, one at a time, returning each run's audit in job order
// (runs ascending, curves within a run). A user error is returned; any
// other failure, or a job that recorded no audit, ends the test.
func AuditRuns(t testing.TB, src string, e run.Engine, sets ...string) ([]AuditRun, error) {
	t.Helper()
	return AuditRunsIn(t, src, t.TempDir(), e, sets...)
}

// MustAuditRuns is AuditRuns for a scenario that must be valid: a user
// error ends the test too.
func MustAuditRuns(t testing.TB, src string, e run.Engine, sets ...string) []AuditRun {
	t.Helper()
	runs, err := AuditRuns(t, src, e, sets...)
	if err != nil {
		t.Fatalf("scenario: %v", err)
	}
	return runs
}

// AuditRunsIn is AuditRuns for a scenario whose files (a matrix, data) are
// named relative to dir.
func AuditRunsIn(t testing.TB, src, dir string, e run.Engine, sets ...string) ([]AuditRun, error) {
	t.Helper()
	p, err := scenarios.Parse([]byte(src), "audit.yaml", dir, sets)
	if err != nil {
		if !scenarios.IsUserError(err) {
			t.Fatal(err)
		}
		return nil, err
	}
	opts := &run.Options{Engine: e, Workers: 1}
	slot := run.NewSlot(opts)
	defer slot.Close()
	var out []AuditRun
	for _, j := range run.Jobs(p, opts, "") {
		if err := slot.Execute(context.Background(), j); err != nil {
			if !scenarios.IsUserError(err) {
				t.Fatalf("curve %q, run %d on %s: %v", j.Curve.Label, j.Run, e, err)
			}
			return nil, err
		}
		rec, up := j.AuditRecords()
		if rec == nil || up == nil {
			t.Fatalf("curve %q, run %d on %s recorded no audit", j.Curve.Label, j.Run, e)
		}
		o, err := j.Outcome()
		if err != nil {
			t.Fatal(err)
		}
		delete(o.Details, run.AuditDetail) // the record itself, above
		out = append(out, AuditRun{Curve: j.Curve.Label, CurveIndex: j.CurveIndex(), Run: j.Run, In: j.CanaryIn(),
			AuditRecord: *rec, Upper: *up, Table: o.Table, Details: o.Details})
	}
	return out, nil
}

// SameAudits reports the first difference between the audits of two
// engines, or "" when they agree bit for bit: scores, inclusions, rounds,
// bounds and metrics tables (not the details, some of which only the actor
// engine reports: its traffic, the key agreements).
func SameAudits(a, b []AuditRun) string {
	if len(a) != len(b) {
		return "different numbers of jobs"
	}
	for k := range a {
		if x, y := encodeAudit(a[k]), encodeAudit(b[k]); !bytes.Equal(x, y) {
			return "job " + strconv.Itoa(k) + " differs:\n" + string(x) + "\n" + string(y)
		}
	}
	return ""
}

// encodeAudit returns a run's audit as JSON, its numbers as their bits.
func encodeAudit(r AuditRun) []byte {
	var cs, cr [][]uint64
	for _, s := range r.CanaryScores {
		cs = append(cs, bitsOf(s))
	}
	for _, s := range r.CanaryRounds {
		cr = append(cr, bitsOf(s))
	}
	b, err := json.Marshal(struct {
		Scores, Rounds, UpperEpsilon []uint64
		Included                     []bool
		CanaryScores, CanaryRounds   [][]uint64
		Upper                        run.AuditUpper
		Table                        []byte
	}{bitsOf(r.Scores), bitsOf(r.Rounds), bitsOf(r.Upper.Epsilon), r.Included, cs, cr, r.Upper, r.Table})
	if err != nil {
		panic(err) // plain data: not reached
	}
	return b
}

func bitsOf(x []float64) []uint64 {
	b := make([]uint64, len(x))
	for i, v := range x {
		b[i] = math.Float64bits(v)
	}
	return b
}

// SplitScores returns the many-run scores at row k of the jobs of curve
// index curve with the canary in and out.
func SplitScores(runs []AuditRun, curve, k int) (in, out []float64) {
	for _, r := range runs {
		if r.CurveIndex != curve {
			continue
		}
		if r.In {
			in = append(in, r.Scores[k])
		} else {
			out = append(out, r.Scores[k])
		}
	}
	return in, out
}

// CheckClaimShape checks one run's record of a many-run audit whose upper
// bound is a paper's claim composed over the rows (claim names it in
// messages, "eq. 31" say): rows rows, zero at row 0, the canary in the odd
// runs, finite scores, and an ε that is +∞ without noise (scheme "none"),
// linear in the row for Laplace noise (the rows are evenly spaced, up to
// the rounding of a product of a few factors) and growing otherwise, at
// δ = 0 for Laplace noise and the default δ for Gaussian noise.
func CheckClaimShape(t testing.TB, name string, r AuditRun, rows int, scheme, mech, claim string) {
	t.Helper()
	if len(r.Scores) != rows || len(r.Upper.Epsilon) != rows || r.Scores[0] != 0 || r.Upper.Epsilon[0] != 0 || r.In != (r.Run%2 == 1) {
		t.Errorf("%s, run %d: scores %v, upper %v, canary in %v", name, r.Run, r.Scores, r.Upper, r.In)
		return
	}
	for k := 1; k < rows; k++ {
		switch {
		case math.IsNaN(r.Scores[k]) || math.IsInf(r.Scores[k], 0):
			t.Errorf("%s, run %d: score %v at row %d", name, r.Run, r.Scores[k], k)
		case scheme == "none" && !math.IsInf(r.Upper.Epsilon[k], 1):
			t.Errorf("%s: ε %v without noise", name, r.Upper.Epsilon[k])
		case scheme != "none" && mech == "laplace" && math.Abs(r.Upper.Epsilon[k]-float64(k)*r.Upper.Epsilon[1]) > 1e-12*r.Upper.Epsilon[k]:
			t.Errorf("%s: %s's ε %v is not linear in the row", name, claim, r.Upper.Epsilon)
		case scheme != "none" && !(r.Upper.Epsilon[k] > r.Upper.Epsilon[k-1]):
			t.Errorf("%s: ε %v does not grow", name, r.Upper.Epsilon)
		}
	}
	if want := map[string]float64{"laplace": 0, "gaussian": scenarios.DefaultDelta}[mech]; scheme != "none" && r.Upper.Delta != want {
		t.Errorf("%s: δ = %v, want %v", name, r.Upper.Delta, want)
	}
}

// AuditDetails returns a run's privacy_audit details.
func AuditDetails(t testing.TB, r AuditRun) map[string]any {
	t.Helper()
	var d map[string]any
	if err := json.Unmarshal(r.Details["privacy_audit"], &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// CheckDatasetAuditOnBothEngines runs src, a scenario with a many-run audit
// of a decentralized family (dataset canary, views wire and network), with
// every scheme of schemes, both views and both mechanisms (Laplace only
// where the scheme has no Gaussian form: no noise, local graph-homomorphic
// masks) on both engines, and checks that they record the same audit, bit
// for bit, of the claim's shape (CheckClaimShape with rows and claim).
func CheckDatasetAuditOnBothEngines(t *testing.T, src string, schemes []string, rows int, claim string) {
	t.Helper()
	for _, scheme := range schemes {
		for _, view := range []string{"wire", "network"} {
			for _, mech := range []string{"laplace", "gaussian"} {
				if mech == "gaussian" && (scheme == "local-graph-homomorphic" || scheme == "none") {
					continue
				}
				name := scheme + "/" + view + "/" + mech
				sets := []string{"privacy.scheme=" + scheme, "privacy.audit.view=" + view, "privacy.mechanism=" + mech}
				a, err := AuditRuns(t, src, run.Actors, sets...)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				r, err := AuditRuns(t, src, run.Reference, sets...)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if d := SameAudits(a, r); d != "" {
					t.Errorf("%s: the engines differ: %s", name, d)
				}
				for k := range a {
					CheckClaimShape(t, name, a[k], rows, scheme, mech, claim)
				}
			}
		}
	}
}

// CheckNetworkScoresAreCentred runs src, a scenario with a many-run audit of
// a decentralized family, under the network view with each scheme of
// schemes on the reference engine, and checks what makes the score the
// exact log-likelihood ratio: its expectation given a run's path is the
// divergence the run reports with the canary and minus it without, so over
// the runs the mean of score − (±divergence) must be within 4 standard
// errors of 0 (a test of level about 6·10⁻⁵ for a mean of many runs), the
// view must say it is exact, and the runs with the canary must score higher
// on average. Through the runner, this checks that the canary runs train on
// D′ and the others on D.
func CheckNetworkScoresAreCentred(t *testing.T, src string, schemes []string) {
	t.Helper()
	for _, scheme := range schemes {
		runs, err := AuditRuns(t, src, run.Reference, "privacy.scheme="+scheme, "privacy.audit.view=network")
		if err != nil {
			t.Fatal(err)
		}
		var sum, sum2, gap float64
		for _, r := range runs {
			d := AuditDetails(t, r)
			div, s := d["divergence"].(float64), r.Scores[len(r.Scores)-1]
			if d["exact"] != true {
				t.Fatalf("%s: the network view is not exact: %v", scheme, d["statistic"])
			}
			if !r.In {
				div, gap = -div, gap-s
			} else {
				gap += s
			}
			sum += s - div
			sum2 += (s - div) * (s - div)
		}
		n := float64(len(runs))
		mean := sum / n
		se := math.Sqrt((sum2/n - mean*mean) / n)
		if math.Abs(mean) > 4*se || !(gap > 0) {
			t.Errorf("%s: score − expected score %v ± %v; in − out %v", scheme, mean, se, gap/(n/2))
		}
	}
}
