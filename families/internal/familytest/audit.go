package familytest

import (
	"context"
	"encoding/json"
	"math"
	"testing"

	"maple/scenarios"
	"maple/scenarios/run"
)

// AuditRun is what one run of an audited curve recorded (run.AuditRecord and
// run.AuditUpper), read back from its Outcome, with the run's details.
type AuditRun struct {
	// Curve and Run say which job it is; In whether its canary was in.
	Curve string
	Run   int
	In    bool
	// Scores are its many-run scores per row, Upper the accountant's ε per
	// row (nil without an accountant), Accountant and Delta what Upper is.
	Scores     []float64
	Upper      []float64
	Accountant string
	Delta      float64
	// Details are the run's family details, as JSON.
	Details map[string]json.RawMessage
}

// auditDetail is the Outcome detail that carries a run's audit record
// (scenarios/run's auditDetail), and auditWire its JSON: the numbers as the
// bits of their IEEE 754 encoding.
const auditDetail = "audit/record"

type auditWire struct {
	Scores []uint64 `json:"scores"`
	Upper  *struct {
		Accountant string  `json:"accountant"`
		Delta      float64 `json:"delta"`
	} `json:"upper"`
	UpperEpsilon []uint64 `json:"upper_epsilon"`
}

// AuditRuns parses src with the overrides sets and runs every job of the
// plan on engine e, one at a time, returning each run's audit record in job
// order (runs ascending, curves within a run). A user error is returned; any
// other failure ends the test.
func AuditRuns(t testing.TB, src string, e run.Engine, sets ...string) ([]AuditRun, error) {
	t.Helper()
	return AuditRunsIn(t, src, t.TempDir(), e, sets...)
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
		o, err := j.Outcome()
		if err != nil {
			t.Fatal(err)
		}
		var w auditWire
		if err := json.Unmarshal(o.Details[auditDetail], &w); err != nil {
			t.Fatalf("curve %q, run %d: audit record: %v", j.Curve.Label, j.Run, err)
		}
		r := AuditRun{Curve: j.Curve.Label, Run: j.Run, In: j.CanaryIn(), Scores: floats(w.Scores), Upper: floats(w.UpperEpsilon), Details: o.Details}
		if w.Upper != nil {
			r.Accountant, r.Delta = w.Upper.Accountant, w.Upper.Delta
		}
		out = append(out, r)
	}
	return out, nil
}

func floats(b []uint64) []float64 {
	if b == nil {
		return nil
	}
	x := make([]float64, len(b))
	for i, v := range b {
		x[i] = math.Float64frombits(v)
	}
	return x
}
