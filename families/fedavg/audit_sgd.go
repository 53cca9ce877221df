package fedavg

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"

	"maple/algorithms/canary"
	"maple/algorithms/fedavg"
	"maple/algorithms/loss"
	"maple/algorithms/rng"
	"maple/privacy/accountant"
	"maple/privacy/auditscore"
	"maple/privacy/ledger"
	"maple/rundir"
	"maple/scenarios"
	"maple/scenarios/inputs"
	"maple/scenarios/run"
)

// This file is the audit of DP-SGD's sample-level guarantee
// (privacy.audit with canary gradient or example): the canary examples in
// agent 0's dataset (algorithms/fedavg/canaryexamples.go) and the auditor
// that scores them on every noisy step of agent 0 (white-box) or on the
// last model (final).

// The canary examples of DP-SGD's audit.
const (
	// canaryGradient is an example whose clipped gradient is C·u at every
	// model: a Dirac canary on a coordinate agent 0's data do not touch, or
	// a random direction.
	canaryGradient = "gradient"
	// canaryExample is an out-of-distribution example (x, y) that the loss
	// takes as any other.
	canaryExample = "example"
)

// sampleCanary reports whether canary is one of DP-SGD's canary examples.
func sampleCanary(canary string) bool { return canary == canaryGradient || canary == canaryExample }

// completeSampleAudit makes canary examples the default canary of a
// scenario whose clients run DP-SGD and whose server adds no noise of its
// own (no privacy.dp): the guarantee such a run reports is the
// sample-level one.
func completeSampleAudit(sc *scenarios.Scenario, set func(string) bool) {
	a := sc.Privacy.Audit
	if a == nil || set(scenarios.FieldAudit+".canary") || sc.Privacy.DP != nil {
		return
	}
	if _, ok := draftConfig(sc).Client.(fedavg.AuditedClient); ok {
		a.Canary = canaryGradient
	}
}

// validateSampleAudit checks that canary examples apply: a DP-SGD client
// drawing Poisson batches (whose rate does not depend on which canaries
// are in), and agent 0 — the audited client — training once in every
// round with the same number of steps and batch size, the mechanism the
// ledger composes (every round, no amplification by the sampling of
// agents).
func validateSampleAudit(v *scenarios.Validator, sc *scenarios.Scenario) {
	a := sc.Privacy.Audit
	if a == nil || !sampleCanary(a.Canary) {
		return
	}
	fa := fedavgParams(sc)
	draft := draftConfig(sc)
	client, ok := draft.Client.(fedavg.AuditedClient)
	if !ok {
		v.Fail(scenarios.FieldAudit+".canary", "canary %s examples test the sample-level guarantee of DP-SGD: they need algorithm.fedavg.client dp-sgd, not %s", a.Canary, fa.Client.Kind)
		return
	}
	m := client.Step(2, 1).Mechanism
	if m.Sampling != accountant.Poisson {
		v.Fail(fieldClient+".sampling", "canary examples are audited under poisson batches, drawn at a rate that does not depend on which canaries are in; a fixed-size batch of a dataset holding some of them does")
	}
	if a.Canary == canaryExample && m.Relation == accountant.ReplaceOne {
		v.Fail(fieldClient+".relation", "an example canary is audited against the dataset without it (add-remove); under replace-one use canary gradient, whose neighbour is the example of gradient −C·u")
	}
	const why = "the audit watches agent 0, whose sample-level guarantee it tests, train with the same mechanism in every round, as the ledger composes it"
	if fa.Participation != fedavg.Full.String() {
		v.Fail("algorithm.fedavg.participation", "%s: participation must be full, got %s", why, fa.Participation)
	}
	if fa.LocalSteps.Min != fa.LocalSteps.Max {
		v.Fail("algorithm.fedavg.local_steps", "%s: a single number of local steps, got [%d, %d]", why, fa.LocalSteps.Min, fa.LocalSteps.Max)
	}
	if fa.Batch.Min != fa.Batch.Max {
		v.Fail("algorithm.fedavg.batch", "%s: a single batch size, got [%d, %d]", why, fa.Batch.Min, fa.Batch.Max)
	}
	if fa.Schedule != fedavg.PerAgent.String() {
		v.Fail("algorithm.fedavg.schedule", "%s: with a single number of local steps and batch size there is nothing to redraw each round (leave it per-agent)", why)
	}
	switch {
	case draft.Collection().Early():
		v.Fail(fieldCollect, "%s: collect %s may close a round before agent 0 has trained, use all", why, draft.Collection())
	case draft.Adversarial():
		v.Fail(fieldAdversary, "%s: agent 0 could be an adversary", why)
	}
	if cause := dropCause(sc); cause != "" {
		v.Fail(cause, "%s: agent 0 could miss a round", why)
	}
}

