// Package gammamechanism is the scenario glue of the Gamma mechanism alone
// (paper 003, Lemma 1 and Fig. 1): δ(ε, θ) beside a Monte-Carlo estimate of
// the privacy-loss tails. It registers the family gamma-mechanism with the
// runner.
package gammamechanism

import (
	"math"
	"reflect"
	"strings"

	"maple/algorithms/rng"
	"maple/privacy/gamma"
	"maple/rundir"
	"maple/scenarios"
	"maple/scenarios/inputs"
	"maple/scenarios/run"
)

func init() {
	run.Register(run.Family{
		Family: scenarios.Family{
			Kind:          "gamma-mechanism",
			Summary:       "the Gamma mechanism of paper 003 alone: Lemma 1's δ(ε, θ) and θ(ε, δ) beside a Monte-Carlo estimate of the privacy-loss tails (Fig. 1)",
			Schemes:       []string{"none"},
			Defaults:      gammaMechanismDefaults,
			Validate:      validateGammaMechanism,
			OwnAccounting: "the gamma-mechanism family evaluates Lemma 1's (ε, δ) itself, it learns nothing",
			NoData:        "the gamma-mechanism family evaluates the Gamma mechanism's privacy loss, it learns from no data",
			Audit: &scenarios.AuditSupport{Methods: []string{scenarios.AuditManyRun, scenarios.AuditOneRun},
				Canaries: []string{canaryExtremeInput}, Views: []string{viewRelease}},
		},
		Columns:  func(*scenarios.Scenario) []rundir.Column { return gammaMechanismColumns },
		Run:      runGammaMechanism,
		Estimate: gammaMechanismEstimate,
		Tiny: []string{`name: tiny
runs: 2
iterations: 6
algorithm:
  kind: gamma-mechanism
  gamma-mechanism: {l_range: [2, 4], theta: 1, epsilon_max: 6, samples: 200}
output: {plot: false, steady_state: 0.5}
`, `name: tiny-audit
runs: 4
iterations: 6
algorithm:
  kind: gamma-mechanism
  gamma-mechanism: {l_range: [2, 4], delta: 0.1, epsilon_max: 6, samples: 200}
privacy: {audit: {method: many-run}}
output: {plot: false, steady_state: 0.5}
`},
	})
}

// gammaMechanismEstimate is the cost of one run: per recorded ε, 2·samples
// Gamma draws and privacy losses (a few hundred operations each) and, for a
// θ(ε) curve, a scan of a few hundred evaluations of Lemma 1. No messages.
func gammaMechanismEstimate(sc *scenarios.Scenario, _ run.Model) run.Estimate {
	g := gammaMechanismParams(sc)
	rows := float64(sc.Iterations/max(sc.Output.Every, 1) + 2)
	return run.Estimate{
		Bytes: 2 * float64(g.Samples) * 8, Ops: rows * (2*float64(g.Samples)*300 + 500*1000),
		Drivers: []run.Driver{{Field: "algorithm.gamma-mechanism.samples", Ratio: float64(g.Samples) / defaultSamples}},
	}
}

// GammaMechanism parameterizes the section algorithm.gamma-mechanism. Row i
// of a run (iterations rows in all) is the privacy level ε_i =
// i·EpsilonMax/iterations; a curve fixes either θ (Fig. 1a: δ as a function
// of ε) or the target δ (Fig. 1b: the least θ reaching it).
type GammaMechanism struct {
	// LRange is [inf L, sup L], the mechanism's input range.
	LRange scenarios.FloatRange `yaml:"l_range"`
	// Theta is the noise θ of a δ(ε) curve.
	Theta float64 `yaml:"theta,omitempty"`
	// Delta is the target δ of a θ(ε) curve.
	Delta float64 `yaml:"delta,omitempty"`
	// EpsilonMax is the largest ε of the grid.
	EpsilonMax float64 `yaml:"epsilon_max"`
	// Samples is the number of mechanism outputs per input and run of the
	// Monte-Carlo estimate.
	Samples int `yaml:"samples"`
}

// defaultSamples is the default of algorithm.gamma-mechanism.samples.
const defaultSamples = 20000

func gammaMechanismDefaults(sc *scenarios.Scenario) any {
	// The runner builds a learning problem for every run; this family uses
	// none, so the smallest one is built.
	sc.Data.Agents, sc.Data.Samples, sc.Data.Dim = 1, scenarios.IntRange{Min: 1, Max: 1}, 1
	return &GammaMechanism{LRange: scenarios.FloatRange{Min: 1, Max: 2}, EpsilonMax: 6, Samples: defaultSamples}
}

func gammaMechanismParams(sc *scenarios.Scenario) *GammaMechanism {
	return sc.Algorithm.Params.(*GammaMechanism)
}

