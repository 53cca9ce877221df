package fedavg

import (
	"encoding/json"
	"strings"
	"testing"

	"maple/privacy/accountant"
	"maple/privacy/accountant/pld"
	"maple/privacy/ledger"
	"maple/rundir"
	"maple/scenarios"
	"maple/scenarios/run"
)

// sgdTiny is a FedAvg scenario of two agents whose clients run DP-SGD on
// sparse click data (logistic regression, 256 slots of which agent 0's 60
// examples leave most untouched: room for Dirac canaries), every agent in
// every round, 3 local steps on Poisson batches of 10, 6 rounds.
const sgdTiny = `name: sgd
seed: 11
runs: 1
iterations: 6
data: {kind: click, agents: 2, samples: 60, dim: 256, regenerate: once}
loss: {kind: logistic, optimum: none}
output: {plot: false, every: 3}
algorithm:
  kind: fedavg
  step_size: 0.05
  fedavg:
    participation: full
    local_steps: 3
    batch: 10
    client: {kind: dp-sgd, clip: 1, noise_multiplier: 1}
`

// Every audit of the canary examples — gradient and example canaries,
// white-box and final, many runs and one, add/remove and (gradient)
// replace-one, Dirac (click data) and random (dense regression data) —
// gives byte-identical summaries on both engines, the audit's bounds and
// details included; the records have the shapes the runner checks, one
// bound per row, the canaries and runs it was asked for, and the
// measured-noise statistic exactly where a step's mechanism is known (a
// gradient canary seen white-box).
func TestSampleAuditsAgreeOnBothEnginesAndHaveTheirShapes(t *testing.T) {
	t.Parallel()
	dense := []string{"data={kind: regression, agents: 2, samples: 60, dim: 5, regenerate: once}", "loss={kind: least-squares, optimum: none}"}
	for _, c := range []struct {
		name  string
		set   []string
		dirac bool
	}{
		{"many-run gradient white-box", []string{"runs=6", "privacy.audit={method: many-run}"}, true},
		{"many-run gradient final", []string{"runs=6", "privacy.audit={method: many-run, view: final}"}, true},
		{"many-run example white-box", []string{"runs=6", "privacy.audit={method: many-run, canary: example}"}, true},
		{"one-run gradient white-box", []string{"runs=2", "privacy.audit={method: one-run, canaries: 30}"}, true},
		{"one-run gradient replace-one", []string{"privacy.audit={method: one-run, canaries: 30}", "algorithm.fedavg.client={kind: dp-sgd, relation: replace-one}"}, true},
		{"one-run example final", []string{"privacy.audit={method: one-run, canary: example, view: final, canaries: 30}"}, true},
		{"one-run gradient dense", append([]string{"privacy.audit={method: one-run, canaries: 30}"}, dense...), false},
		{"many-run example dense", append([]string{"runs=4", "privacy.audit={method: many-run, canary: example}"}, dense...), false},
	} {
		a := summaryOf(t, sgdTiny, run.Actors, c.set...)
		r := summaryOf(t, sgdTiny, run.Reference, c.set...)
		// What the run computed (the actor engine alone counts its
		// messages).
		ja, _ := json.Marshal([]any{a.Final, a.Details, a.Audit})
		jr, _ := json.Marshal([]any{r.Final, r.Details, r.Audit})
		if string(ja) != string(jr) {
			t.Errorf("%s: the engines' summaries differ:\n%s\n%s", c.name, ja, jr)
			continue
		}
		au := a.Audit
		if au == nil {
			t.Fatalf("%s: no audit in the summary", c.name)
		}
		p, err := scenarios.Parse([]byte(sgdTiny), "p.yaml", t.TempDir(), c.set)
		if err != nil {
			t.Fatal(err)
		}
		sc := p.Base
		rows := len(au.Iterations)
		white := sc.Privacy.Audit.View == viewWhiteBox
		measured := white && sc.Privacy.Audit.Canary == canaryGradient
		switch {
		case rows != 3 || len(au.Lower) != rows || len(au.Upper) != rows:
			t.Errorf("%s: %d rows, %d lower and %d upper bounds; want 3 of each", c.name, rows, len(au.Lower), len(au.Upper))
		case sc.Privacy.Audit.Method == scenarios.AuditManyRun && (au.RunsIn != sc.Runs/2 || au.RunsOut != sc.Runs/2):
			t.Errorf("%s: %d runs in and %d out, want %d each", c.name, au.RunsIn, au.RunsOut, sc.Runs/2)
		case sc.Privacy.Audit.Method == scenarios.AuditOneRun && au.Canaries != 30*sc.Runs:
			t.Errorf("%s: %d canaries, want %d", c.name, au.Canaries, 30*sc.Runs)
		case (au.Measured != nil) != measured:
			t.Errorf("%s: measured bounds %v, want them %v", c.name, au.Measured, measured)
		case au.Canary != sc.Privacy.Audit.Canary || au.View != sc.Privacy.Audit.View:
			t.Errorf("%s: canary %s seen %s", c.name, au.Canary, au.View)
		}
		d := a.Details["audit_canaries"].(map[string]any)
		if d["dirac"] != c.dirac || d["audited_agent"] != 0.0 {
			t.Errorf("%s: details %v, want dirac %v", c.name, d, c.dirac)
		}
	}
}

