// Package randomwalk is the scenario glue of random-walk learning (paper
// 003): uniform, importance-weighted and Gamma-private walks and the
// asynchronous gossip baseline. It registers the family randomwalk with the
// runner.
package randomwalk

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/floats"

	"maple/actors"
	"maple/actors/msg"
	arw "maple/actors/randomwalk"
	rw "maple/algorithms/randomwalk"
	"maple/algorithms/rng"
	"maple/privacy/gamma"
	"maple/rundir"
	"maple/scenarios"
	"maple/scenarios/inputs"
	"maple/scenarios/run"
	"maple/topology"
)

func init() {
	run.Register(run.Family{
		Family: scenarios.Family{
			Kind:     "randomwalk",
			Summary:  "random-walk SGD with uniform, importance-weighted and Gamma-private walks, and the asynchronous gossip baseline (paper 003)",
			Topology: true,
			Schemes:  rw.MechanismNames(),
			Defaults: randomWalkDefaults,
			Complete: completeRandomWalk,
			Validate: validateRandomWalk,
			// Lemma 1's (ε, δ) of the announced L_i, in the summary.
			OwnAccounting: "random walks report Lemma 1's (ε, δ), not the ε(i) accountant",
			Audit: &scenarios.AuditSupport{Methods: []string{scenarios.AuditManyRun},
				Canaries: []string{canaryExtremeInput}, Views: []string{viewWire}},
		},
		Check:    checkRandomWalk,
		Columns:  randomWalkColumns,
		Run:      runRandomWalk,
		Estimate: randomWalkEstimate,
		Tiny: []string{`name: tiny
seed: 3
runs: 2
iterations: 8
data: {agents: 6, samples: [8, 12], dim: 2}
algorithm: {kind: randomwalk}
topology: {graph: ring}
output: {plot: false, steady_state: 0.5}
`, `name: tiny-audit
seed: 3
runs: 4
iterations: 8
data: {agents: 6, samples: [8, 12], dim: 2}
algorithm:
  kind: randomwalk
  randomwalk:
    target: importance
    mechanism: {epsilon: 3, delta: 0.06, l_range: [1, 2]}
privacy: {scheme: gamma, audit: {method: many-run}}
topology: {graph: ring}
output: {plot: false, steady_state: 0.5}
`},
	})
}

// randomWalkEstimate is the cost of one run: building the graph, through
// the combination matrix and its checks (inputs.NetworkCost; walkGraph reads
// the graph back from it), and every node's actor.
// A walk: 2|E| set-up announcements (|E| from the expected degree), at most
// one token per step of every walk, one gradient on the node's samples per
// step, and the metrics — the running average every step, f at the iterate
// and the average every recorded step (a pass over all the data); and per
// walk the tracker's state (three model-sized vectors, the visit counts and
// the walk's table of metrics), a stream per node it visits (at most N, at
// most one per step) and a slot for it in every node's list of streams, and
// its start message and token in flight. Gossip: four messages (Tick, two
// models, Done) and two gradients per iteration, and the node average every
// iteration.
func randomWalkEstimate(sc *scenarios.Scenario, md run.Model) run.Estimate {
	p, d, g := randomWalkParams(sc), md.Dim, md.SampleOps
	N, n, T := float64(sc.Data.Agents), float64(sc.Data.Samples.Max), float64(sc.Iterations)
	rows := T/float64(max(sc.Output.Every, 1)) + 2
	deg := inputs.ExpectedDegree(sc.Topology, sc.Data.Agents)
	graphBytes, graphOps := inputs.NetworkCost(sc.Topology, N, deg, true)
	e := run.Estimate{Bytes: N*(run.ActorBytes+4*d*8) + graphBytes, Ops: graphOps, RecordBytes: 170, VectorLen: d}
	if p.Protocol == "gossip" {
		e.Messages = 1 + 4*T
		e.Ops += T*(2*n*g+N*d) + rows*2*N*n*g
		return e
	}
	W := float64(p.Walks)
	e.Messages = 1 + 2*N + N*deg + 2*W + W*T
	e.Ops += W*T*(n*g+3*d+50) + W*rows*2*N*n*g
	perWalk := 8*(3*d+N+rows*float64(rw.NumColumns)) + 8*N + min(N, T+1)*streamBytes + messageBytes + 8*d
	e.Bytes += W * perWalk
	e.Drivers = []run.Driver{{Field: "algorithm.randomwalk.walks", Ratio: W}}
	return e
}