func validateGammaMechanism(v *scenarios.Validator, sc *scenarios.Scenario) {
	g := gammaMechanismParams(sc)
	const f = "algorithm.gamma-mechanism."
	if r := g.LRange; !(r.Min > 0 && r.Max >= r.Min && !math.IsInf(r.Max, 1)) {
		v.Fail(f+"l_range", "need 0 < inf L ≤ sup L < ∞, got [%v, %v]", r.Min, r.Max)
	}
	switch {
	case (g.Theta == 0) == (g.Delta == 0):
		v.Fail(f+"theta", "set exactly one of theta (a δ(ε) curve) and delta (a θ(ε) curve)")
	case g.Theta != 0:
		v.Positive(f+"theta", g.Theta)
	default:
		if !(g.Delta > 0 && g.Delta < 1) {
			v.Fail(f+"delta", "must lie in (0, 1), got %v", g.Delta)
		}
	}
	v.Positive(f+"epsilon_max", g.EpsilonMax)
	v.AtLeast(f+"samples", g.Samples, 1)
	for _, s := range append([]string{"data", "loss", "network", "algorithm.step_size"}, privacyFieldsBut("audit")...) {
		v.Unused(s, "the gamma-mechanism family evaluates a mechanism, it learns nothing")
	}
	if sc.Privacy.Audit != nil && g.Delta == 0 {
		v.Fail(scenarios.FieldAudit, "an audit bounds ε at one δ, and a δ(ε) curve (theta) has a δ per row: audit a θ(ε) curve (algorithm.gamma-mechanism.delta), whose rows are the mechanisms Lemma 1 calibrates to (ε_i, δ)")
	}
}

// privacyFieldsBut returns the fields of the section privacy but the one
// named except, as paths: the family uses none of them but the audit.
func privacyFieldsBut(except string) []string {
	var fields []string
	t := reflect.TypeOf(scenarios.Privacy{})
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		if name != "" && name != "-" && name != except {
			fields = append(fields, "privacy."+name)
		}
	}
	return fields
}

// gammaMechanismColumns are Fig. 1's quantities at ε_i.
var gammaMechanismColumns = []rundir.Column{
	{Name: "epsilon", Label: "ε", Axis: true},
	{Name: "delta", Label: "δ(ε, θ), Lemma 1"},
	{Name: "delta_mc", Label: "δ(ε, θ), Monte Carlo"},
	{Name: "delta_tight", Label: "δ(ε, θ), tight (the privacy profile)"},
	{Name: "delta_floor", Label: "δ_∞(ε), the limit θ → ∞"},
	{Name: "theta", Label: "θ"},
}

// runGammaMechanism evaluates one run: Lemma 1 on the ε grid (the same in
// every run) and a Monte-Carlo estimate from the run's own draws (stream
// ("mechanism", "gamma")). It sends no messages, so both engines compute it
// the same way.
func runGammaMechanism(j *run.Job, _ *inputs.Problem, _ *run.TraceSink) error {
	sc := j.Curve.Scenario
	g := gammaMechanismParams(sc)
	b := gamma.Bounds{Inf: g.LRange.Min, Sup: g.LRange.Max}
	t := rundir.NewTable(sc.Iterations, sc.Output.Every, len(gammaMechanismColumns))
	r := rng.New(j.RunSeed, "mechanism", "gamma")
	var losses []float64
	est := make([]float64, 1)
	infeasible := 0
	thetas := make([]float64, len(t.Iterations)) // 0 where no θ reaches δ
	for row, i := range t.Iterations {
		eps := float64(i) * g.EpsilonMax / float64(sc.Iterations)
		t.Set(row, 0, eps)
		t.Set(row, 4, gamma.Floor(eps, b))
		theta := g.Theta
		if g.Delta != 0 {
			var err error
			if theta, err = gamma.Theta(eps, g.Delta, b); err != nil {
				infeasible++
				continue // no θ: the cells stay empty
			}
		}
		t.Set(row, 1, gamma.Delta(eps, theta, b))
		t.Set(row, 3, gamma.Profile(eps, theta, b))
		t.Set(row, 5, theta)
		thetas[row] = theta
		losses = gamma.MonteCarloDelta(est, []float64{eps}, theta, b, g.Samples, r, losses)
		t.Set(row, 2, est[0])
	}
	j.Table = t
	j.Stats.Details["gamma"] = map[string]any{"inf_l": b.Inf, "sup_l": b.Sup, "ratio": b.Ratio(), "infeasible_rows": infeasible}
	if j.Audit() != nil {
		auditGamma(j, g, b, thetas)
	}
	return nil
}
