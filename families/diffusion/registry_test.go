package diffusion

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	adiffusion "maple/actors/diffusion"
	"maple/families/internal/familytest"
	"maple/scenarios/run"
)

// registryTiny is a small decentralized scenario; %s is the strategy and
// the rest of the diffusion section.
const registryTiny = `name: registry
seed: 5
runs: 2
iterations: 8
data: {agents: 8, samples: [8, 12], dim: 2}
algorithm:
  kind: diffusion
  step_size: 0.05
  diffusion: {%s}
topology: {graph: ring}
output: {plot: false, steady_state: 0.5}
`

// variants are the set-ups every behaviour of the family's slots runs in:
// the three strategies, random noise, a time-varying graph whose agents
// drop out, asynchronous diffusion, graph-homomorphic noise (which only the
// linear combination accepts) and sampled gradients under the privacy
// audit's replay of every agent.
var variants = []string{
	fmt.Sprintf(registryTiny, "strategy: atc"),
	fmt.Sprintf(registryTiny, "strategy: cta") + "privacy: {scheme: random, variance: 0.001, self_noise: true}\n",
	fmt.Sprintf(registryTiny, "strategy: consensus"),
	strings.Replace(fmt.Sprintf(registryTiny, "strategy: atc"), "graph: ring", "graph: ring, link_failure: 0.3", 1) + "network: {dropout: 0.1}\n",
	fmt.Sprintf(registryTiny, "strategy: atc, mode: async, wait: 0.1") + "network: {step_time: {kind: lognormal, median: 0.3, sigma: 0.8}}\n",
	fmt.Sprintf(registryTiny, "strategy: atc") + "privacy: {scheme: graph-homomorphic, variance: 0.001}\n",
	strings.Replace(fmt.Sprintf(registryTiny, "strategy: cta, gradient: sample"), "runs: 2", "runs: 4", 1) + "privacy: {scheme: random, variance: 0.01, audit: {view: network}}\n",
}

// TestEveryCombinationStepFromYAMLIsTheSameOnBothEngines enumerates the
// registry of combination steps and runs each from a scenario file, its
// parameters drawn in their ranges, in every variant on both engines:
// metrics.csv must be byte-identical, or both refuse alike, naming
// algorithm.diffusion.combine — as a step other than the linear one is
// refused with graph-homomorphic noise, and by the privacy audit.
func TestEveryCombinationStepFromYAMLIsTheSameOnBothEngines(t *testing.T) {
	familytest.EveryBehaviourAgrees(t, rand.New(rand.NewPCG(24, 5)), adiffusion.CombineSlot, "algorithm.diffusion.combine", variants,
		func(t *testing.T, name, src string, err error) {
			if strings.Contains(src, "graph-homomorphic") && !strings.Contains(err.Error(), "algorithm.diffusion.combine: graph-homomorphic noise cancels only in the linear combination") {
				t.Errorf("%s with graph-homomorphic noise: %v, want it refused naming the field", name, err)
			}
		})
}

// TestEveryAdaptationStepFromYAMLIsTheSameOnBothEngines does the same for
// the registry of adaptation steps, whose memory is every agent's own on
// both engines — synchronous agents, agents down in a round, asynchronous
// agents and the audit's replay alike. None is refused.
func TestEveryAdaptationStepFromYAMLIsTheSameOnBothEngines(t *testing.T) {
	familytest.EveryBehaviourAgrees(t, rand.New(rand.NewPCG(24, 6)), adiffusion.AdaptSlot, "algorithm.diffusion.adapt", variants,
		func(t *testing.T, name, src string, err error) {
			t.Errorf("%s refused in\n%s: %v", name, src, err)
		})
}

// The loader checks the adaptation step like any field, at its line: an
// unknown step lists the registered ones, and a parameter out of its range
// or of another step is named.
func TestAdaptationStepIsCheckedAtItsField(t *testing.T) {
	src := fmt.Sprintf(registryTiny, "strategy: atc")
	for set, want := range map[string]string{
		"algorithm.diffusion.adapt=nesterov":                  `algorithm.diffusion.adapt: unknown adapt behaviour "nesterov" (registered: momentum, sgd)`,
		"algorithm.diffusion.adapt={kind: momentum, beta: 1}": "algorithm.diffusion.adapt.beta: must lie in [0, 1), got 1",
		"algorithm.diffusion.adapt={beta: 0.5}":               "algorithm.diffusion.adapt.beta: not a parameter of sgd, the field's default behaviour (it has none)",
	} {
		_, err := familytest.MetricsOn(t, src, set, run.Reference)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("--set %s: %v, want %q", set, err, want)
		}
	}
}