// streamBytes is the memory of one random stream (a ChaCha8 state of about
// 300 bytes behind a rand.Rand, with its allocations), messageBytes that of a
// message in flight in the actor engine (its envelope and event), both
// rounded up.
const (
	streamBytes  = 512
	messageBytes = 256
)

// RandomWalk parameterizes random-walk SGD and its gossip baseline: the
// section algorithm.randomwalk. algorithm.step_size is γ₀ of the step
// γ₀/k^q; the iterations of a run are the steps of every walk (or gossip's
// iterations).
type RandomWalk struct {
	// Protocol is walk or gossip.
	Protocol string `yaml:"protocol"`
	// Target is the walk's stationary distribution: uniform (Algorithm 1)
	// or importance (π_i ∝ L_i, Algorithm 2; ∝ R(L_i) under a privacy
	// scheme, Algorithm 3).
	Target string `yaml:"target"`
	// Walks is the number of independent walks.
	Walks int `yaml:"walks"`
	// Exponent is q of the step γ₀/k^q, in (1/2, 1].
	Exponent float64 `yaml:"exponent"`
	// Radius is the radius of the ℓ2 ball W the iterates are projected on.
	Radius float64 `yaml:"radius"`
	// Init is uniform (a model uniform on W, the paper) or zero.
	Init string `yaml:"init"`
	// Weighting is the gradient weight of importance walks: true-l (L̄/L_i,
	// the paper's listing) or noisy-r (R̄/R_i).
	Weighting string `yaml:"weighting"`
	// Mechanism configures privacy.scheme gamma, truncated-gamma or
	// laplace; it is absent without a scheme.
	Mechanism *WalkMechanism `yaml:"mechanism,omitempty"`
	// Gossip configures protocol gossip; it is absent for walks.
	Gossip *WalkGossip `yaml:"gossip,omitempty"`
	// Node is what a walk's node does at each step it holds the token: sgd
	// (the paper's projected step) or walkman, with its parameters.
	Node scenarios.Behaviour `yaml:"node" slot:"randomwalk.node"`
}

// WalkMechanism is the privacy mechanism of an importance walk: the Gamma
// mechanism of paper 003 (θ from the target (ε, δ) by Lemma 1 unless given),
// its truncated variant, or the Laplace baseline.
type WalkMechanism struct {
	// Epsilon and Delta are the target (ε, δ) of Lemma 1; the Laplace
	// baseline's pure ε-LDP uses Epsilon.
	Epsilon float64 `yaml:"epsilon"`
	Delta   float64 `yaml:"delta"`
	// Theta, if set, is the Gamma noise θ; otherwise the smallest θ that
	// reaches (ε, δ) on LRange.
	Theta *float64 `yaml:"theta,omitempty"`
	// LRange is [inf L, sup L], the input range of Lemma 1 and of the
	// Laplace sensitivity; absent, each run uses the least and largest L_i
	// of its data.
	LRange *scenarios.FloatRange `yaml:"l_range,omitempty"`
	// Truncate is the clipping range of truncated-gamma; absent, LRange.
	Truncate *scenarios.FloatRange `yaml:"truncate,omitempty"`
	// LaplaceScale is how the Laplace scale b is set: epsilon
	// (b = (sup L − inf L)/ε, pure ε-LDP) or variance (2b² = L̄θ, the
	// Gamma's variance at L̄).
	LaplaceScale string `yaml:"laplace_scale"`
}

// WalkGossip configures the gossip baseline.
type WalkGossip struct {
	// Order is step-then-average or average-then-step.
	Order string `yaml:"order"`
	// Step is global (γ₀/k^q with the iteration k) or per-node (with the
	// node's own update count).
	Step string `yaml:"step"`
}

