package fedplt

import (
	"bytes"
	"fmt"
	"maple/families/internal/familytest"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	afedplt "maple/actors/fedplt"
	"maple/internal/params"
	"maple/scenarios/run"
)

// registryTiny is a small Fed-PLT scenario; %s is the rest of the fedplt
// section.
const registryTiny = `name: registry
seed: 9
runs: 2
iterations: 6
data: {kind: logistic, agents: 6, samples: [20, 30], dim: 3}
loss: {kind: logistic, rho: 0.25}
algorithm:
  kind: fedplt
  fedplt: {tolerance: 0%s}
output: {plot: false}
`

// methods are the set-ups every local solver runs in: every method of the
// family, Fed-PLT also under Bernoulli and subset participation, and with
// the solver given to some agents only (Remark 1).
var methods = []string{
	"",
	", participation: {kind: bernoulli, probability: [0.4, 0.9]}",
	", participation: {kind: subset, fraction: 0.5}, solvers: [{agents: [0, 2], kind: gd}]",
	", method: fedpd",
	", method: fedlin",
	", method: tamuna",
	", method: led",
	", method: 5gcs",
}

// TestEverySolverFromYAMLIsTheSameOnBothEngines enumerates the registry of
// local solvers — nothing here lists one — and runs each from a scenario
// file, its parameters drawn in their ranges (a step of 0, the default
// step, half the time: a drawn step is mostly beyond the stability bound),
// three times under every method on both engines: metrics.csv must be byte-identical,
// or both engines refuse alike, naming a field of the solver. A method
// refuses a solver only by its declared traits, and says so.
func TestEverySolverFromYAMLIsTheSameOnBothEngines(t *testing.T) {
	r := rand.New(rand.NewPCG(24, 4))
	for _, name := range afedplt.Solvers.Names() {
		t.Run(name, func(t *testing.T) {
			spec, _ := params.Lookup(afedplt.SolverSlot, name)
			ran, refused := 0, 0
			for k := range 3 * len(methods) {
				src := fmt.Sprintf(registryTiny, methods[k%len(methods)])
				kv := []string{"kind: " + name}
				for _, p := range spec.Params {
					v := p.Random(r)
					if p.Name == "step" && r.IntN(2) == 0 {
						v = 0.0
					}
					if f, ok := v.(float64); ok {
						v = strconv.FormatFloat(f, 'g', -1, 64)
					}
					kv = append(kv, fmt.Sprintf("%s: %v", p.Name, v))
				}
				set := "algorithm.fedplt.solver={" + strings.Join(kv, ", ") + "}"
				a, aerr := familytest.MetricsOn(t, src, set, run.Actors)
				ref, rerr := familytest.MetricsOn(t, src, set, run.Reference)
				switch {
				case aerr != nil || rerr != nil:
					if aerr == nil || rerr == nil || aerr.Error() != rerr.Error() {
						t.Errorf("--set %s in\n%s: refused differently:\nactors:    %v\nreference: %v", set, src, aerr, rerr)
					} else if !strings.Contains(aerr.Error(), "algorithm.fedplt.solver") {
						t.Errorf("--set %s in\n%s: refused without naming the solver: %v", set, src, aerr)
					}
					refused++
				case !bytes.Equal(a, ref):
					t.Errorf("--set %s in\n%s: the engines' metrics differ:\nactors:\n%s\nreference:\n%s", set, src, a, ref)
				default:
					ran++
				}
			}
			if ran == 0 {
				t.Errorf("every set-up refused %s: nothing compared", name)
			}
			t.Logf("%s: %d runs byte-identical on both engines, %d refused alike", name, ran, refused)
		})
	}
}
