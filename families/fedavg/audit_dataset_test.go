package fedavg

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"maple/algorithms/data"
	"maple/algorithms/rng"
	"maple/families/internal/familytest"
	"maple/privacy/noise"
	"maple/scenarios"
	"maple/scenarios/inputs"
	"maple/scenarios/run"
)

// wireAudited is a small FedAvg scenario with a many-run dataset audit:
// three of six agents a round (agent 0 takes part in about half the
// rounds), mini-batches and local steps that vary, data drawn once.
const wireAudited = `name: wire
seed: 4
runs: 4
iterations: 12
data: {kind: regression, agents: 6, samples: 10, dim: 2, regenerate: once, regression: {covariance_scale: 0.3}}
loss: {kind: least-squares, rho: 0.01}
output: {every: 3, plot: false}
algorithm:
  kind: fedavg
  step_size: 0.1
  fedavg: {participants: 3, local_steps: [1, 3], batch: [2, 5]}
privacy: {scheme: update-noise, mechanism: laplace, variance: 0.01, audit: {canary: dataset, view: wire}}
`

// Both engines record the same audit, bit for bit, for each scheme,
// mechanism and participation: one score and one ε per row (rows 0, 3, 6,
// 9, 12), 0 at iteration 0; eq. 2.69's ε is linear in the iteration, the
// Gaussian's grows, ∞ without noise; the canary is in the odd runs.
func TestWireAuditIsTheSameOnBothEngines(t *testing.T) {
	t.Parallel()
	for _, scheme := range []string{"update-noise", "model-noise", "none"} {
		for _, mech := range []string{"laplace", "gaussian"} {
			for _, part := range []string{"without-replacement", "with-replacement", "full"} {
				if scheme == "none" && mech == "gaussian" || scheme != "update-noise" && part != "without-replacement" {
					continue
				}
				name := scheme + "/" + mech + "/" + part
				sets := []string{"privacy.scheme=" + scheme, "privacy.mechanism=" + mech, "algorithm.fedavg.participation=" + part}
				if part == "full" {
					sets[2] = "algorithm.fedavg={participation: full, local_steps: [1, 3], batch: [2, 5]}"
				}
				a, err := familytest.AuditRuns(t, wireAudited, run.Actors, sets...)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				r, err := familytest.AuditRuns(t, wireAudited, run.Reference, sets...)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if d := familytest.SameAudits(a, r); d != "" {
					t.Errorf("%s: the engines differ: %s", name, d)
				}
				for k := range a {
					familytest.CheckClaimShape(t, name, a[k], 5, scheme, mech, "eq. 2.69")
					if d := wireDetails(t, a[k]); d["tasks"].(float64) < 1 || d["exact"] != true {
						t.Errorf("%s, run %d: details %v", name, a[k].Run, d)
					}
				}
			}
		}
	}
}