// Laplace scale rules.
var laplaceScales = []string{"epsilon", "variance"}

// randomWalkDefaults returns the defaults of the family and sets the shared
// defaults the paper implies: one sample per node on an Erdős–Rényi graph of
// edge probability 0.3, drawn once for every run.
func randomWalkDefaults(sc *scenarios.Scenario) any {
	sc.Data.Agents = 20
	sc.Data.Samples = scenarios.IntRange{Min: 1, Max: 1}
	sc.Topology = &scenarios.Topology{Graph: "erdos-renyi", Probability: 0.3, MinDegree: 1, Weights: "metropolis", Regenerate: "once"}
	return &RandomWalk{Protocol: "walk", Target: "uniform", Walks: 1, Exponent: 0.75, Radius: 10, Init: "uniform", Weighting: "true-l",
		Node: scenarios.NewBehaviour(arw.NodeSlot, "sgd")}
}

func randomWalkParams(sc *scenarios.Scenario) *RandomWalk { return sc.Algorithm.Params.(*RandomWalk) }

// completeRandomWalk fills the defaults that depend on other fields: ρ =
// 1/(2N), which makes N·J_i the paper's f_i (eq. 13 with the ½‖w‖² of eq. 12),
// and the mechanism and gossip sections when the scheme or protocol needs
// them.
func completeRandomWalk(sc *scenarios.Scenario, set func(string) bool) {
	if !set("loss.rho") {
		sc.Loss.Rho = 1 / (2 * float64(max(sc.Data.Agents, 1)))
	}
	p := randomWalkParams(sc)
	if sc.Privacy.Scheme != "none" {
		if p.Mechanism == nil {
			p.Mechanism = &WalkMechanism{}
		}
		m := p.Mechanism
		if !set("algorithm.randomwalk.mechanism.epsilon") {
			m.Epsilon = 3
		}
		if !set("algorithm.randomwalk.mechanism.delta") {
			m.Delta = 0.03
		}
		if m.LaplaceScale == "" {
			m.LaplaceScale = "epsilon"
		}
	}
	if p.Protocol == "gossip" {
		if p.Gossip == nil {
			p.Gossip = &WalkGossip{}
		}
		if p.Gossip.Order == "" {
			p.Gossip.Order = rw.StepThenAverage.String()
		}
		if p.Gossip.Step == "" {
			p.Gossip.Step = rw.GlobalStep.String()
		}
	}
}

