package fedavg

import (
	"slices"
	"strings"
	"testing"

	"maple/scenarios"
	"maple/scenarios/run"
)

// Under algorithm.fedavg.participation poisson, what needs a round of fixed
// size is refused in one line naming the field.
func TestPoissonRefusalsNameTheField(t *testing.T) {
	t.Parallel()
	poisson := "algorithm.fedavg.participation=poisson"
	for _, c := range []struct {
		set  []string
		want string
	}{
		{[]string{"algorithm.fedavg.participants=13"}, "algorithm.fedavg.participants: under participation poisson it is the expected number L"},
		{[]string{"algorithm.fedavg.collect={kind: first-k, k: 3}"}, "algorithm.fedavg.collect: first-k over-selects a round of fixed size"},
		{[]string{"algorithm.fedavg.importance={agents: partial}"}, "algorithm.fedavg.importance.agents: policy partial draws a fixed number"},
		{[]string{"privacy.secure_aggregation={protocol: secagg+, bits: 40, clip: 50}", "privacy.dp={mode: distributed}"}, "privacy.dp.mode: distributed DP splits the noise"},
		{[]string{"privacy.secure_aggregation={}", "privacy.dp={}"}, "privacy.secure_aggregation: under poisson participation a round of secure aggregation completes only"},
		{[]string{"privacy.dp={adaptive_clip: {}}"}, "privacy.dp.adaptive_clip: adaptive clipping divides the noisy count"},
		{[]string{"privacy.secure_aggregation={neighbours: 3}"}, "privacy.secure_aggregation.neighbours: does not apply: under algorithm.fedavg.participation poisson"},
		{[]string{"privacy.secure_aggregation={bits: 4}"}, "privacy.secure_aggregation.bits: 4 bits cannot hold a sum of 12 inputs without wrapping around; need at least 5 (under algorithm.fedavg.participation poisson a round may hold all data.agents = 12 agents)"},
	} {
		_, err := scenarios.Parse([]byte(privacyTiny), "p.yaml", t.TempDir(), append([]string{poisson}, c.set...))
		if err == nil || !scenarios.IsUserError(err) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: %v\nwant a one-line error containing %q", c.set, err, c.want)
		}
	}
}

// The summary of a DP-FedAvg run under Poisson participation names the
// sampling, the relation and the accountant its ε is accounted with
// (Poisson, the default add/remove, PLD) and its rounds' sizes, and warns
// of the rounds that drew nobody — the same on both engines; fixed-size
// sampling is named as such, with the declared relation.
func TestPoissonSummaryNamesSamplingAndRelation(t *testing.T) {
	t.Parallel()
	set := []string{"algorithm.fedavg.participants=1", "privacy.dp={clip: 0.5}"}
	var first map[string]any
	for _, e := range []run.Engine{run.Actors, run.Reference} {
		c := summaryOf(t, privacyTiny, e, append(set, "algorithm.fedavg.participation=poisson")...)
		p := c.Details["privacy"].(map[string]any)
		if p["sampling"] != "poisson" || p["relation"] != "add-remove" || p["accountant"] != "pld" || !strings.Contains(p["bound"].(string), "under poisson sampling at q = 0.0833") {
			t.Errorf("%s: privacy details %v", e, p)
		}
		part := c.Details["participation"].(map[string]any)
		if part["kind"] != "poisson" || part["rate"] != 1.0/12 || part["empty_rounds"].(float64) < 1 || part["min_draws"].(float64) != 0 {
			t.Errorf("%s: participation details %v", e, part)
		}
		if !slices.ContainsFunc(c.Warnings, func(w string) bool { return strings.Contains(w, "drew no agent") }) {
			t.Errorf("%s: warnings %v, want the empty rounds", e, c.Warnings)
		}
		if first == nil {
			first = p
		} else if p["epsilon_final"] != first["epsilon_final"] {
			t.Errorf("ε: actors %v, reference %v", first["epsilon_final"], p["epsilon_final"])
		}
	}
	c := summaryOf(t, privacyTiny, run.Actors, append(set, "privacy.dp.relation=replace-one")...)
	if p := c.Details["privacy"].(map[string]any); p["sampling"] != "fixed" || p["relation"] != "replace-one" || p["sensitivity"] != 1.0 {
		t.Errorf("fixed-size sampling: privacy details %v", p)
	}
	if _, ok := c.Details["participation"]; ok {
		t.Error("fixed-size sampling reports participation details")
	}
}
