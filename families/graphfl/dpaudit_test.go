package graphfl

import (
	"strings"
	"testing"

	"maple/families/internal/familytest"
	"maple/scenarios"
	"maple/scenarios/run"
)

// audited is a small graph FL scenario with a many-run audit: 4 servers of 3
// clients, 2 drawn per round.
const audited = `name: audited
seed: 9
runs: 4
iterations: 9
data: {kind: regression, agents: 12, samples: 12, dim: 2}
loss: {kind: least-squares, rho: 0.1}
algorithm:
  kind: graphfl
  step_size: 0.2
  graphfl: {servers: 4, participants: 2, local_steps: [1, 2], batch: [1, 3]}
topology: {graph: complete, weights: metropolis}
privacy: {mechanism: laplace, variance: 0.01, audit: {}}
output: {every: 3, plot: false}
`

// Both engines record the same audit, bit for bit, for every server scheme,
// view and mechanism: one score and one ε per row (rounds 0, 3, 6, 9), 0 at
// round 0; eq. 3.58's ε grows linearly in the round (∞ without noise); the
// canary is in the odd runs.
func TestPrivacyAuditIsTheSameOnBothEngines(t *testing.T) {
	familytest.CheckDatasetAuditOnBothEngines(t, audited, []string{"none", "random", "random-broadcast", "graph-homomorphic", "local-graph-homomorphic"}, 4, "eq. 3.58")
}

// Under the network view the score is the exact log-likelihood ratio, so
// its expectation given the run's path is the divergence the run reports
// with the canary and minus it without: over 40 runs, the mean of
// score − (±divergence) must be within 4 standard errors of 0, and the runs
// with the canary must score higher on average.
func TestNetworkScoresAreCentredOnTheDivergence(t *testing.T) {
	familytest.CheckNetworkScoresAreCentred(t, strings.Replace(audited, "runs: 4", "runs: 40", 1), []string{"random", "graph-homomorphic"})
}

// What the auditor cannot see or replay is refused by name, exit 2.
func TestPrivacyAuditRefusals(t *testing.T) {
	for _, c := range []struct {
		sets []string
		want string
	}{
		{[]string{"privacy.scheme=model-noise"}, "privacy.audit: audits the servers' exchange (eq. 3.58); client-level noise (model-noise)"},
		{[]string{"privacy.scheme=random", "algorithm.graphfl.client_noise=update-noise"}, "client-level noise (update-noise)"},
		{[]string{"privacy.scheme=none", "algorithm.graphfl.servers=1", "topology.graph=complete"}, "algorithm.graphfl.servers: privacy.audit audits the exchange between servers"},
		{[]string{"privacy.scheme=random", "loss.optimum=none"}, "loss.optimum: privacy.audit inserts the neighbouring dataset"},
		{[]string{"privacy.scheme=random", "privacy.self_noise=true", "privacy.audit.view=network"}, "privacy.self_noise: the network view replays every server's self term"},
		{[]string{"privacy.scheme=random", "privacy.audit.method=one-run"}, "privacy.audit.method: algorithm.kind graphfl offers the methods many-run, not one-run"},
	} {
		_, err := familytest.AuditRuns(t, audited, run.Reference, c.sets...)
		if err == nil || !strings.Contains(err.Error(), c.want) || !scenarios.IsUserError(err) {
			t.Errorf("--set %v: %v, want %q", c.sets, err, c.want)
		}
	}
}