func validateRandomWalk(v *scenarios.Validator, sc *scenarios.Scenario) {
	p := randomWalkParams(sc)
	const f = "algorithm.randomwalk."
	protocol, err := rw.ParseProtocol(p.Protocol)
	v.Parse(f+"protocol", err)
	target, err := rw.ParseTarget(p.Target)
	v.Parse(f+"target", err)
	_, err = rw.ParseInit(p.Init)
	v.Parse(f+"init", err)
	_, err = rw.ParseWeighting(p.Weighting)
	v.Parse(f+"weighting", err)
	v.AtLeast(f+"walks", p.Walks, 1)
	if !(p.Exponent > 0.5 && p.Exponent <= 1) {
		v.Fail(f+"exponent", "q must lie in (1/2, 1] (Σγ_k = ∞ and Σ ln k·γ_k² < ∞), got %v", p.Exponent)
	}
	v.Positive(f+"radius", p.Radius)
	v.AtLeast("data.agents", sc.Data.Agents, 2)
	if protocol == rw.Gossip {
		for _, field := range []string{"target", "walks", "weighting", "node"} {
			v.Unused(f+field, "protocol gossip has no walk")
		}
	} else {
		v.Absent(f+"gossip", p.Gossip != nil, "only applies to protocol gossip")
	}
	if g := p.Gossip; g != nil {
		_, err := rw.ParseOrder(g.Order)
		v.Parse(f+"gossip.order", err)
		_, err = rw.ParseStepRule(g.Step)
		v.Parse(f+"gossip.step", err)
	}
	mech, _ := rw.ParseMechanism(sc.Privacy.Scheme)
	if mech != rw.NoMechanism && (protocol != rw.Walk || target != rw.Importance) {
		v.Fail("privacy.scheme", "scheme %s privatizes the L_i an importance walk announces; it needs protocol walk and target importance", sc.Privacy.Scheme)
	}
	if mech == rw.NoMechanism && target == rw.Uniform {
		v.Unused(f+"weighting", "the uniform walk has no gradient weight")
	}
	v.Absent(f+"mechanism", mech == rw.NoMechanism && p.Mechanism != nil, "privacy.scheme is none")
	if m := p.Mechanism; m != nil {
		validateWalkMechanism(v, m, mech)
	}
	if sc.Privacy.Audit != nil {
		switch {
		case mech == rw.NoMechanism:
			v.Fail(scenarios.FieldAudit, "the walk audits the mechanism that privatizes L_i: set privacy.scheme to gamma, truncated-gamma or laplace")
		case p.Mechanism.LRange == nil:
			v.Fail(f+"mechanism.l_range", "privacy.audit needs the mechanism's input range [inf L, sup L]: local DP is a guarantee over a fixed domain of inputs, whose ends are the audit's canary (a run's own least and largest L_i would change with its data)")
		}
	}
	// Shared fields the family does not use.
	v.Unused("privacy.mechanism", "random walks privatize L_i with privacy.scheme and algorithm.randomwalk.mechanism")
	v.Unused("privacy.variance", "random walks privatize L_i with privacy.scheme and algorithm.randomwalk.mechanism")
	if t := sc.Topology; t != nil {
		v.Unused("topology.weights", "the walk's transition matrix is Metropolis–Hastings over the graph, computed from the target, not a combination matrix")
		v.Unused("topology.matrix", "the walk needs a graph, not a combination matrix")
	}
}

func validateWalkMechanism(v *scenarios.Validator, m *WalkMechanism, mech rw.Mechanism) {
	const f = "algorithm.randomwalk.mechanism."
	v.NonNegative(f+"epsilon", m.Epsilon)
	if !(m.Delta > 0 && m.Delta < 1) {
		v.Fail(f+"delta", "must lie in (0, 1), got %v", m.Delta)
	}
	if m.Theta != nil && (!(*m.Theta > 0) || math.IsInf(*m.Theta, 1)) {
		v.Fail(f+"theta", "θ must be a positive number, got %v", *m.Theta)
	}
	if r := m.LRange; r != nil && !(r.Min > 0 && r.Max >= r.Min && !math.IsInf(r.Max, 1)) {
		v.Fail(f+"l_range", "need 0 < inf L ≤ sup L < ∞, got [%v, %v]", r.Min, r.Max)
	}
	if r := m.Truncate; r != nil && !(r.Min > 0 && r.Max >= r.Min && !math.IsInf(r.Max, 1)) {
		v.Fail(f+"truncate", "need 0 < low ≤ high < ∞, got [%v, %v]", r.Min, r.Max)
	}
	v.OneOf(f+"laplace_scale", m.LaplaceScale, laplaceScales)
	v.Absent(f+"truncate", m.Truncate != nil && mech != rw.TruncatedGamma, "only applies to scheme truncated-gamma")
	if mech != rw.LaplaceMechanism {
		v.Unused(f+"laplace_scale", "only applies to scheme laplace")
	}
	v.Absent(f+"theta", m.Theta != nil && mech == rw.LaplaceMechanism && m.LaplaceScale != "variance", "the Laplace scale only uses θ with laplace_scale variance")
	if mech == rw.LaplaceMechanism && m.LaplaceScale != "variance" {
		v.Unused(f+"delta", "the Laplace baseline is pure ε-LDP")
	}
}

