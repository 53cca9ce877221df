package diffusion

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"maple/families/internal/familytest"
	"maple/scenarios"
	"maple/scenarios/run"
)

// audited is a small decentralized scenario with a many-run audit.
const audited = `name: audited
seed: 9
runs: 4
iterations: 12
data: {kind: regression, agents: 7, samples: 20, dim: 2, regression: {covariance_scale: 0.3}}
loss: {kind: least-squares, rho: 0.01}
algorithm: {kind: diffusion, step_size: 0.2, diffusion: {strategy: atc}}
topology: {graph: geometric, radius: 0.6, min_degree: 2, weights: metropolis}
privacy: {mechanism: laplace, variance: 0.01, audit: {}}
output: {every: 3, plot: false}
`

// Both engines record the same audit, bit for bit, for every scheme, view
// and mechanism: one score and one accountant's ε per row of the metrics
// table (rows 0, 3, 6, 9, 12), 0 at iteration 0; the ε of eq. 31 grows
// linearly in the iteration (∞ without noise); the canary is in the odd runs.
func TestPrivacyAuditIsTheSameOnBothEngines(t *testing.T) {
	familytest.CheckDatasetAuditOnBothEngines(t, audited, []string{"none", "random", "graph-homomorphic", "local-graph-homomorphic"}, 5, "eq. 31")
}

// Under the network view the score is the exact log-likelihood ratio, so
// its expectation given the run's path is the divergence the run reports
// with the canary and minus it without: over 40 runs, the mean of
// score − (±divergence) must be within 4 standard errors of 0. This checks,
// through the runner, that the canary runs train on D′ and the others on D.
func TestNetworkScoresAreCentredOnTheDivergence(t *testing.T) {
	familytest.CheckNetworkScoresAreCentred(t, strings.Replace(audited, "runs: 4", "runs: 40", 1), []string{"random", "graph-homomorphic"})
}

// What the auditor cannot replay is refused by name, exit 2.
func TestPrivacyAuditRefusals(t *testing.T) {
	for _, c := range []struct{ set, want string }{
		{"algorithm.diffusion.mode=async", "algorithm.diffusion.mode: privacy.audit replays the synchronous recursion"},
		{"topology.link_failure=0.2", "privacy.audit: the auditor replays a fixed graph"},
		{"loss.optimum=none", "loss.optimum: privacy.audit inserts the neighbouring dataset of the accountant"},
		{"algorithm.diffusion.combine={kind: clipped-gossip}", "algorithm.diffusion.combine: privacy.audit replays the linear combination"},
		{"privacy.audit.method=one-run", "privacy.audit.method: algorithm.kind diffusion offers the methods many-run, not one-run"},
		{"privacy.audit.canary=point", `privacy.audit.canary: unknown value "point"`},
	} {
		_, err := familytest.AuditRuns(t, audited, run.Reference, "privacy.scheme=random", c.set)
		if err == nil || !strings.Contains(err.Error(), c.want) || !scenarios.IsUserError(err) {
			t.Errorf("--set %s: %v, want %q", c.set, err, c.want)
		}
	}
	_, err := familytest.AuditRuns(t, audited, run.Reference, "privacy.scheme=random", "privacy.self_noise=true", "privacy.audit.view=network")
	if err == nil || !strings.Contains(err.Error(), "privacy.self_noise: the network view replays every agent's self term") {
		t.Errorf("self noise under the network view: %v", err)
	}
}

// The ratio-form scenario (not bundled: it names its matrix file) loads from
// its directory and runs, and in the ratio form the network view separates
// every run — above 0 with the canary, below without — while the same draw
// in the ratio-free form does not reveal agent 0's value.
func TestRatioFormScenarioSeparatesEveryRun(t *testing.T) {
	const file = "../../scenarios/decentralized/ratio-form/audit.yaml"
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := familytest.AuditRunsIn(t, string(src), filepath.Dir(file), run.Reference, "runs=6", "iterations=4", "sweep={privacy.variance: [3.2727e7]}")
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 6*4 {
		t.Fatalf("%d runs, want 6 of each of the 4 curves", len(runs))
	}
	for _, r := range runs {
		d := familytest.AuditDetails(t, r)
		reveals := strings.Contains(d["statistic"].(string), "reveals agent 0's value")
		if ratio := strings.HasPrefix(r.Curve, "ratio,"); reveals != ratio {
			t.Errorf("%s: %v", r.Curve, d["statistic"])
		}
		if s := r.Scores[len(r.Scores)-1]; strings.HasPrefix(r.Curve, "ratio, network") && (s > 0) != r.In {
			t.Errorf("%s, run %d (canary in: %v): score %v", r.Curve, r.Run, r.In, s)
		}
	}
}
