// Package familytest holds what the families' tests share: running a
// scenario on one engine and reading back what it wrote, and running every
// behaviour of a slot on both engines.
package familytest

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"maple/internal/params"
	"maple/scenarios"
	"maple/scenarios/run"
)

// MetricsOn runs the scenario src, with the override set, on engine e and
// returns the metrics.csv it wrote, or the user error that refused it (the
// loader's or the run's). Any other failure ends the test.
func MetricsOn(t testing.TB, src, set string, e run.Engine) ([]byte, error) {
	t.Helper()
	p, err := scenarios.Parse([]byte(src), "registry.yaml", t.TempDir(), []string{set})
	if err != nil {
		if !scenarios.IsUserError(err) {
			t.Fatalf("--set %s: %v", set, err)
		}
		return nil, err
	}
	dir := t.TempDir()
	if _, err := run.Execute(p, dir, run.Options{Engine: e, Workers: 1}); err != nil {
		if !scenarios.IsUserError(err) {
			t.Fatalf("--set %s on %s: %v", set, e, err)
		}
		return nil, err
	}
	return os.ReadFile(filepath.Join(dir, "metrics.csv"))
}

// Behaviour returns the behaviour name of slot as a scenario value, a flow
// mapping of its kind and every parameter drawn from r anywhere in its
// declared range (params.Param.Random): {kind: momentum, beta: 0.37}.
func Behaviour(r *rand.Rand, slot, name string) string {
	spec, ok := params.Lookup(slot, name)
	if !ok {
		panic("familytest: no behaviour " + name + " in slot " + slot)
	}
	kv := []string{"kind: " + name}
	for _, p := range spec.Params {
		v := p.Random(r)
		if f, ok := v.(float64); ok {
			v = strconv.FormatFloat(f, 'g', -1, 64)
		}
		kv = append(kv, fmt.Sprintf("%s: %v", p.Name, v))
	}
	return "{" + strings.Join(kv, ", ") + "}"
}

// EveryBehaviourAgrees enumerates the behaviours registered in slot —
// nothing lists them — and runs each as the scenario's field, its
// parameters drawn from r (Behaviour), in every scenario of srcs on both
// engines: metrics.csv must be byte-identical, or both engines must refuse
// the run with the same error, which names field; refused, if set, checks
// such an error further. A behaviour that every scenario refuses fails the
// test, since nothing was compared.
func EveryBehaviourAgrees(t *testing.T, r *rand.Rand, slot, field string, srcs []string, refused func(t *testing.T, name, src string, err error)) {
	t.Helper()
	for _, name := range params.Names(slot) {
		t.Run(name, func(t *testing.T) {
			ran, refusals := 0, 0
			for _, src := range srcs {
				set := field + "=" + Behaviour(r, slot, name)
				a, aerr := MetricsOn(t, src, set, run.Actors)
				ref, rerr := MetricsOn(t, src, set, run.Reference)
				switch {
				case aerr != nil || rerr != nil:
					refusals++
					if aerr == nil || rerr == nil || aerr.Error() != rerr.Error() {
						t.Errorf("--set %s in\n%s: refused differently:\nactors:    %v\nreference: %v", set, src, aerr, rerr)
					} else if !strings.Contains(aerr.Error(), field) {
						t.Errorf("--set %s in\n%s: refused without naming %s: %v", set, src, field, aerr)
					}
					if refused != nil {
						refused(t, name, src, aerr)
					}
				case !bytes.Equal(a, ref):
					t.Errorf("--set %s in\n%s: the engines' metrics differ:\nactors:\n%s\nreference:\n%s", set, src, a, ref)
				default:
					ran++
				}
			}
			if ran == 0 {
				t.Errorf("every scenario refused %s: nothing compared", name)
			}
			t.Logf("%s: %d runs byte-identical on both engines, %d refused alike", name, ran, refusals)
		})
	}
}
