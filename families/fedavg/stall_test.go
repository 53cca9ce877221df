package fedavg

import (
	"strings"
	"testing"

	"maple/scenarios/run"
)

// A run whose updates all vanish warns that the model never moved, on both
// engines: a step size of 10⁻³⁰⁰ (μ·g is a few 10⁻³⁰¹, lost beside w°'s
// coordinates in the MSD) or of 10⁻³²⁰ (it underflows to 0 outright), and
// DP's clip of 10⁻³⁰⁰; a classifier without w^o is judged by its test
// cross-entropy. An ordinary run does not warn.
func TestAModelThatNeverMovesIsWarnedOf(t *testing.T) {
	t.Parallel()
	const blobs = "data={kind: blobs, agents: 12, samples: 10, dim: 3, test_samples: 50}"
	const softmax = "loss={kind: softmax, classes: 3, optimum: none}"
	for _, tc := range []struct {
		set  []string
		want string // "" for no warning
	}{
		{[]string{"algorithm.step_size=1e-300"}, "the model never moved: its MSD kept its initial value"},
		{[]string{"algorithm.step_size=1e-320"}, "check algorithm.step_size = 1e-320"},
		{[]string{"privacy.dp={mode: central, clip: 1e-300}"}, "privacy.dp.clip = 1e-300"},
		{[]string{blobs, softmax, "algorithm.step_size=1e-320"}, "the model never moved: its test cross-entropy kept its initial value"},
		{nil, ""},
		{[]string{blobs, softmax}, ""},
	} {
		for _, e := range []run.Engine{run.Actors, run.Reference} {
			c := summaryOf(t, privacyTiny, e, tc.set...)
			var got string
			for _, w := range c.Warnings {
				if strings.Contains(w, "the model never moved") {
					got = w
				}
			}
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Errorf("%v on %v: warning %q, want %q", tc.set, e, got, tc.want)
			}
		}
	}
}
