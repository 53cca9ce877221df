package graphfl

import (
	"bytes"
	"fmt"
	"maple/families/internal/familytest"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	afedavg "maple/actors/fedavg"
	"maple/internal/params"
	"maple/scenarios"
	"maple/scenarios/run"
)

// registryTiny is a small graph FL scenario whose servers combine 5 of
// their 6 clients' replies, so that Krum may tolerate one Byzantine reply
// (5 > 2·1 + 2).
const registryTiny = `name: registry
seed: 5
runs: 2
iterations: 8
data: {agents: 12, samples: [8, 12], dim: 2}
loss: {rho: 0.05}
algorithm:
  kind: graphfl
  step_size: 0.2
  graphfl: {servers: 2, participants: 5, local_steps: [1, 3], batch: [1, 4]}
topology: {graph: complete}
output: {plot: false, steady_state: 0.5}
`

// Graph FL's servers apply every FedAvg server behaviour that is a
// combination rule, and its clients every FedAvg client, enumerated from the
// registries: from a scenario file, with parameters drawn in their ranges,
// plain and with client and server noise, both engines give the same
// metrics.csv byte for byte, or refuse alike; a server that is not a rule
// is refused by the loader, naming the field.
func TestEveryRuleAndClientFromYAMLIsTheSameOnBothEngines(t *testing.T) {
	r := rand.New(rand.NewPCG(24, 4))
	variants := []string{"", "privacy: {scheme: update-noise, variance: 0.001}\n", "privacy: {scheme: random, variance: 0.001}\n"}
	for _, slot := range []string{afedavg.ServerSlot, afedavg.ClientSlot} {
		for _, name := range params.Names(slot) {
			t.Run(slot+"/"+name, func(t *testing.T) {
				spec, _ := params.Lookup(slot, name)
				set := func() string {
					kv := []string{"kind: " + name}
					for _, p := range spec.Params {
						v := p.Random(r)
						if f, ok := v.(float64); ok {
							v = strconv.FormatFloat(f, 'g', -1, 64)
						}
						kv = append(kv, fmt.Sprintf("%s: %v", p.Name, v))
					}
					return "algorithm.graphfl." + strings.TrimPrefix(slot, "fedavg.") + "={" + strings.Join(kv, ", ") + "}"
				}
				if s, _ := afedavg.LookupServer(name); slot == afedavg.ServerSlot && s.Behaviour != nil {
					_, err := scenarios.Parse([]byte(registryTiny), "registry.yaml", ".", []string{set()})
					if err == nil || !strings.Contains(err.Error(), "algorithm.graphfl.server: server "+name+" is not a combination rule") {
						t.Errorf("server %s: %v, want it refused as no combination rule", name, err)
					}
					return
				}
				// A server that needs its own client, and that client, are
				// refused: graph FL's clients send their server the reply
				// alone.
				refusal := ""
				if s, _ := afedavg.LookupServer(name); slot == afedavg.ServerSlot && s.Client != "" {
					refusal = "algorithm.graphfl.server: server " + name + " needs its own client (" + s.Client + ")"
				}
				if owner := afedavg.ClientOwner(name); slot == afedavg.ClientSlot && owner != "" {
					refusal = "algorithm.graphfl.client: client " + name + " is the client of server " + owner
				}
				if refusal != "" {
					_, err := scenarios.Parse([]byte(registryTiny), "registry.yaml", ".", []string{set()})
					if err == nil || !strings.Contains(err.Error(), refusal) {
						t.Errorf("%s: %v, want it refused: %s", name, err, refusal)
					}
					return
				}
				ran := 0
				for range 3 {
					for _, variant := range variants {
						s := set()
						a, aerr := familytest.MetricsOn(t, registryTiny+variant, s, run.Actors)
						ref, rerr := familytest.MetricsOn(t, registryTiny+variant, s, run.Reference)
						switch {
						case aerr != nil || rerr != nil:
							if aerr == nil || rerr == nil || aerr.Error() != rerr.Error() {
								t.Errorf("--set %s: refused differently:\nactors:    %v\nreference: %v", s, aerr, rerr)
							}
						case !bytes.Equal(a, ref):
							t.Errorf("--set %s: the engines' metrics differ:\nactors:\n%s\nreference:\n%s", s, a, ref)
						default:
							ran++
						}
					}
				}
				if ran == 0 {
					t.Errorf("every draw of %s was refused: nothing compared", name)
				}
			})
		}
	}
}
