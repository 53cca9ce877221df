package fedavg

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	afedavg "maple/actors/fedavg"
	"maple/internal/params"
	"maple/scenarios"
	"maple/scenarios/run"
)

// registryTiny is a small scenario in which Krum may tolerate up to two
// Byzantine replies (8 > 2·2 + 2) and every slot's choice matters.
const registryTiny = `name: registry
seed: 5
runs: 2
iterations: 10
data: {agents: 10, samples: [8, 12], dim: 2}
output: {plot: false, steady_state: 0.5}
algorithm:
  kind: fedavg
  step_size: 0.05
  fedavg:
    participants: 8
    local_steps: [1, 3]
    batch: [1, 4]
`

// variants are what the test adds to registryTiny, in turn: nothing (the
// flat reference), privatized updates, and a time model under which
// deadlines bite (the event-driven reference).
var variants = []string{
	"",
	"privacy: {scheme: update-noise, variance: 0.001}\n",
	"network: {step_time: {kind: lognormal, median: 0.3, sigma: 0.8}}\n",
}

// yamlValue writes a parameter value as a YAML scalar.
func yamlValue(v any) string {
	if f, ok := v.(float64); ok {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return fmt.Sprint(v)
}

// engineOutcome is what one engine made of a plan: its user error, or its
// metrics and the summary's final and steady-state values (the rest of the
// summary says what each engine is, such as the actor engine's message
// count).
type engineOutcome struct {
	refused      error
	metrics, etc []byte
}

func execute(t *testing.T, src, set string, e run.Engine, more ...string) engineOutcome {
	t.Helper()
	p, err := scenarios.Parse([]byte(src), "registry.yaml", t.TempDir(), append([]string{set}, more...))
	if err != nil {
		if !scenarios.IsUserError(err) {
			t.Fatalf("--set %s: %v", set, err)
		}
		return engineOutcome{refused: err}
	}
	dir := t.TempDir()
	res, err := run.Execute(p, dir, run.Options{Engine: e, Workers: 1})
	if err != nil {
		if !scenarios.IsUserError(err) {
			t.Fatalf("--set %s on %s: %v", set, e, err)
		}
		return engineOutcome{refused: err}
	}
	metrics, err := os.ReadFile(filepath.Join(dir, "metrics.csv"))
	if err != nil {
		t.Fatal(err)
	}
	var numbers []any // what the summary says of the curves' numbers
	for _, c := range res.Summary.Curves {
		numbers = append(numbers, c.Final, c.SteadyState)
	}
	etc, err := json.Marshal(numbers)
	if err != nil {
		t.Fatal(err)
	}
	return engineOutcome{metrics: metrics, etc: etc}
}

// TestEveryBehaviourFromYAMLIsTheSameOnBothEngines enumerates the registries
// of FedAvg's five slots — nothing here lists a behaviour — and runs each
// from a scenario file, its parameters drawn anywhere in their declared
// ranges, on both engines (a compressor under the mean in the first
// variant and under the majority vote, signSGD's server, in the others,
// counting the bytes the agents send): metrics.csv and the summary's final and
// steady-state values must be byte-identical, or the scenario refused alike (by the loader, or by both
// engines), or, for a server declared actor-only, refused by the reference
// engine naming algorithm.fedavg.server. A behaviour whose every draw is
// refused fails: the test would prove nothing about it.
func TestEveryBehaviourFromYAMLIsTheSameOnBothEngines(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(24, 3))
	for _, slot := range []string{afedavg.ServerSlot, afedavg.ClientSlot, afedavg.CollectSlot, afedavg.AdversarySlot, afedavg.CompressSlot} {
		field := "algorithm." + slot
		for _, name := range params.Names(slot) {
			t.Run(slot+"/"+name, func(t *testing.T) {
				spec, _ := params.Lookup(slot, name)
				server, _ := afedavg.LookupServer(name)
				actorOnly := slot == afedavg.ServerSlot && server.ActorOnly
				ran := 0
				for draw, variant := range variants {
					kv := []string{"kind: " + name}
					for _, p := range spec.Params {
						kv = append(kv, p.Name+": "+yamlValue(p.Random(r)))
					}
					set := field + "={" + strings.Join(kv, ", ") + "}"
					src := registryTiny + variant
					if slot == afedavg.CompressSlot {
						src = registryTiny + "    uplink_bytes: true\n" + variant
						if draw > 0 {
							src = registryTiny + "    uplink_bytes: true\n    server: {kind: majority, lr: 0.5}\n" + variant
						}
					}
					var pair []string // a server that needs its own client gets it
					if slot == afedavg.ServerSlot && server.Client != "" {
						pair = []string{"algorithm.fedavg.client=" + server.Client}
					}
					if owner := afedavg.ClientOwner(name); slot == afedavg.ClientSlot && owner != "" {
						pair = []string{"algorithm.fedavg.server=" + owner}
					}
					a, ref := execute(t, src, set, run.Actors, pair...), execute(t, src, set, run.Reference, pair...)
					what := fmt.Sprintf("variant %d, --set %s", draw, set)
					switch {
					case actorOnly:
						if ref.refused == nil || !strings.Contains(ref.refused.Error(), "algorithm.fedavg.server: server behaviour \""+name+"\" exists only in the actor engine") {
							t.Errorf("%s: the reference engine gives %v, want it refused by name", what, ref.refused)
						}
						if a.refused == nil {
							ran++
						}
					case a.refused != nil || ref.refused != nil:
						if a.refused == nil || ref.refused == nil || a.refused.Error() != ref.refused.Error() {
							t.Errorf("%s: refused differently:\nactors:    %v\nreference: %v", what, a.refused, ref.refused)
						}
					case !bytes.Equal(a.metrics, ref.metrics) || !bytes.Equal(a.etc, ref.etc):
						t.Errorf("%s: the engines' outputs differ:\nactors:\n%s%s\nreference:\n%s%s", what, a.metrics, a.etc, ref.metrics, ref.etc)
					default:
						ran++
					}
				}
				if ran == 0 {
					t.Errorf("every draw of %s was refused: nothing compared", name)
				}
			})
		}
	}
}
