package fedavg

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"maple/algorithms/fedavg"
	"maple/privacy/fixedpoint"
	"maple/privacy/secagg"
	"maple/rundir"
	"maple/scenarios"
	"maple/scenarios/run"
)

// privacyTiny is a FedAvg scenario of 12 agents, 6 per round, for the
// privacy features.
const privacyTiny = `name: private
seed: 7
runs: 1
iterations: 12
data: {agents: 12, samples: [10, 14], dim: 3}
output: {plot: false}
algorithm:
  kind: fedavg
  step_size: 0.05
  fedavg:
    participants: 6
    local_steps: [1, 3]
    batch: [1, 4]
`

// summaryOf runs src with overrides on engine e and returns the first
// curve's summary.
func summaryOf(t *testing.T, src string, e run.Engine, overrides ...string) rundir.CurveSummary {
	t.Helper()
	p, err := scenarios.Parse([]byte(src), "p.yaml", t.TempDir(), overrides)
	if err != nil {
		t.Fatal(err)
	}
	res, err := run.Execute(p, t.TempDir(), run.Options{Engine: e, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	// Round-trip through JSON, as summary.json holds it.
	js, err := json.Marshal(res.Summary.Curves[0])
	if err != nil {
		t.Fatal(err)
	}
	var c rundir.CurveSummary
	if err := json.Unmarshal(js, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// Bad privacy input gets one line naming the field: a threshold above n, k
// above n − 1, bits too few for the clients of a round (or too coarse for
// distributed noise, or for any update DP's clip allows), a clip whose
// grid step is subnormal, a negative noise multiplier, δ ≥ 1, and the
// sections in combinations that cannot mean anything.
func TestBadPrivacyInputNamesTheField(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		set  []string
		want string
	}{
		{[]string{"privacy.secure_aggregation={threshold: 9}"}, "privacy.secure_aggregation.threshold: t must lie in [2, n] = [2, 6] for n = 6 clients per round, got 9"},
		{[]string{"privacy.secure_aggregation={protocol: secagg+, neighbours: 6}"}, "privacy.secure_aggregation.neighbours: k must lie in [1, n − 1] = [1, 5] for n = 6 clients per round, got 6"},
		{[]string{"privacy.secure_aggregation={protocol: secagg+, neighbours: 2, threshold: 4}"}, "privacy.secure_aggregation.threshold: t must lie in [2, k + 1] = [2, 3]"},
		{[]string{"privacy.secure_aggregation={neighbours: 3}"}, "privacy.secure_aggregation.neighbours: protocol secagg shares with all n − 1 = 5"},
		{[]string{"privacy.secure_aggregation={bits: 3}"}, "privacy.secure_aggregation.bits: 3 bits cannot hold a sum of 6 inputs without wrapping around; need at least 4 (n = 6 clients per round)"},
		{[]string{"privacy.secure_aggregation={bits: 4}", "privacy.dp={mode: distributed}"}, "privacy.secure_aggregation.bits: 4 bits and clip 10 give a grid step γ = 10 coarser than the noise"},
		{[]string{"privacy.secure_aggregation={bits: 70}"}, "privacy.secure_aggregation.bits: must lie in [2, 64], got 70"},
		// L = ⌊127/6⌋ = 21 levels of clip 10: γ = 0.476 > C/μ = 0.01/0.05.
		{[]string{"privacy.secure_aggregation={bits: 8}", "privacy.dp={clip: 0.01}"}, "privacy.secure_aggregation.bits: 8 bits and clip 10 give a grid step γ = clip/L = 0.476 (L = 21 levels for n = 6 clients per round) above C/μ = 0.2"},
		{[]string{"privacy.secure_aggregation={bits: 64, clip: 1e-300}"}, "privacy.secure_aggregation.clip: 1e-300 over 1537228672809129301 levels gives a step of"},
		{[]string{"privacy.secure_aggregation={protocol: none, bits: 16}"}, "privacy.secure_aggregation.bits: does not apply: protocol none"},
		{[]string{"privacy.secure_aggregation={}", "network.dropout=0.1"}, "privacy.secure_aggregation.timeout: clients can vanish mid-round (network.dropout)"},
		{[]string{"privacy.secure_aggregation={}", "algorithm.fedavg.server=median"}, "algorithm.fedavg.server: secure aggregation reveals only the sum of a round's replies: server median"},
		{[]string{"privacy.secure_aggregation={}", "algorithm.fedavg.participation=with-replacement"}, "algorithm.fedavg.participation: secure aggregation"},
		{[]string{"privacy.dp={noise_multiplier: -1}"}, "privacy.dp.noise_multiplier: must be a positive number, got -1"},
		{[]string{"privacy.dp={delta: 1}"}, "privacy.dp.delta: must lie in (0, 1), got 1"},
		{[]string{"privacy.dp={mode: distributed}"}, "privacy.dp.mode: distributed noise is added in shares that only secure aggregation sums"},
		{[]string{"privacy.dp={}", "privacy.scheme=update-noise"}, "privacy.dp: DP-FedAvg adds its own noise"},
		{[]string{"privacy.dp={adaptive_clip: {}}", "privacy.secure_aggregation={}"}, "privacy.dp.adaptive_clip: the server adapts C"},
		{[]string{"privacy.dp={noise_multiplier: 4, adaptive_clip: {count_noise: 1}}"}, "privacy.dp.adaptive_clip.count_noise: σ_b must exceed z/2 = 2"},
		{[]string{"privacy.dp={relation: replace-one}", "privacy.audit={method: one-run, canaries: 13}"}, "privacy.audit.canaries: at most data.agents = 12"},
		{[]string{"privacy.dp={}", "privacy.audit={method: one-run}"}, "privacy.audit.canary: under fixed-size sampling a canary client that is out still takes one of the round's L places"},
		{[]string{"privacy.dp={mode: distributed, accountant: pld}", "privacy.secure_aggregation={}"}, "privacy.dp.accountant: pld: the PLD accountant does not model the distributed discrete Gaussian"},
		{[]string{"privacy.dp={relation: replace-one, accountant: rdp}", "algorithm.fedavg.participation=poisson"}, "privacy.dp.accountant: rdp: the Rényi DP accountant has no bound for poisson sampling with replace-one neighbours"},
		{[]string{"privacy.dp={relation: swap}"}, `privacy.dp.relation: unknown value "swap"`},
		{[]string{"privacy.audit={method: one-run}"}, "privacy.audit.canary: canary clients test DP-FedAvg's client-level guarantee: they need privacy.dp"},
		{[]string{"algorithm.fedavg.client={kind: dp-sgd, delta: 1}"}, "algorithm.fedavg.client.delta: must lie in (0, 1)"},
		{[]string{"algorithm.fedavg.client={kind: dp-sgd, noise_multiplier: -0.5}"}, "algorithm.fedavg.client.noise_multiplier: must lie in (0, inf)"},
	} {
		_, err := scenarios.Parse([]byte(privacyTiny), "p.yaml", t.TempDir(), c.set)
		if err == nil || !scenarios.IsUserError(err) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: %v\nwant a one-line error containing %q", c.set, err, c.want)
		}
	}
}

// Without dropouts, a round's traffic is the closed form of
// secagg.ExpectedCosts exactly, for SecAgg and for SecAgg+ on a k-regular
// graph (k even), on both engines; the bytes per client add the model each
// client receives.
func TestSecAggCostsAreTheClosedForm(t *testing.T) {
	t.Parallel()
	for _, set := range [][]string{{"privacy.secure_aggregation={bits: 24}"}, {"privacy.secure_aggregation={protocol: secagg+, neighbours: 2, bits: 20}"}} {
		for _, e := range []run.Engine{run.Actors, run.Reference} {
			c := summaryOf(t, privacyTiny, e, set...)
			d := c.Details["secure_aggregation"].(map[string]any)
			k := int(d["neighbours"].(float64))
			enc, err := fixedpoint.New(int(d["bits"].(float64)), 10, 6)
			if err != nil {
				t.Fatal(err)
			}
			want := secagg.ExpectedCosts(secagg.Config{Clients: 6, Neighbours: k, Threshold: 2, Encoder: enc, Dim: 3})
			phases := d["per_phase_per_round"].(map[string]any)
			total := float64((&fedavg.Config{Agents: 12, Participants: 6}).ModelBytes(6, 3))
			for _, p := range secagg.Phases() {
				got := phases[p.String()].(map[string]any)
				if got["client_bytes"].(float64) != float64(want.Server[p].Received.Bytes) || got["server_bytes"].(float64) != float64(want.Server[p].Sent.Bytes) ||
					got["client_messages"].(float64) != float64(want.Server[p].Received.Messages) {
					t.Errorf("%v on %v, %v: %v, want clients %d B and server %d B", set, e, p, got, want.Server[p].Received.Bytes, want.Server[p].Sent.Bytes)
				}
				total += float64(want.Server[p].Received.Bytes + want.Server[p].Sent.Bytes)
			}
			if got := c.SteadyState["server_bytes"]; float64(got) != total || float64(c.SteadyState["client_bytes"]) != total/6 {
				t.Errorf("%v on %v: server bytes %v, client bytes %v; want %v and %v", set, e, got, c.SteadyState["client_bytes"], total, total/6)
			}
		}
	}
}

// The one-run audit never claims more than the accountant: its lower bound
// on ε stays at or below the accountant's ε after every round. With weak
// noise (z = 0.1), every agent drawn every round and 100-dimensional canary
// directions the canaries show, and the bound is positive: the audit does
// detect them (after four rounds the bound is about 0.9 central and 1.6
// distributed, against the accountant's 295 and 992). The audit's δ and
// upper bound are the accountant's. Four rounds: the SecAgg+ key
// agreements of 60 clients are most of the test's time under the race
// detector.
func TestAuditLowerBoundIsBelowTheAccountant(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"central", "distributed"} {
		set := []string{"data.agents=60", "algorithm.fedavg.participants=60", "data.dim=100", "iterations=4",
			"privacy.dp={mode: " + mode + ", clip: 0.5, noise_multiplier: 0.1}", "privacy.audit={method: one-run, canaries: 40}"}
		if mode == "distributed" {
			set = append(set, "privacy.secure_aggregation={protocol: secagg+, bits: 40, clip: 50}")
		}
		c := summaryOf(t, privacyTiny, run.Actors, set...)
		a := c.Audit
		if a == nil || !(a.LowerFinal > 0 && a.LowerFinal <= a.UpperFinal) || a.Canaries < 20 || a.Guesses == 0 {
			t.Fatalf("%s: audit %+v", mode, a)
		}
		for k := range a.Lower {
			if a.Lower[k] > a.Upper[k] {
				t.Errorf("%s: row %d: lower %v above the accountant's %v", mode, k, a.Lower[k], a.Upper[k])
			}
		}
		p := c.Details["privacy"].(map[string]any)
		if p["epsilon_final"].(float64) != float64(a.UpperFinal) || p["delta"].(float64) != a.Delta {
			t.Errorf("%s: the audit's upper bound %v at δ %v is not the accountant's %v at %v", mode, a.UpperFinal, a.Delta, p["epsilon_final"], p["delta"])
		}
	}
}

// A grid coarser than the updates is said, never silent. Under issue 30's
// two settings every update used to round to zero and the model kept its
// initial value, with nothing clipped and no warning: a clip of 10³⁰⁰
// (γ ≈ 1.4·10²⁹¹, so that even unbiased rounding leaves every update at
// 0: the measured error is exactly the updates' norm) and 4 bits for n = 6
// (L = 1 level: γ = the clip, 10). Both runs warn, on both engines, and
// report the same measured error; a 32-bit grid does not warn, and its
// error is within its closed-form bound: each coordinate moves by less
// than γ, so ‖x̃ − x‖/‖d‖ < γ/rms(d).
func TestUpdatesLostToTheGridAreWarnedOf(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		set  string
		warn bool
	}{
		{"privacy.secure_aggregation={clip: 1e300}", true},
		{"privacy.secure_aggregation={bits: 4}", true},
		{"privacy.secure_aggregation={bits: 32}", false},
	} {
		var errs [2]any
		for i, e := range []run.Engine{run.Actors, run.Reference} {
			c := summaryOf(t, privacyTiny, e, tc.set)
			d := c.Details["secure_aggregation"].(map[string]any)
			q := d["quantization_error"].(map[string]any)
			errs[i] = q
			warned := false
			for _, w := range c.Warnings {
				warned = warned || strings.Contains(w, "privacy.secure_aggregation: the grid step") && strings.Contains(w, "exceeds the clients' typical update")
			}
			rel, step, rms := q["relative"].(float64), d["quantization_step"].(float64), q["update_rms_coordinate"].(float64)
			switch {
			case warned != tc.warn:
				t.Errorf("%s on %v: warned %v, want %v: %q", tc.set, e, warned, tc.warn, c.Warnings)
			case tc.set == "privacy.secure_aggregation={clip: 1e300}" && rel != 1:
				t.Errorf("%s on %v: relative error %v, want exactly 1 (every update lost)", tc.set, e, rel)
			case tc.warn && !(step > rms):
				t.Errorf("%s on %v: step %v, update rms %v", tc.set, e, step, rms)
			case !tc.warn && !(rel < step/rms):
				t.Errorf("%s on %v: relative error %v beyond γ/rms = %v", tc.set, e, rel, step/rms)
			}
		}
		if !reflect.DeepEqual(errs[0], errs[1]) {
			t.Errorf("%s: actors %v, reference %v", tc.set, errs[0], errs[1])
		}
	}
}

// Inputs clipped to the encoder's range are warned of when the clipping
// costs the sum: with a step size of 10¹⁰ the local training diverges and
// every coordinate is clipped to ±10, round after round (which used to go
// without a word); with the default step none is, and nothing is said.
func TestClippedInputsAreWarnedOf(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		set  []string
		warn bool
	}{
		{[]string{"privacy.secure_aggregation={}", "algorithm.step_size=1e10"}, true},
		{[]string{"privacy.secure_aggregation={}"}, false},
	} {
		for _, e := range []run.Engine{run.Actors, run.Reference} {
			c := summaryOf(t, privacyTiny, e, tc.set...)
			warned := false
			for _, w := range c.Warnings {
				warned = warned || strings.Contains(w, "coordinates the clients encoded (100 %) exceeded the clip 10")
			}
			d := c.Details["secure_aggregation"].(map[string]any)
			if warned != tc.warn || (d["range_errors"].(float64) > 0) != tc.warn {
				t.Errorf("%v on %v: warned %v, range errors %v; want a warning %v: %q", tc.set, e, warned, d["range_errors"], tc.warn, c.Warnings)
			}
		}
	}
}
