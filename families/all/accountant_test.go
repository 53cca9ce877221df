package all

import (
	"math"
	"strings"
	"testing"

	"maple/privacy/accountant"
	"maple/scenarios/run"
)

// privacyReport returns the privacy report of curve i of a reference run.
func privacyReport(t *testing.T, src string, i int, overrides ...string) map[string]any {
	t.Helper()
	_, res := execute(t, plan(t, src, append(overrides, "output.plot=false")...), run.Options{Engine: run.Reference})
	r, ok := res.Summary.Curves[i].Details["privacy"].(map[string]any)
	if !ok {
		t.Fatalf("curve %d has no privacy report: %v", i, res.Summary.Curves[i].Details)
	}
	return r
}

// Gaussian noise has no pure ε: the report is the exact (ε, δ) of the
// composed Gaussian mechanism, not the Laplace formula of thesis eq. 2.69,
// and names the mechanism, the neighbouring relation and the bound.
func TestGaussianNoiseIsAccountedAsGaussian(t *testing.T) {
	t.Parallel()
	r := privacyReport(t, small, 0, "privacy.scheme=update-noise", "privacy.mechanism=gaussian", "privacy.variance=0.25")
	if r["mechanism"] != "gaussian" || r["formula"] != nil {
		t.Fatalf("report %v: want mechanism gaussian and no Laplace formula", r)
	}
	for key, want := range map[string]string{"bound": "Balle & Wang", "neighbouring": "replace-one"} {
		if s, _ := r[key].(string); !strings.Contains(s, want) {
			t.Errorf("%s = %q, want it to mention %q", key, s, want)
		}
	}
	// 25 rounds, one message each, σ = 0.5, δ = 1e-5: ε of the Gaussian
	// mechanism with μ = √25·Δ/σ, recomputed from the reported Δ.
	sens := r["sensitivity"].(float64)
	want := accountant.GaussianEpsilon(5*sens/0.5, 1e-5)
	if got := r["epsilon_final"].(float64); got != want || r["delta"] != 1e-5 {
		t.Errorf("ε = %v at δ = %v, want %v at 1e-5", got, r["delta"], want)
	}
	// L = 4 of K = 12 drawn without replacement: the amplified report states
	// the rate and the bound, and is stronger than the unamplified one.
	s := r["sampled"].(map[string]any)
	if s["participation_rate"] != 4.0/12 || !strings.Contains(s["bound"].(string), "Wang, Balle & Kasiviswanathan") {
		t.Errorf("sampled report %v", s)
	}
	if !(s["epsilon_final"].(float64) < want) {
		t.Errorf("amplified ε %v should be below the observer-of-links ε %v", s["epsilon_final"], want)
	}
}

// Laplace noise keeps the papers' formula, now with the mechanism named.
func TestLaplaceNoiseKeepsThePapersBound(t *testing.T) {
	t.Parallel()
	r := privacyReport(t, small, 0, "privacy.scheme=model-noise")
	if r["mechanism"] != "laplace" || r["formula"] != "thesis eq. 2.69" || r["delta"] != 0.0 {
		t.Errorf("report %v", r)
	}
	sigma, d := 0.1, r["optimum_distance"].(float64)
	if got, want := r["epsilon_final"].(float64), accountant.FederatedEpsilon(sigma, 1, 1, d, 25); math.Abs(got-want) > 1e-12*want {
		t.Errorf("ε = %v, want %v", got, want)
	}
}

// In a plan mixing noise-free and noisy curves the accountant applies to the
// noisy ones and the noise-free one reports no privacy.
func TestMixedCurvesReportNoPrivacyForTheNoiseFreeOne(t *testing.T) {
	t.Parallel()
	src := small + `privacy: {accountant: {b: 2}}
curves:
  - {label: none, set: {privacy.scheme: none}}
  - {label: noisy, set: {privacy.scheme: update-noise}}
`
	if r := privacyReport(t, src, 0); r["mechanism"] != "none" || !strings.Contains(r["guarantee"].(string), "no privacy") {
		t.Errorf("noise-free curve: %v", r)
	}
	if r := privacyReport(t, src, 1); r["b"] != 2.0 || r["b_prime"] != 1.0 {
		t.Errorf("noisy curve: %v, want b = 2 and the default b′ = 1", r)
	}
}

// Graph federated learning with Gaussian noise reports (ε, δ) too, at both
// levels, not the Laplace formulas of thesis eqs. 3.58 and 2.69.
func TestGraphFLGaussianNoiseIsAccountedAsGaussian(t *testing.T) {
	t.Parallel()
	_, res := execute(t, plan(t, graphflSmall, "privacy.scheme=random", "privacy.mechanism=gaussian",
		"algorithm.graphfl.client_noise=update-noise"), run.Options{Engine: run.Reference})
	d := res.Summary.Curves[0].Details
	for _, key := range []string{"privacy", "client_privacy"} {
		r, ok := d[key].(map[string]any)
		if !ok {
			t.Fatalf("no %s report: %v", key, d)
		}
		if r["mechanism"] != "gaussian" || r["formula"] != nil || r["norm"] != nil || r["delta"] != 1e-5 ||
			!strings.Contains(r["bound"].(string), "Balle & Wang") {
			t.Errorf("%s: %v", key, r)
		}
	}
	r := d["privacy"].(map[string]any)
	n := r["releases_per_round"].(float64) * 12 // 12 rounds
	want := accountant.GaussianEpsilon(math.Sqrt(n)*r["sensitivity_bound"].(float64)/0.1, 1e-5)
	if got := r["epsilon_bound_final"].(float64); got != want {
		t.Errorf("server ε %v, want %v", got, want)
	}
}