// randomWalkConfig translates a curve's scenario into the algorithm's
// configuration, except the privacy values that depend on a run's data (see
// resolveMechanism).
func randomWalkConfig(c *scenarios.CurveSpec) (rw.Config, error) {
	sc := c.Scenario
	p := randomWalkParams(sc)
	const f = "algorithm.randomwalk."
	cfg := rw.Config{Walks: p.Walks, StepSize: sc.Algorithm.StepSize, Exponent: p.Exponent, Radius: p.Radius}
	var err error
	if cfg.Protocol, err = rw.ParseProtocol(p.Protocol); err != nil {
		return cfg, c.Errorf(f+"protocol", "%v", err)
	}
	if cfg.Target, err = rw.ParseTarget(p.Target); err != nil {
		return cfg, c.Errorf(f+"target", "%v", err)
	}
	if cfg.Init, err = rw.ParseInit(p.Init); err != nil {
		return cfg, c.Errorf(f+"init", "%v", err)
	}
	if cfg.Weighting, err = rw.ParseWeighting(p.Weighting); err != nil {
		return cfg, c.Errorf(f+"weighting", "%v", err)
	}
	if cfg.Privacy.Mechanism, err = rw.ParseMechanism(sc.Privacy.Scheme); err != nil {
		return cfg, c.Errorf("privacy.scheme", "%v", err)
	}
	if cfg.Protocol == rw.Gossip {
		cfg.Walks = 1
		if cfg.Gossip.Order, err = rw.ParseOrder(p.Gossip.Order); err != nil {
			return cfg, c.Errorf(f+"gossip.order", "%v", err)
		}
		if cfg.Gossip.Step, err = rw.ParseStepRule(p.Gossip.Step); err != nil {
			return cfg, c.Errorf(f+"gossip.step", "%v", err)
		}
		return cfg, nil
	}
	if cfg.Node, err = arw.NodeRules.New(p.Node.Kind, p.Node.Params); err != nil {
		return cfg, c.Errorf(f+"node", "%v", err)
	}
	if ch, ok := cfg.Node.(rw.Checker); ok {
		if err := ch.Check(&cfg); err != nil {
			return cfg, c.Errorf(f+"node", "%v", err)
		}
	}
	return cfg, nil
}

// resolveMechanism sets the privacy values of cfg for a run whose nodes have
// the Lipschitz constants l, and returns what the summary reports of them:
// the input range of Lemma 1, θ, the (ε, δ) reached and its floor, the
// Laplace scale.
func resolveMechanism(c *scenarios.CurveSpec, cfg *rw.Config, l []float64) (map[string]any, error) {
	m := randomWalkParams(c.Scenario).Mechanism
	p := &cfg.Privacy
	if p.Mechanism == rw.NoMechanism {
		return nil, nil
	}
	const f = "algorithm.randomwalk.mechanism."
	b := gamma.Bounds{Inf: slices.Min(l), Sup: slices.Max(l)}
	source := "the run's least and largest L_i"
	outside := 0
	if m.LRange != nil {
		b, source = gamma.Bounds{Inf: m.LRange.Min, Sup: m.LRange.Max}, f+"l_range"
		for _, x := range l {
			if x < b.Inf || x > b.Sup {
				outside++
			}
		}
	}
	facts := map[string]any{"mechanism": p.Mechanism.String(), "inf_l": b.Inf, "sup_l": b.Sup, "l_range_from": source, "epsilon": m.Epsilon}
	if outside > 0 {
		facts["outside_l_range"] = outside
	}
	needTheta := p.Mechanism != rw.LaplaceMechanism || m.LaplaceScale == "variance"
	if needTheta {
		if m.Theta != nil {
			p.Theta = *m.Theta
			facts["theta_from"] = f + "theta"
		} else {
			theta, err := gamma.Theta(m.Epsilon, m.Delta, b)
			if err != nil {
				if errors.Is(err, gamma.ErrInfeasible) {
					return nil, c.Errorf(f+"delta", "(ε, δ) = (%v, %v) cannot be reached: %v; raise delta or epsilon, or narrow l_range", m.Epsilon, m.Delta, err)
				}
				return nil, c.Errorf(f+"l_range", "%v", err)
			}
			p.Theta = theta
			facts["theta_from"] = "Lemma 1: the smallest θ with δ(ε, θ) ≤ delta"
			facts["delta_target"] = m.Delta
		}
		facts["theta"] = p.Theta
	}
	switch p.Mechanism {
	case rw.GammaMechanism, rw.TruncatedGamma:
		facts["delta"] = gamma.Delta(m.Epsilon, p.Theta, b)
		facts["delta_floor"] = gamma.Floor(m.Epsilon, b)
		if p.Mechanism == rw.TruncatedGamma {
			p.Low, p.High = b.Inf, b.Sup
			if m.Truncate != nil {
				p.Low, p.High = m.Truncate.Min, m.Truncate.Max
			}
			facts["truncate"] = []float64{p.Low, p.High}
		}
	case rw.LaplaceMechanism:
		p.Low = b.Inf
		if m.LaplaceScale == "variance" {
			p.Scale = math.Sqrt(floats.Sum(l) / float64(len(l)) * p.Theta / 2)
		} else {
			if !(m.Epsilon > 0) {
				return nil, c.Errorf(f+"epsilon", "the Laplace baseline's b = (sup L − inf L)/ε needs ε > 0")
			}
			p.Scale = (b.Sup - b.Inf) / m.Epsilon
			if p.Scale == 0 {
				p.Scale = math.SmallestNonzeroFloat64 // every L_i equal: no sensitivity, no noise needed
			}
		}
		facts["laplace_b"] = p.Scale
		facts["floor"] = p.Low
	}
	return facts, nil
}

