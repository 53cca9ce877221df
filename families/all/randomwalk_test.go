package all

import (
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"maple/privacy/gamma"
	"maple/scenarios"
	"maple/scenarios/run"
)

// readMetrics returns metrics.csv as one map per row.
func readMetrics(t *testing.T, dir string) []map[string]string {
	t.Helper()
	recs := readCSV(t, filepath.Join(dir, "metrics.csv"))
	var rows []map[string]string
	for _, r := range recs[1:] {
		row := map[string]string{}
		for k, name := range recs[0] {
			row[name] = r[k]
		}
		rows = append(rows, row)
	}
	return rows
}

func cell(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

const gammaFig = `name: g
runs: 2
iterations: 6
output: {plot: false}
algorithm:
  kind: gamma-mechanism
  gamma-mechanism: {l_range: [2, 4], theta: 1, epsilon_max: 6, samples: 4000}
sweep:
  algorithm.gamma-mechanism.theta: [0.5, 4]
`

// The gamma-mechanism family puts Lemma 1 beside a Monte-Carlo estimate from
// 2 runs × 4000 outputs per input: within 5 binomial standard errors
// √(δ(1−δ)/8000) (privacy/gamma checks the estimator itself more tightly).
// δ-target curves give the θ Theta finds.
func TestGammaMechanismFamily(t *testing.T) {
	t.Parallel()
	dir, res := execute(t, plan(t, gammaFig), run.Options{})
	b := gamma.Bounds{Inf: 2, Sup: 4}
	for _, row := range readMetrics(t, dir) {
		eps, d, mc := cell(t, row["epsilon"]), cell(t, row["delta"]), cell(t, row["delta_mc"])
		if want := gamma.Delta(eps, cell(t, row["theta"]), b); d != want {
			t.Errorf("%s ε=%v: δ %v, want %v", row["curve"], eps, d, want)
		}
		if se := math.Sqrt(d * (1 - d) / 8000); math.Abs(mc-d) > 5*se+1e-12 {
			t.Errorf("%s ε=%v: Monte Carlo %v, Lemma 1 %v (5 s.e. %v)", row["curve"], eps, mc, d, 5*se)
		}
	}
	if res.Summary.Curves[0].Diverged {
		t.Error("a curve is marked diverged")
	}
	charts := chartNames(t, dir)
	for _, f := range []string{"delta-by-epsilon", "delta_mc-by-epsilon", "theta-by-epsilon"} {
		if !charts[f] {
			t.Errorf("no chart %s (charts %v)", f, charts)
		}
	}
	// θ(ε) curves: empty cells where no θ reaches δ, not a divergence.
	dir, res = execute(t, plan(t, gammaFig, "sweep={algorithm.gamma-mechanism.delta: [0.1]}", "algorithm.gamma-mechanism.theta=0",
		"algorithm.gamma-mechanism.delta=0.1"), run.Options{})
	for _, row := range readMetrics(t, dir) {
		eps := cell(t, row["epsilon"])
		theta, err := gamma.Theta(eps, 0.1, b)
		if err != nil {
			if row["theta"] != "NaN" {
				t.Errorf("ε=%v: θ %s where none exists", eps, row["theta"])
			}
			continue
		}
		if cell(t, row["theta"]) != theta {
			t.Errorf("ε=%v: θ %s, want %v", eps, row["theta"], theta)
		}
	}
	if res.Summary.Curves[0].Diverged {
		t.Error("infeasible rows marked as a divergence")
	}
}

const walkVsGossip = `name: w
runs: 4
iterations: 3000
data: {kind: mixture, agents: 30, samples: 1, dim: 5, test_samples: 0, mixture: {mean: 1, variance: 1}}
loss: {kind: logistic}
algorithm:
  kind: randomwalk
  step_size: 0.1
  randomwalk: {init: zero}
topology: {graph: erdos-renyi, probability: 0.3}
output: {every: 50, plot: false}
curves:
  - label: walk
    set: {algorithm.randomwalk.target: uniform}
  - label: gossip
    set: {algorithm.randomwalk.protocol: gossip}
`

// Per message, the walk beats gossip (paper 003 §V): at the walk's last
// message count, gossip, which has sent as many messages by the iteration
// half as far (two per iteration, once the walk's set-up is paid), is
// further from w⋆. The walk also makes one SGD update per iteration and
// gossip two.
func TestWalkBeatsGossipPerMessage(t *testing.T) {
	t.Parallel()
	dir, _ := execute(t, plan(t, walkVsGossip), run.Options{Engine: run.Reference})
	last := map[string]map[string]string{}
	var gossip []map[string]string
	for _, row := range readMetrics(t, dir) {
		last[row["curve"]] = row
		if row["curve"] == "gossip" {
			gossip = append(gossip, row)
		}
	}
	walkMessages, walkMSD := cell(t, last["walk"]["messages"]), cell(t, last["walk"]["msd"])
	var at map[string]string
	for _, row := range gossip {
		if cell(t, row["messages"]) <= walkMessages {
			at = row
		}
	}
	if gossipMSD := cell(t, at["msd"]); !(walkMSD < gossipMSD) {
		t.Errorf("after %v messages the walk's MSD is %v; gossip's after %s messages is %v", walkMessages, walkMSD, at["messages"], gossipMSD)
	}
	if u := cell(t, last["gossip"]["updates"]); u != 6000 {
		t.Errorf("gossip made %v updates, want 6000", u)
	}
	if u := cell(t, last["walk"]["updates"]); u != 3000 {
		t.Errorf("the walk made %v updates, want 3000", u)
	}
}

// A ball W that excludes the minimizer is refused before anything runs,
// naming algorithm.randomwalk.radius: the walk would converge to the
// minimizer over W and every error column would measure the distance between
// the two. (Here ‖w⋆‖ ≈ 0.9.)
func TestWalkRefusesABallWithoutTheOptimum(t *testing.T) {
	t.Parallel()
	p, err := scenarios.Parse([]byte(walkVsGossip), "w.yaml", t.TempDir(), []string{"algorithm.randomwalk.radius=0.05"})
	if err == nil {
		_, err = run.Execute(p, t.TempDir(), run.Options{})
	}
	if !scenarios.IsUserError(err) || !strings.Contains(err.Error(), "algorithm.randomwalk.radius: the minimizer w⋆ of run 0 has ‖w⋆‖") {
		t.Errorf("radius 0.05: %v, want a user error naming algorithm.randomwalk.radius", err)
	}
}

// Random walks report Lemma 1's (ε, δ), not the ε(i) accountant: a private
// walk has no privacy.accountant section, and one set in the file is refused
// naming the field.
func TestPrivateWalkHasNoAccountant(t *testing.T) {
	t.Parallel()
	const src = `name: private
data: {kind: mixture, agents: 10, samples: 1, dim: 3, mixture: {mean: 1, variance: 1}}
loss: {kind: logistic}
algorithm: {kind: randomwalk, step_size: 0.1, randomwalk: {target: importance}}
topology: {graph: ring}
privacy: {scheme: gamma}
`
	if a := plan(t, src).Curves[0].Scenario.Privacy.Accountant; a != nil {
		t.Errorf("a private walk has the accountant %+v", a)
	}
	_, err := scenarios.Parse([]byte(src), "w.yaml", t.TempDir(), []string{"privacy.accountant.b=2"})
	if !scenarios.IsUserError(err) || !strings.Contains(err.Error(), "privacy.accountant: does not apply: random walks report Lemma 1's (ε, δ)") {
		t.Errorf("privacy.accountant set: %v, want it refused", err)
	}
}
