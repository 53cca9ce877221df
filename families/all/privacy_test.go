package all

import (
	"strings"
	"testing"

	"maple/scenarios"
	"maple/scenarios/run"
)

// The privacy features are capabilities a family declares: a family that
// does not list one in its registration refuses it, naming the field and
// the families that model it.
func TestPrivacyFeaturesAreCapabilities(t *testing.T) {
	t.Parallel()
	for _, kind := range scenarios.FamilyKinds() {
		f, _ := run.Lookup(kind)
		src := derivedTiny(f)
		if len(f.Tiny) > 0 {
			src = f.Tiny[0]
		}
		for _, field := range []string{scenarios.FieldSecureAggregation, scenarios.FieldDP} {
			_, err := scenarios.Parse([]byte(src), "t.yaml", t.TempDir(), []string{field + "={}"})
			modelled := false
			for _, p := range f.Privacy {
				modelled = modelled || p == field
			}
			refused := err != nil && strings.Contains(err.Error(), field+": algorithm.kind "+kind+" does not model it (it is modelled by: fedavg")
			if modelled == refused || !modelled && strings.Count(err.Error(), "\n") != 0 {
				t.Errorf("%s, %s: modelled %v, error %v", kind, field, modelled, err)
			}
		}
	}
}