// sampleAuditor builds agent 0's canary examples and scores them.
//
// White-box, it sees every local step agent 0 takes (fedavg.ObsAuditSteps):
// the model w the step started from and the noisy sum g = Σ clip(∇ℓ) +
// N(0, (zC)²I) over its Poisson batch at rate q. A canary that is in adds
// its clipped gradient d to g when drawn, so that x = ⟨g, d⟩/‖d‖ is ‖d‖·b +
// N(0, (zC)²) plus what the real examples add along d, b ~ Bernoulli(q):
// exactly nothing for a Dirac canary, whose coordinate no real example
// touches. The score is the log-likelihood ratio of these projections —
// the Neyman–Pearson test of b ~ Bernoulli(q) against b = 0 (add/remove)
// or −b (replace-one, gradient canaries) —, d being C·u for a gradient
// canary and, for an example canary, its clipped gradient at w, which the
// auditor computes. The final view scores the last model the server
// released: its displacement along u from w_0 (gradient), or how much the
// canary's loss fell from w_0 (example).
type sampleAuditor struct {
	a     *scenarios.Audit
	can   *canary.Examples
	term  loss.Loss // the loss without its regularizer
	clip  float64   // C
	sigma float64   // zC
	rate  float64   // q = B/(N + m)
	steps int       // E, agent 0's local steps per round
	dim   int
	// upper is one step as the ledger composes it, at agent 0's rate.
	upper   ledger.Round
	client  fedavg.AuditedClient
	samples int // N + m
	w0      []float64
	score   []float64 // per canary: the running score (white-box) or the last (final)
	rows    [][]float64
	// rounds[c] is canary c's projection x in every step (gradient
	// canaries, white-box): what the measured-noise statistic reads.
	rounds  [][]float64
	table   *rundir.Table
	trained int   // the last round whose steps were seen
	err     error // the first inconsistency of the observations
	grad    []float64
	scratch []float64
}

// newSampleAuditor returns the auditor of the job's canary examples, or nil
// when the curve has none, and puts the canaries into cfg. A many-run
// audit has one canary, in the odd runs, drawn from the scenario's seed
// (the same in every run); a one-run audit Canaries of them, each in with
// probability ½, drawn from the run's seed.
func newSampleAuditor(j *run.Job, cfg *fedavg.Config, p *inputs.Problem, w0 []float64, t *rundir.Table) *sampleAuditor {
	a := j.Audit()
	if a == nil || !sampleCanary(a.Canary) {
		return nil
	}
	client := cfg.Client.(fedavg.AuditedClient) // validateSampleAudit
	set := p.Data.Set(0)
	m := 1
	r := rng.New(j.Curve.Scenario.Seed, "audit", fedavg.StreamCanaryExamples)
	included := []bool{j.CanaryIn()}
	if a.Method == scenarios.AuditOneRun {
		m = a.Canaries
		r = rng.New(j.RunSeed, "audit", fedavg.StreamCanaryExamples)
		included = make([]bool, m)
		for c := range included {
			included[c] = r.Float64() < 0.5
		}
	}
	var free []int
	if p.Loss.GLM() {
		free = canary.UntouchedFeatures(set) // the model's coordinates are the features
	}
	C := client.ClipNorm()
	upper := client.Step(set.Len()+m, cfg.Batch.Max)
	can := &canary.Examples{Included: included, Observe: a.View == viewWhiteBox,
		Opposite: upper.Mechanism.Relation == accountant.ReplaceOne}
	if a.Canary == canaryGradient {
		can.Kind = canary.Gradient
		can.Directions, can.Dirac = canary.NewGradients(r, m, len(w0), free, C)
	} else {
		can.Kind = canary.Example
		can.Set, can.Dirac = canary.NewExamples(r, m, set, p.Loss, w0, free, C)
	}
	cfg.SampleCanaries = can
	au := &sampleAuditor{a: a, can: can, term: p.Loss, clip: C, sigma: upper.Mechanism.NoiseMultiplier * C,
		rate: upper.Mechanism.Rate, steps: cfg.Epochs.Max, dim: len(w0), upper: upper, client: client, samples: set.Len() + m,
		w0: append([]float64(nil), w0...), score: make([]float64, m), rows: make([][]float64, len(t.Iterations)), table: t,
		grad: make([]float64, len(w0)), scratch: make([]float64, len(w0))}
	au.term.Rho = 0
	au.rows[0] = make([]float64, m)
	if can.Observe && can.Kind == canary.Gradient {
		au.rounds = make([][]float64, m)
	}
	return au
}

