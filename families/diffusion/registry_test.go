package diffusion

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	adiffusion "maple/actors/diffusion"
	"maple/families/internal/familytest"
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

// variants are the set-ups every combination step runs in: the three
// strategies, random noise, a time-varying graph, asynchronous diffusion,
// and graph-homomorphic noise (which only the linear step accepts).
var variants = []string{
	fmt.Sprintf(registryTiny, "strategy: atc"),
	fmt.Sprintf(registryTiny, "strategy: cta") + "privacy: {scheme: random, variance: 0.001, self_noise: true}\n",
	fmt.Sprintf(registryTiny, "strategy: consensus"),
	strings.Replace(fmt.Sprintf(registryTiny, "strategy: atc"), "graph: ring", "graph: ring, link_failure: 0.3", 1),
	fmt.Sprintf(registryTiny, "strategy: atc, mode: async, wait: 0.1") + "network: {step_time: {kind: lognormal, median: 0.3, sigma: 0.8}}\n",
	fmt.Sprintf(registryTiny, "strategy: atc") + "privacy: {scheme: graph-homomorphic, variance: 0.001}\n",
}

// TestEveryCombinationStepFromYAMLIsTheSameOnBothEngines enumerates the
// registry of combination steps and runs each from a scenario file, its
// parameters drawn in their ranges, in every variant on both engines:
// metrics.csv must be byte-identical, or both refuse alike, naming
// algorithm.diffusion.combine — as a step other than the linear one is
// refused with graph-homomorphic noise.
func TestEveryCombinationStepFromYAMLIsTheSameOnBothEngines(t *testing.T) {
	familytest.EveryBehaviourAgrees(t, rand.New(rand.NewPCG(24, 5)), adiffusion.CombineSlot, "algorithm.diffusion.combine", variants,
		func(t *testing.T, name, src string, err error) {
			if strings.Contains(src, "graph-homomorphic") && !strings.Contains(err.Error(), "algorithm.diffusion.combine: graph-homomorphic noise cancels only in the linear combination") {
				t.Errorf("%s with graph-homomorphic noise: %v, want it refused naming the field", name, err)
			}
		})
}
