package diffusion

import (
	"encoding/json"
	"math"
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
	for _, scheme := range []string{"none", "random", "graph-homomorphic", "local-graph-homomorphic"} {
		for _, view := range []string{"wire", "network"} {
			for _, mech := range []string{"laplace", "gaussian"} {
				if mech == "gaussian" && (scheme == "local-graph-homomorphic" || scheme == "none") {
					continue
				}
				name := scheme + "/" + view + "/" + mech
				sets := []string{"privacy.scheme=" + scheme, "privacy.audit.view=" + view, "privacy.mechanism=" + mech}
				a, err := familytest.AuditRuns(t, audited, run.Actors, sets...)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				r, err := familytest.AuditRuns(t, audited, run.Reference, sets...)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if d := familytest.SameAudits(a, r); d != "" {
					t.Errorf("%s: the engines differ: %s", name, d)
				}
				for k := range a {
					familytest.CheckClaimShape(t, name, a[k], 5, scheme, mech, "eq. 31")
				}
			}
		}
	}
}

// auditDetails returns a run's privacy_audit details.
func auditDetails(t *testing.T, r familytest.AuditRun) map[string]any {
	t.Helper()
	var d map[string]any
	if err := json.Unmarshal(r.Details["privacy_audit"], &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// Under the network view the score is the exact log-likelihood ratio, so
// its expectation given the run's path is the divergence the run reports
// with the canary and minus it without: over 40 runs, the mean of
// score − (±divergence) must be within 4 standard errors of 0. This checks,
// through the runner, that the canary runs train on D′ and the others on D.
func TestNetworkScoresAreCentredOnTheDivergence(t *testing.T) {
	src := strings.Replace(audited, "runs: 4", "runs: 40", 1)
	for _, scheme := range []string{"random", "graph-homomorphic"} {
		runs, err := familytest.AuditRuns(t, src, run.Reference, "privacy.scheme="+scheme, "privacy.audit.view=network")
		if err != nil {
			t.Fatal(err)
		}
		var sum, sum2, gap float64
		for _, r := range runs {
			d := auditDetails(t, r)
			div := d["divergence"].(float64)
			s := r.Scores[len(r.Scores)-1]
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
		d := auditDetails(t, r)
		reveals := strings.Contains(d["statistic"].(string), "reveals agent 0's value")
		if ratio := strings.HasPrefix(r.Curve, "ratio,"); reveals != ratio {
			t.Errorf("%s: %v", r.Curve, d["statistic"])
		}
		if s := r.Scores[len(r.Scores)-1]; strings.HasPrefix(r.Curve, "ratio, network") && (s > 0) != r.In {
			t.Errorf("%s, run %d (canary in: %v): score %v", r.Curve, r.Run, r.In, s)
		}
	}
}