// observe scores one training of agent 0 in round round: v holds, for
// each local step, the model it started from and its noisy sum.
func (au *sampleAuditor) observe(round int, v []float64) {
	stride := 2 * au.dim
	switch {
	case au.err != nil:
		return
	case len(v) != au.steps*stride:
		au.err = fmt.Errorf("round %d: agent 0 reported %d numbers of its steps, not %d steps of 2×%d", round, len(v), au.steps, au.dim)
		return
	case round != au.trained+1:
		au.err = fmt.Errorf("agent 0 trained in round %d after round %d", round, au.trained)
		return
	}
	au.trained = round
	for s := range au.steps {
		w, g := v[s*stride:s*stride+au.dim], v[s*stride+au.dim:(s+1)*stride]
		for c := range au.score {
			if au.can.Kind == canary.Gradient {
				x := au.can.Directions[c].Dot(g)
				au.score[c] += au.llr(x, au.clip)
				au.rounds[c] = append(au.rounds[c], x)
				continue
			}
			au.can.Gradient(au.grad, w, au.term, c, au.clip, au.scratch)
			if d := floats.Norm(au.grad, 2); d > 0 {
				au.score[c] += au.llr(floats.Dot(g, au.grad)/d, d)
			}
		}
	}
}

// llr is the log-likelihood ratio of a step's projection x when the canary
// shifts it by s if drawn.
func (au *sampleAuditor) llr(x, s float64) float64 {
	in, _ := auditscore.Gaussian([]float64{x}, s, au.sigma, au.rate) // finite arguments
	if !au.can.Opposite {
		return in
	}
	out, _ := auditscore.Gaussian([]float64{x}, -s, au.sigma, au.rate)
	return in - out
}

// release takes the model w the server released in round round: the final
// view scores it, and the row of the metrics table that ends there keeps
// the scores.
func (au *sampleAuditor) release(round int, w []float64) {
	if round <= 0 || au.err != nil {
		return
	}
	switch {
	case au.a.View == viewFinal:
		for c := range au.score {
			if au.can.Kind == canary.Gradient {
				u := au.can.Directions[c]
				au.score[c] = u.Dot(au.w0) - u.Dot(w)
			} else {
				au.score[c] = au.term.Value(au.w0, au.can.Set, c) - au.term.Value(w, au.can.Set, c)
			}
		}
	case au.trained != round:
		au.err = fmt.Errorf("round %d released a model without agent 0's training", round)
		return
	}
	if row := au.table.Row(round); row > 0 {
		au.rows[row] = append([]float64(nil), au.score...)
	}
}