// wireDetails returns a run's privacy_audit details.
func wireDetails(t *testing.T, r familytest.AuditRun) map[string]any {
	t.Helper()
	var d map[string]any
	if err := json.Unmarshal(r.Details["privacy_audit"], &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// Without noise each reply reveals its mean, which the replay must give
// exactly: a run on D scores ½(‖x − μ₀‖² − ‖x − μ₁‖²) = −½‖μ₁ − μ₀‖² with
// x = μ₀, a run on D′ +½‖μ₁ − μ₀‖², task by task — the replay of agent 0's
// training, from its own schedule and batch streams, is the run's, on
// either dataset. Checked on the run's final score against the sum of
// ½‖μ₁ − μ₀‖² over its tasks, which the details give as sensitivity_max
// only: so the runs here have one round, agent 0 in it (full
// participation).
func TestWireReplayIsTheRun(t *testing.T) {
	t.Parallel()
	for _, e := range []run.Engine{run.Actors, run.Reference} {
		runs, err := familytest.AuditRuns(t, wireAudited, e, "privacy.scheme=none", "iterations=1", "output.every=1",
			"algorithm.fedavg={participation: full, local_steps: [1, 3], batch: [2, 5]}")
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range runs {
			d := wireDetails(t, r)
			s, shift := r.Scores[1], d["sensitivity_max"].(float64)
			want := shift * shift / 2
			if !r.In {
				want = -want
			}
			// The two sides round differently (a difference of squared
			// distances against a squared norm): 1e-12 relative.
			if d["tasks"].(float64) != 1 || !(shift > 0) || math.Abs(s-want) > 1e-12*math.Abs(want) {
				t.Errorf("%s, run %d (in %v): score %v, want %v (tasks %v)", e, r.Run, r.In, s, want, d["tasks"])
			}
		}
	}
}

// In the first round every agent starts from w₀ = 0, and with one full-batch
// local step agent 0's update is ψ = ∇J₀(0) = −(2/N)Σ_n u_n d_n, so the shift
// of its mean between D and D′ is known in closed form from the two
// datasets: d = ∇J₀′(0) − ∇J₀(0). The score of a run with the canary then has
// the expectation KL(Lap(d, b) ‖ Lap(0, b)) = Σ_c (|d_c|/b + e^{−|d_c|/b} − 1),
// summed over the coordinates (1.62 at σ_g² = 0.02), and a run without it
// minus that: over 600 runs each way, each mean within 4 standard errors
// (about 0.06) of it.
func TestWireScoreExpectationIsTheLaplaceDivergence(t *testing.T) {
	t.Parallel()
	src := strings.NewReplacer("runs: 4", "runs: 1200", "iterations: 12", "iterations: 1", "every: 3", "every: 1",
		"participants: 3, local_steps: [1, 3], batch: [2, 5]", "participation: full, local_steps: [1, 1], batch: [10, 10]",
		"variance: 0.01", "variance: 0.02").Replace(wireAudited)
	p, err := scenarios.Parse([]byte(src), "wire.yaml", t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	c := p.Curves[0]
	seed := rng.RunSeed(c.Scenario.Seed, 0)
	prob, err := inputs.BuildProblem(context.Background(), c, t.TempDir(), seed)
	if err != nil {
		t.Fatal(err)
	}
	n, err := inputs.NeighbourProblem(context.Background(), c, t.TempDir(), seed, prob)
	if err != nil {
		t.Fatal(err)
	}
	b := noise.LaplaceScale(math.Sqrt(0.02))
	var kl float64
	for c := range 2 {
		var g [2]float64
		for h, s := range [2]*data.Set{prob.Sets[0], n.Set} {
			for i := range s.Len() {
				g[h] -= 2 * s.X[i*s.Dim+c] * s.Y[i] / float64(s.Len())
			}
		}
		d := math.Abs(g[1]-g[0]) / b
		kl += d + math.Expm1(-d)
	}
	runs, err := familytest.AuditRuns(t, src, run.Reference)
	if err != nil {
		t.Fatal(err)
	}
	var sum, sum2 [2]float64
	var count [2]int
	for _, r := range runs {
		h := 0
		if r.In {
			h = 1
		}
		s := r.Scores[1]
		sum[h] += s
		sum2[h] += s * s
		count[h]++
	}
	for h, want := range [2]float64{-kl, kl} {
		m := sum[h] / float64(count[h])
		se := math.Sqrt((sum2[h]/float64(count[h]) - m*m) / float64(count[h]))
		if math.Abs(m-want) > 4*se {
			t.Errorf("canary in %v: mean score %v ± %v, want %v", h == 1, m, se, want)
		}
	}
}

// Where eq. 2.69's claim holds — agent 0's reply moves by no more than the
// sensitivity bound B + B′ + ‖w^o − w′^o‖, and the claim is stated in ℓ1,
// exact for per-coordinate Laplace noise — the audit's lower bound stays
// below it after every row, and below the true ε, and finds part of it.
// One round from w₀ = 0, every agent in it, one full-batch local step:
// agent 0's reply is then one Laplace mechanism whose shift d a pilot run
// reports (sensitivity_max, and its ε ‖d‖₁/b as path_epsilon_final);
// B = B′ = ‖d‖₂/2 makes the bound hold, and σ_g makes the claim
// (√2·√M/σ_g)(‖d‖₂ + ‖w^o − w′^o‖) = 4. 1 000 runs.
func TestWireAuditStaysBelowAHoldingClaim(t *testing.T) {
	t.Parallel()
	src := strings.NewReplacer("iterations: 12", "iterations: 1", "every: 3", "every: 1",
		"participants: 3, local_steps: [1, 3], batch: [2, 5]", "participation: full, local_steps: [1, 1], batch: [10, 10]").Replace(wireAudited)
	pilot, err := familytest.AuditRuns(t, src, run.Reference)
	if err != nil {
		t.Fatal(err)
	}
	d := wireDetails(t, pilot[0])
	shift, dist := d["sensitivity_max"].(float64), d["optimum_distance"].(float64)
	sigma := 2 * (shift + dist) / 4 // √2·√2(‖d‖₂ + dist)/σ_g = 4
	c := summaryOf(t, src, run.Reference, "runs=1000", fmt.Sprintf("privacy.variance=%v", sigma*sigma),
		fmt.Sprintf("privacy.accountant={b: %v, b_prime: %v, norm: l1}", shift/2, shift/2))
	a := c.Audit
	d = c.Details["privacy_audit"].(map[string]any)
	truth := d["path_epsilon_final"].(float64)
	if d["tasks_over_bound"].(float64) != 0 || math.Abs(float64(a.UpperFinal)-4) > 1e-9 || !(truth <= float64(a.UpperFinal)) {
		t.Fatalf("the claim does not hold as set up: upper %v, true ε %v, details %v", a.UpperFinal, truth, d)
	}
	for k := range a.Lower {
		if a.Lower[k] > a.Upper[k] {
			t.Errorf("row %d: lower bound %v above the claim %v", k, a.Lower[k], a.Upper[k])
		}
	}
	if !(a.LowerFinal > 0 && float64(a.LowerFinal) <= truth) {
		t.Errorf("lower bound %v, true ε %v, claim %v", a.LowerFinal, truth, a.UpperFinal)
	}
}

// What the wire auditor cannot see or replay is refused, naming the field,
// as a user error.
func TestWireAuditRefusals(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ set, want string }{
		{"privacy.audit.view=white-box", "privacy.audit.view: canary dataset is scored on agent 0's link"},
		{"privacy.audit.canary=client", "privacy.audit.view: view wire scores agent 0's replies"},
		{"privacy.audit.method=one-run", "privacy.audit.method: canary dataset replaces agent 0's whole dataset"},
		{"loss.optimum=none", "loss.optimum: privacy.audit inserts the neighbouring dataset"},
		{"privacy.secure_aggregation={protocol: secagg}", "privacy.secure_aggregation: privacy.audit with canary dataset reads agent 0's replies"},
		{"network.dropout=0.1", "privacy.audit: the auditor replays agent 0 on the ideal network"},
		{"algorithm.fedavg.collect={kind: first-k, k: 2}", "algorithm.fedavg.collect: privacy.audit replays agent 0 under a server that waits"},
		{"algorithm.fedavg.server={kind: fedasync}", "algorithm.fedavg.server: privacy.audit replays agent 0 under a synchronous server"},
		{"algorithm.fedavg.adversary={kind: sign-flip, fraction: 0.5}", "algorithm.fedavg.adversary: privacy.audit replays agent 0 as an honest client"},
		{"algorithm.fedavg.client={kind: dp-sgd, clip: 1, noise_multiplier: 1}", "algorithm.fedavg.client: privacy.audit replays agent 0's training, and would need the noise of client dp-sgd"},
	} {
		_, err := familytest.AuditRuns(t, wireAudited, run.Reference, c.set)
		if err == nil || !strings.Contains(err.Error(), c.want) || !scenarios.IsUserError(err) {
			t.Errorf("--set %s: %v, want %q", c.set, err, c.want)
		}
	}
	_, err := familytest.AuditRuns(t, wireAudited, run.Reference, "privacy.scheme=none", "privacy.dp={clip: 1}")
	if err == nil || !strings.Contains(err.Error(), "privacy.audit.canary: canary dataset audits the privatized replies") {
		t.Errorf("DP-FedAvg: %v", err)
	}
}