// The audit's upper bound is the sample-level guarantee of agent 0's own
// dataset — its 60 examples and every canary, in or out: q = 10/(60 + m) —
// composed over 3 steps a round, which pld.Compose of 3·i steps gives
// independently after round i (at the runs' discretization, RunOptions); the ledger's column, for the largest rate
// of all agents without canaries (10/60), is larger.
func TestSampleAuditUpperBoundIsAgentZerosLedger(t *testing.T) {
	t.Parallel()
	for _, m := range []int{1, 40} {
		set := []string{"runs=4", "privacy.audit={method: many-run}"}
		if m > 1 {
			set = []string{"privacy.audit={method: one-run, canaries: 40}"}
		}
		c := summaryOf(t, sgdTiny, run.Actors, set...)
		au := c.Audit
		mech := pld.GaussianMechanism(1, 10/float64(60+m), accountant.Poisson, accountant.AddRemove)
		for k, it := range au.Iterations {
			want := 0.0
			if it > 0 {
				d, err := pld.Compose(mech, int64(3*it), ledger.RunOptions)
				if err != nil {
					t.Fatal(err)
				}
				want = d.Epsilon(1e-5)
			}
			if float64(au.Upper[k]) != want {
				t.Errorf("m = %d, iteration %d: upper bound %v, want %v", m, it, au.Upper[k], want)
			}
		}
		if col := c.Details["sample_privacy"].(map[string]any)["epsilon_final"].(float64); !(col > float64(au.UpperFinal)) {
			t.Errorf("m = %d: the ledger's column ends at %v, the audit's bound at %v: want the column larger", m, col, au.UpperFinal)
		}
		if d := c.Details["audit_canaries"].(map[string]any); d["samples"] != float64(60+m) || d["sampling_rate"] != 10/float64(60+m) {
			t.Errorf("m = %d: details %v", m, d)
		}
	}
}

// The audits never claim more than the accountant: with weak noise (z =
// 0.5), where they find much of it, every lower bound — strict, GDP and
// measured, one run of 200 Dirac canaries and 200 runs — stays at or below
// the accountant's ε after every row, and the final strict one is positive.
func TestSampleAuditLowerBoundsStayBelowTheAccountant(t *testing.T) {
	t.Parallel()
	for _, set := range [][]string{
		{"privacy.audit={method: one-run, canaries: 200}"},
		{"runs=200", "privacy.audit={method: many-run}"},
	} {
		set = append(set, "algorithm.fedavg.client={kind: dp-sgd, clip: 1, noise_multiplier: 0.5}")
		au := summaryOf(t, sgdTiny, run.Actors, set...).Audit
		if !(au.LowerFinal > 0) {
			t.Errorf("%v: lower bound %v, want it positive", set, au.LowerFinal)
		}
		for k := range au.Iterations {
			for name, b := range map[string][]rundir.Number{"lower": au.Lower, "assumed": au.Assumed, "measured": au.Measured} {
				if k < len(b) && float64(b[k]) > float64(au.Upper[k]) {
					t.Errorf("%v: row %d: %s bound %v above the accountant's %v", set, k, name, b[k], au.Upper[k])
				}
			}
		}
	}
}

