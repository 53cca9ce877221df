// Package audittest runs an audited plan's jobs one by one on an engine and
// returns what each recorded for privacy.audit, for the tests of the
// families that implement audits: the records do not reach the run
// directory until the runner aggregates them, and the records must agree
// between the engines bit for bit.
package audittest

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"strconv"
	"testing"

	"maple/algorithms/rng"
	"maple/scenarios"
	"maple/scenarios/inputs"
	"maple/scenarios/run"
)

// Record is what one job recorded for its curve's audit.
type Record struct {
	// Curve and Run identify the job; In reports whether a many-run
	// audit's canary was in it.
	Curve, Run int
	In         bool
	// Scores, Included and CanaryScores are the job's run.AuditRecord.
	Scores       []float64
	Included     []bool
	CanaryScores [][]float64
	// Upper is the accountant's bound the job recorded, Epsilon included.
	Upper run.AuditUpper
	// Table is the job's metrics table, encoded, and Details the facts the
	// summary reports of it, as JSON.
	Table   []byte
	Details map[string]json.RawMessage
}

// wire is the runner's encoding of a record in an outcome's details
// (scenarios/run/audit.go): the numbers as their IEEE 754 bits.
type wire struct {
	Scores       []uint64        `json:"scores"`
	Included     []bool          `json:"included"`
	CanaryScores [][]uint64      `json:"canary_scores"`
	Upper        *run.AuditUpper `json:"upper"`
	UpperEpsilon []uint64        `json:"upper_epsilon"`
}

// auditDetail is the key of the record in an outcome's details.
const auditDetail = "audit/record"

// Run parses src (a scenario, with the overrides), runs every job of the
// plan on engine, one at a time, and returns their records in job order.
// A scenario error or a failed job fails the test.
func Run(t testing.TB, src string, engine run.Engine, overrides ...string) []Record {
	t.Helper()
	p, err := scenarios.Parse([]byte(src), "audit.yaml", t.TempDir(), overrides)
	if err != nil {
		t.Fatalf("scenario: %v", err)
	}
	opts := run.Options{Engine: engine, Workers: 1}
	var out []Record
	for _, j := range run.Jobs(p, &opts, "") {
		sc := j.Curve.Scenario
		seed := j.RunSeed
		if sc.Data.Regenerate == "once" {
			seed = rng.RunSeed(sc.Seed, 0)
		}
		prob, err := inputs.BuildProblem(context.Background(), j.Curve, p.Dir, seed)
		if err != nil {
			t.Fatalf("run %d: problem: %v", j.Run, err)
		}
		j.Stats.Details = prob.Details()
		f, _ := run.Lookup(sc.Algorithm.Kind)
		if err := f.Run(j, prob, nil); err != nil {
			t.Fatalf("run %d on %s: %v", j.Run, engine, err)
		}
		o, err := j.Outcome()
		if err != nil {
			t.Fatal(err)
		}
		raw, ok := o.Details[auditDetail]
		if !ok {
			t.Fatalf("run %d on %s recorded no audit", j.Run, engine)
		}
		var w wire
		if err := json.Unmarshal(raw, &w); err != nil {
			t.Fatal(err)
		}
		delete(o.Details, auditDetail)
		r := Record{Curve: j.CurveIndex(), Run: j.Run, In: j.CanaryIn(), Scores: floats(w.Scores), Included: w.Included,
			Table: o.Table, Details: o.Details}
		for _, s := range w.CanaryScores {
			r.CanaryScores = append(r.CanaryScores, floats(s))
		}
		if w.Upper == nil {
			t.Fatalf("run %d on %s recorded no upper bound", j.Run, engine)
		}
		r.Upper = *w.Upper
		r.Upper.Epsilon = floats(w.UpperEpsilon)
		out = append(out, r)
	}
	return out
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

// Same reports the first difference between the records of two engines,
// or "" when they agree bit for bit: scores, inclusions, bounds, tables and
// details.
func Same(a, b []Record) string {
	if len(a) != len(b) {
		return "different numbers of jobs"
	}
	for k := range a {
		if !bytes.Equal(encode(a[k]), encode(b[k])) {
			return "job " + strconv.Itoa(k) + " differs:\n" + string(encode(a[k])) + "\n" + string(encode(b[k]))
		}
	}
	return ""
}

// encode returns a record as JSON with its numbers as their bits.
func encode(r Record) []byte {
	var cs [][]uint64
	for _, s := range r.CanaryScores {
		cs = append(cs, bits(s))
	}
	b, err := json.Marshal(struct {
		Scores, UpperEpsilon []uint64
		Included             []bool
		CanaryScores         [][]uint64
		Upper                run.AuditUpper
		Table                []byte
		Details              map[string]json.RawMessage
	}{bits(r.Scores), bits(r.Upper.Epsilon), r.Included, cs, r.Upper, r.Table, r.Details})
	if err != nil {
		panic(err) // plain data: not reached
	}
	return b
}

func bits(x []float64) []uint64 {
	b := make([]uint64, len(x))
	for i, v := range x {
		b[i] = math.Float64bits(v)
	}
	return b
}

// Split returns the final scores of a many-run audit's jobs of one curve
// with the canary in and out, at row k of their metrics.
func Split(records []Record, curve, k int) (in, out []float64) {
	for _, r := range records {
		if r.Curve != curve {
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