// walkGraph builds the scenario's graph through the shared topology code
// (generators, files, connectivity checks) and reads it back from the
// support of the combination matrix, which the walk itself does not use.
func walkGraph(ctx context.Context, c *scenarios.CurveSpec, dir string, seed uint64) (*topology.Graph, error) {
	net, err := inputs.BuildNetwork(ctx, c, dir, seed)
	if err != nil {
		return nil, err
	}
	n, _ := net.A.Dims()
	var edges [][2]int
	for i := range n {
		for j := i + 1; j < n; j++ {
			if net.A.At(i, j) > 0 || net.A.At(j, i) > 0 {
				edges = append(edges, [2]int{i, j})
			}
		}
	}
	g, err := topology.NewGraph(n, edges)
	if err != nil {
		return nil, c.Errorf("topology", "%v", err)
	}
	return g, nil
}

// checkRandomWalk builds the configuration, the run-0 graph and the run-0
// problem, so that a bad topology and a ball W that excludes w⋆ are reported
// before anything runs, and with a privacy scheme resolves the mechanism on
// run 0's data, so that an unreachable (ε, δ) is too.
func checkRandomWalk(c *scenarios.CurveSpec, dir string) error {
	cfg, err := randomWalkConfig(c)
	if err != nil {
		return err
	}
	seed := rng.RunSeed(c.Scenario.Seed, 0)
	g, err := walkGraph(context.Background(), c, dir, inputs.NetworkSeed(c.Scenario, seed))
	if err != nil {
		return err
	}
	p, err := inputs.BuildProblem(context.Background(), c, dir, seed)
	if err != nil {
		return err
	}
	if err := checkOptimumInBall(c, p, cfg.Radius, 0); err != nil || cfg.Privacy.Mechanism == rw.NoMechanism {
		return err
	}
	l, err := rw.LipschitzConstants(rw.Problem{Graph: g, Sets: p.Sets, Loss: p.Loss})
	if err != nil {
		return c.Errorf("loss.kind", "%v", err)
	}
	_, err = resolveMechanism(c, &cfg, l)
	return err
}

// checkOptimumInBall refuses a run whose minimizer w⋆ lies outside the ball
// W the iterates are projected on: the walks (and gossip) then converge to
// the minimizer over W (paper 003 eq. 1 minimizes over W), and every error
// column, measured against the unconstrained w⋆, would have a floor that says
// nothing about the algorithms.
func checkOptimumInBall(c *scenarios.CurveSpec, p *inputs.Problem, radius float64, run int) error {
	if norm := floats.Norm(p.WOpt, 2); norm > radius {
		return c.Errorf("algorithm.randomwalk.radius", "the minimizer w⋆ of run %d has ‖w⋆‖ = %.6g, outside the ball W of radius %v the iterates are projected on: the walk would converge to the minimizer over W, not to the w⋆ the errors are measured against; raise the radius above ‖w⋆‖", run, norm, radius)
	}
	return nil
}