// Canary examples audit DP-SGD: the default canary of a DP-SGD scenario
// without privacy.dp, refused — one line naming the field — where they
// cannot test the mechanism the ledger composes.
func TestSampleAuditDefaultsAndRefusals(t *testing.T) {
	t.Parallel()
	if c := summaryOf(t, sgdTiny, run.Actors, "runs=4", "privacy.audit={method: many-run}"); c.Audit.Canary != canaryGradient {
		t.Errorf("default canary %q, want gradient", c.Audit.Canary)
	}
	for _, c := range []struct {
		set  []string
		want string
	}{
		{[]string{"algorithm.fedavg.client=sgd", "privacy.audit={method: one-run, canary: gradient}"}, "privacy.audit.canary: canary gradient examples test the sample-level guarantee of DP-SGD: they need algorithm.fedavg.client dp-sgd, not sgd"},
		{[]string{"algorithm.fedavg.client={kind: dp-sgd, sampling: fixed}", "privacy.audit={method: one-run}"}, "algorithm.fedavg.client.sampling: canary examples are audited under poisson batches"},
		{[]string{"algorithm.fedavg.client={kind: dp-sgd, relation: replace-one}", "privacy.audit={method: one-run, canary: example}"}, "algorithm.fedavg.client.relation: an example canary is audited against the dataset without it"},
		{[]string{"algorithm.fedavg.participation=poisson", "algorithm.fedavg.participants=1", "privacy.audit={method: one-run}"}, "algorithm.fedavg.participation: the audit watches agent 0"},
		{[]string{"algorithm.fedavg.local_steps=[1, 3]", "privacy.audit={method: one-run}"}, "algorithm.fedavg.local_steps: the audit watches agent 0"},
		{[]string{"algorithm.fedavg.batch=[5, 10]", "privacy.audit={method: one-run}"}, "algorithm.fedavg.batch: the audit watches agent 0"},
		{[]string{"algorithm.fedavg.schedule=per-round", "privacy.audit={method: one-run}"}, "algorithm.fedavg.schedule: the audit watches agent 0"},
		{[]string{"algorithm.fedavg.collect={kind: deadline, seconds: 1}", "privacy.audit={method: one-run}"}, "algorithm.fedavg.collect: the audit watches agent 0"},
		{[]string{"algorithm.fedavg.adversary={kind: sign-flip, fraction: 0.5}", "privacy.audit={method: one-run}"}, "algorithm.fedavg.adversary: the audit watches agent 0"},
		{[]string{"network.dropout=0.1", "privacy.audit={method: one-run}"}, "network.dropout: the audit watches agent 0"},
	} {
		_, err := scenarios.Parse([]byte(sgdTiny), "p.yaml", t.TempDir(), c.set)
		if err == nil || !scenarios.IsUserError(err) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: %v\nwant a one-line error containing %q", c.set, err, c.want)
		}
	}
	// Poisson batches take no batch_sampling: refused when the run is
	// configured (the loader's draft has no batch sampling).
	p, err := scenarios.Parse([]byte(sgdTiny), "p.yaml", t.TempDir(), []string{"algorithm.fedavg.batch_sampling=with-replacement"})
	if err != nil {
		t.Fatal(err)
	}
	const want = "algorithm.fedavg.client.sampling: poisson batches take each example independently"
	if _, err := run.Execute(p, t.TempDir(), run.Options{Workers: 1}); err == nil || !scenarios.IsUserError(err) || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Errorf("batch_sampling with-replacement: %v\nwant a one-line error containing %q", err, want)
	}
}
