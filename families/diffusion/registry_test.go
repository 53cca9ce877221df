package diffusion

import (
	"bytes"
	"fmt"
	"maple/families/internal/familytest"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	adiffusion "maple/actors/diffusion"
	"maple/internal/params"
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
// registry of combination steps — nothing here lists one — and runs each
// from a scenario file, its parameters drawn in their ranges, in every
// variant on both engines: metrics.csv must be byte-identical, or both
// refuse alike. A step other than the linear one is refused with
// graph-homomorphic noise, naming algorithm.diffusion.combine.
func TestEveryCombinationStepFromYAMLIsTheSameOnBothEngines(t *testing.T) {
	r := rand.New(rand.NewPCG(24, 5))
	for _, name := range params.Names(adiffusion.CombineSlot) {
		t.Run(name, func(t *testing.T) {
			spec, _ := params.Lookup(adiffusion.CombineSlot, name)
			ran := 0
			for _, src := range variants {
				kv := []string{"kind: " + name}
				for _, p := range spec.Params {
					v := p.Random(r)
					if f, ok := v.(float64); ok {
						v = strconv.FormatFloat(f, 'g', -1, 64)
					}
					kv = append(kv, fmt.Sprintf("%s: %v", p.Name, v))
				}
				set := "algorithm.diffusion.combine={" + strings.Join(kv, ", ") + "}"
				a, aerr := familytest.MetricsOn(t, src, set, run.Actors)
				ref, rerr := familytest.MetricsOn(t, src, set, run.Reference)
				switch {
				case aerr != nil || rerr != nil:
					if aerr == nil || rerr == nil || aerr.Error() != rerr.Error() {
						t.Errorf("--set %s in\n%s: refused differently:\nactors:    %v\nreference: %v", set, src, aerr, rerr)
					}
					if name != "linear" && strings.Contains(src, "graph-homomorphic") && !strings.Contains(fmt.Sprint(aerr), "algorithm.diffusion.combine: graph-homomorphic noise cancels only in the linear combination") {
						t.Errorf("--set %s with graph-homomorphic noise: %v, want it refused naming the field", set, aerr)
					}
				case !bytes.Equal(a, ref):
					t.Errorf("--set %s in\n%s: the engines' metrics differ:\nactors:\n%s\nreference:\n%s", set, src, a, ref)
				default:
					ran++
				}
			}
			if ran == 0 {
				t.Errorf("every variant refused %s: nothing compared", name)
			}
		})
	}
}