// hasTestColumn reports whether the curve's data come with a test set.
func hasTestColumn(sc *scenarios.Scenario) bool {
	return sc.Data.Kind != "regression" && sc.Data.TestSamples > 0
}

// randomWalkColumns are the metrics of a random-walk run, in the order of
// the algorithms/randomwalk Col constants, averaged over the walks.
func randomWalkColumns(sc *scenarios.Scenario) []rundir.Column {
	cols := []rundir.Column{
		{Name: "msd", Decibel: true, Label: "‖w_k − w⋆‖² (dB)"},
		{Name: "msd_average", Decibel: true, Label: "‖w̄_k − w⋆‖², running average (dB)"},
		{Name: "suboptimality", Decibel: true, Label: "f(w_k) − f(w⋆) (dB)"},
		{Name: "suboptimality_average", Decibel: true, Label: "f(w̄_k) − f(w⋆), running average (dB)"},
		{Name: "tv", Label: "TV(visit frequencies, target π)"},
		{Name: "updates", Label: "SGD updates", Axis: true},
		{Name: "messages", Label: "messages (set-up included)", Axis: true},
		{Name: "bytes", Label: "bytes sent (protobuf)", Axis: true},
	}
	if hasTestColumn(sc) {
		cols = append(cols, rundir.Column{Name: "test_error", Label: "test error of w_k"})
	}
	return cols
}

// runRandomWalk executes one random-walk or gossip run on the job's engine.
func runRandomWalk(j *run.Job, p *inputs.Problem, sink *run.TraceSink) error {
	c := j.Curve
	sc := c.Scenario
	cfg, err := randomWalkConfig(c)
	if err != nil {
		return err
	}
	g, err := walkGraph(j.Context(), c, j.Dir, inputs.NetworkSeed(sc, j.RunSeed))
	if err != nil {
		return err
	}
	if err := checkOptimumInBall(c, p, cfg.Radius, j.Run); err != nil {
		return err
	}
	prob := rw.Problem{Graph: g, Sets: p.Sets, Loss: p.Loss}
	l, err := rw.LipschitzConstants(prob)
	if err != nil {
		return c.Errorf("loss.kind", "%v", err)
	}
	facts, err := resolveMechanism(c, &cfg, l)
	if err != nil {
		return err
	}
	audit := j.Audit() != nil
	if audit {
		insertCanary(j, &cfg, l)
	}
	if err := cfg.Validate(); err != nil {
		return c.Errorf("algorithm.randomwalk", "%v", err)
	}
	// The target of the visit frequencies: the walk's stationary
	// distribution for the announced weights, drawn here from the same
	// streams the nodes draw them from; uniform for gossip.
	target := make([]float64, len(p.Sets))
	for i := range target {
		target[i] = 1 / float64(len(target))
	}
	var weights rw.Weights
	if cfg.Protocol == rw.Walk {
		streams := func(owner, purpose string) *rand.Rand { return rng.New(j.RunSeed, owner, purpose) }
		if _, weights, err = rw.NewNodes(&cfg, prob, streams); err != nil {
			return c.Errorf("data", "%v", err)
		}
		target = rw.Stationary(weights.LogW)
	}
	cols := randomWalkColumns(sc)
	t := rundir.NewTable(sc.Iterations, sc.Output.Every, len(cols))
	tracker := rw.NewTracker(rw.TrackerConfig{
		Rows: t.Iterations, Walks: cfg.Walks, Gossip: cfg.Protocol == rw.Gossip,
		Sets: p.Sets, Loss: p.Loss, Optimum: p.WOpt, Test: p.Test, Target: target, Config: &cfg,
	})
	if j.Opts.Engine == run.Reference {
		if err := rw.ReferenceContext(j.Context(), cfg, prob, j.RunSeed, sc.Iterations, tracker, arw.WireSizer{}); err != nil {
			return err
		}
	} else {
		col := &arw.Collector{Observer: tracker, Nodes: len(p.Sets)}
		r := actors.NewRun(j.ActorOptions(col, sink))
		defer r.Close()
		sched, _, err := arw.Spawn(r, arw.Setup{Config: cfg, Problem: prob, Iterations: sc.Iterations,
			GradientTime: sc.Network.GradientTime, Observer: tracker})
		if err != nil {
			return err
		}
		col.First = sched + 1
		if err := r.Execute(sched, &msg.Start{}); err != nil {
			return err
		}
		j.Finish(r)
	}
	for r, k := range t.Iterations {
		for col := range cols {
			if col == rw.ColTV && k == 0 {
				continue // no visits yet
			}
			if col == rw.ColTestError && p.Test == nil {
				continue
			}
			t.Set(r, col, tracker.Value(r, col))
		}
	}
	j.Table = t
	describeRandomWalk(j, &cfg, prob, p.WOpt, l, weights, target, facts, tracker, t)
	if audit {
		recordAudit(j, &cfg, weights.LogW[0], len(t.Iterations))
	}
	return nil
}

