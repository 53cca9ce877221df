package randomwalk_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	arw "maple/actors/randomwalk"
	"maple/families/internal/familytest"
	"maple/scenarios/run"
)

// walkTiny is a small walk; %s is the rest of the randomwalk section, and
// the walks start at 0, which every node rule accepts.
const walkTiny = `name: registry
seed: 5
runs: 2
iterations: 30
data: {agents: 8, samples: [1, 3], dim: 2}
algorithm:
  kind: randomwalk
  step_size: 0.05
  randomwalk: {init: zero%s}
topology: {graph: erdos-renyi, probability: 0.5}
output: {plot: false, steady_state: 0.5}
`

// walkVariants are the set-ups every node rule runs in: a uniform walk, a
// Gamma-private importance walk with three walks at once (each with its own
// memory at every node) and the paper's weights, the Laplace baseline with
// the unbiased weights, a walk started at random (which walkman refuses),
// and gossip, which has no walk: every rule is refused there.
var walkVariants = []string{
	fmt.Sprintf(walkTiny, ""),
	fmt.Sprintf(walkTiny, ", target: importance, walks: 3, mechanism: {epsilon: 3, delta: 0.06, l_range: [1, 2]}") + "privacy: {scheme: gamma}\n",
	fmt.Sprintf(walkTiny, ", target: importance, weighting: noisy-r, mechanism: {epsilon: 3, l_range: [1, 2]}") + "privacy: {scheme: laplace}\n",
	strings.Replace(fmt.Sprintf(walkTiny, ""), "init: zero", "init: uniform", 1),
	fmt.Sprintf(walkTiny, ", protocol: gossip"),
}

// TestEveryNodeRuleFromYAMLIsTheSameOnBothEngines enumerates the registry
// of node rules and runs each from a scenario file, its parameters drawn in
// their ranges, in every variant on both engines: metrics.csv must be
// byte-identical, or both refuse alike, naming algorithm.randomwalk.node —
// as gossip refuses every rule, and walkman a walk that does not start at 0.
func TestEveryNodeRuleFromYAMLIsTheSameOnBothEngines(t *testing.T) {
	familytest.EveryBehaviourAgrees(t, rand.New(rand.NewPCG(24, 7)), arw.NodeSlot, "algorithm.randomwalk.node", walkVariants,
		func(t *testing.T, name, src string, err error) {
			want := "algorithm.randomwalk.node: does not apply: protocol gossip has no walk"
			if !strings.Contains(src, "gossip") {
				want = "algorithm.randomwalk.node: walkman keeps the token the mean of the nodes' shares"
			}
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s in\n%s: refused with %v, want %q", name, src, err, want)
			}
		})
}

// The loader checks the node rule like any field: an unknown rule lists the
// registered ones, with its line; a rule set for gossip is refused.
func TestNodeRuleIsCheckedAtItsField(t *testing.T) {
	for set, want := range map[string]string{
		"algorithm.randomwalk.node=momentum":   `algorithm.randomwalk.node: unknown node behaviour "momentum" (registered: sgd, walkman)`,
		"algorithm.randomwalk.protocol=gossip": "", // the default rule is not set: gossip runs
	} {
		_, err := familytest.MetricsOn(t, fmt.Sprintf(walkTiny, ""), set, run.Reference)
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("--set %s: %v, want %q", set, err, want)
		}
	}
}