// record gives the runner the run's audit — the scores after every row,
// the steps' projections for the measured-noise statistic — and, as the
// upper bound, the sample-level ledger's ε of agent 0's own dataset after
// every row: q = B/(N + m), E steps per round.
func (au *sampleAuditor) record(j *run.Job) error {
	if au.err != nil {
		return fmt.Errorf("the audit of the canary examples: %w", au.err)
	}
	model := au.model()
	recordScores(j, au.a.Method, au.rows, au.can.Included, au.rounds, model != nil)
	kind, delta := au.client.SampleAccountant(), au.client.SampleDelta()
	l := ledger.New(kind, ledger.RunOptions)
	eps := make([]float64, len(au.rows))
	done := 0
	for k, it := range au.table.Iterations {
		for ; done < it; done++ {
			for range au.steps {
				if err := l.Compose(au.upper); err != nil {
					return fmt.Errorf("the audit's upper bound: %w", err)
				}
			}
		}
		g, err := l.Guarantee(delta)
		if err != nil {
			return fmt.Errorf("the audit's upper bound: %w", err)
		}
		eps[k] = g.Epsilon
		if math.IsNaN(eps[k]) {
			eps[k] = math.Inf(1)
		}
	}
	m := au.upper.Mechanism
	j.RecordAuditUpper(run.AuditUpper{Accountant: ledger.Bound(kind, au.upper), Relation: m.Relation.String(),
		Sampling: m.Sampling.String(), Delta: delta, Epsilon: eps, Model: model})
	if j.Run == 0 {
		j.Stats.Details["audit_canaries"] = au.details()
	}
	return nil
}

// model is a step as the measured-noise statistic takes it: the
// projection x is shifted by C when the canary is drawn (rate q), under
// Gaussian noise zC, E steps a round. It holds for gradient canaries seen
// white-box; an example canary's shift changes from step to step, and the
// final view has no steps to measure.
func (au *sampleAuditor) model() *run.AuditModel {
	if au.rounds == nil {
		return nil
	}
	m := au.upper.Mechanism
	return &run.AuditModel{Shift: au.clip, Noise: au.sigma, Rate: au.rate, Sampling: m.Sampling.String(),
		Relation: m.Relation.String(), RoundsPerIteration: au.steps}
}

// details describes the canaries in the summary.
func (au *sampleAuditor) details() map[string]any {
	d := map[string]any{
		"audited_agent":   0,
		"canaries":        au.can.Len(),
		"samples":         au.samples,
		"sampling_rate":   au.rate,
		"steps_per_round": au.steps,
		"dirac":           au.can.Dirac,
		"upper_bound":     "the sample-level ε of agent 0's own dataset (its real examples and every canary, in or out): the ledger's sample_epsilon column assumes the largest rate of all agents without the canaries, B/N_min, and is the larger",
	}
	switch {
	case au.can.Kind == canary.Gradient && au.can.Dirac:
		d["canary"] = "an example whose clipped gradient is C·e_j at every model, e_j a coordinate none of agent 0's examples touches (a Dirac canary)"
	case au.can.Kind == canary.Gradient:
		d["canary"] = fmt.Sprintf("an example whose clipped gradient is C·u at every model, u a random direction (±1/√k on k = %d coordinates): agent 0's data leave fewer coordinates untouched than there are canaries, or the model's coordinates are not its features", len(au.can.Directions[0].Index))
	case au.can.Dirac:
		d["canary"] = "an example a·e_j on a feature none of agent 0's examples has, with the label of a random real example, a the least power of two at which its gradient at the initial model reaches 2C"
	default:
		d["canary"] = "an example a·v on a random direction v of the features, with the label of a random real example, a the least power of two at which its gradient at the initial model reaches 2C"
	}
	if au.a.View == viewWhiteBox {
		d["view"] = "every local step of agent 0: the model it started from and its noisy sum of clipped gradients, reported by the client outside the protocol"
	} else {
		d["view"] = "the last model the server released"
	}
	return d
}

// dpsgdAuditTiny is a small FedAvg scenario whose DP-SGD clients are
// audited by canary examples (in the registration's Tiny list, which the
// parity walk runs on both engines).
const dpsgdAuditTiny = `name: tiny
seed: 3
runs: 4
iterations: 8
data: {agents: 6, samples: [8, 12], dim: 2}
output: {plot: false, steady_state: 0.5}
algorithm:
  kind: fedavg
  step_size: 0.05
  fedavg:
    participation: full
    local_steps: 2
    batch: 3
    client: {kind: dp-sgd, clip: 1, noise_multiplier: 1}
privacy: {audit: {method: many-run}}
`