// describeRandomWalk records what the summary reports of a run: the graph,
// the spread of the L_i, the walk's mixing, its privacy values, and the
// set-up cost.
func describeRandomWalk(j *run.Job, cfg *rw.Config, prob rw.Problem, wOpt, l []float64, w rw.Weights, target []float64, facts map[string]any, tr *rw.Tracker, t *rundir.Table) {
	d := j.Stats.Details
	g := prob.Graph
	degrees := make([]int, g.Len())
	for i := range degrees {
		degrees[i] = g.Degree(i)
	}
	d["network"] = map[string]any{"edges": len(g.Edges()), "degrees": degrees}
	lbar := floats.Sum(l) / float64(len(l))
	d["lipschitz"] = map[string]any{"min": slices.Min(l), "max": slices.Max(l), "mean": lbar,
		"sup_over_mean": slices.Max(l) / lbar, "sup_over_inf": slices.Max(l) / slices.Min(l)}
	uniform := make([]float64, g.Len())
	noise := map[string]any{"uniform": rw.GradientNoise(prob, wOpt, rw.Stationary(uniform), nil)}
	if cfg.Protocol == rw.Walk && cfg.Target == rw.Importance {
		noise["walk"] = rw.GradientNoise(prob, wOpt, target, w.Gradient)
	}
	d["gradient_noise_at_optimum"] = noise
	if cfg.Protocol == rw.Walk {
		walk := map[string]any{"target": target, "visit_frequencies": tr.Frequencies()}
		if slem, err := rw.SLEM(rw.Transition(g, w.LogW), target); err == nil {
			walk["lambda_p"] = (slem + 1) / 2
		}
		if slem, err := rw.SLEM(rw.Transition(g, uniform), rw.Stationary(uniform)); err == nil {
			walk["lambda_p_uniform"] = (slem + 1) / 2
		}
		if cfg.Target == rw.Importance {
			logL := make([]float64, len(l))
			for i, x := range l {
				logL[i] = math.Log(x)
			}
			walk["tv_target_to_noise_free"] = rw.TV(target, rw.Stationary(logL))
		}
		walk["setup_messages"] = tr.Value(0, rw.ColMessages)
		walk["setup_bytes"] = tr.Value(0, rw.ColBytes)
		last := len(t.Iterations) - 1
		moves := tr.Value(last, rw.ColMessages) - tr.Value(0, rw.ColMessages)
		walk["acceptance_rate"] = moves / float64(cfg.Walks*max(t.Iterations[last]-1, 1))
		d["walk"] = walk
	}
	if facts != nil {
		d["privacy"] = facts
	}
	d["step"] = map[string]any{"gamma0": cfg.StepSize, "q": cfg.Exponent, "radius": cfg.Radius}
}
