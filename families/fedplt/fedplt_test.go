package fedplt

import (
	"math"
	"strings"
	"testing"

	"maple/algorithms/data"
	"maple/algorithms/fedplt"
	"maple/algorithms/loss"
	"maple/privacy/renyi"
)

// pltPrivacyProblem returns three agents of 20, 30 and 40 logistic samples.
func pltPrivacyProblem(t *testing.T) *fedplt.Problem {
	t.Helper()
	sets, _, _ := data.Logistic(data.LogisticConfig{Agents: 3, SamplesMin: 40, SamplesMax: 40, Dim: 2, CovScale: 1,
		SharedCovariance: true, ScoreSD: 1, TestSamples: 1}, 5)
	for i, q := range []int{20, 30, 40} {
		sets[i].X, sets[i].Y = sets[i].X[:q*2], sets[i].Y[:q]
	}
	return fedplt.NewProblem(fedplt.Objective{Loss: loss.Loss{Kind: loss.Logistic, Rho: 0.25}}, sets)
}

// The privacy report is Proposition 4's worst case over the agents, each
// with its own solver (Remark 1): the largest ε_i, here agent 2's, whose
// noise is ten times smaller than the others' although it holds the most
// samples; and an agent that adds no noise has no guarantee at all, so
// neither has the worst case.
func TestPLTPrivacyIsTheWorstAgent(t *testing.T) {
	prob := pltPrivacyProblem(t)
	noisy := func(tau, clip float64) fedplt.Solver {
		return fedplt.Solver{Name: "noisy-gd", Rule: fedplt.NoisyGD{Noise: tau, Clip: clip}, Step: 0.1}
	}
	cfg := &fedplt.Config{Agents: 3, Epochs: 2, Solvers: []fedplt.Solver{noisy(1, 0), noisy(1, 0), noisy(0.1, 0)}}
	acc := PLTAccountant{Delta: 1e-5}
	L, _ := prob.Obj.Sensitivity(prob.Sets, 0)
	want := renyi.Params{L: L, Low: prob.Moduli.Low, Tau: 0.1, Samples: 40, Step: 0.1, Steps: 2 * 10}
	_, eps := renyi.BestOrder(want.Rate(), acc.Delta)
	got := pltPrivacy(cfg, prob, 10, acc)
	if e, _ := got["epsilon"].(float64); math.Abs(e-eps) > 1e-12*eps {
		t.Errorf("ε = %v (report %v), want agent 2's %v", got["epsilon"], got, eps)
	}
	if got["agent"] != 2 {
		t.Errorf("worst agent %v, want 2", got["agent"])
	}

	// A clipping bound of agent 0's own far below the data's L makes agent
	// 2 (unclipped, L = 2 max‖a‖) still the worst: clip 1e-3 ≪ L.
	cfg.Solvers[0] = noisy(1, 1e-3)
	if got := pltPrivacy(cfg, prob, 10, acc); got["agent"] != 2 {
		t.Errorf("with agent 0 clipped: worst agent %v, want 2", got["agent"])
	}

	cfg.Solvers[1] = fedplt.Solver{Name: "gd", Rule: fedplt.GD{}, Step: 0.1}
	got = pltPrivacy(cfg, prob, 10, acc)
	if _, ok := got["epsilon"]; ok || !strings.Contains(got["renyi"].(string), "agent 1") {
		t.Errorf("an agent without noise: report %v, want no ε and a note naming agent 1", got)
	}
}
