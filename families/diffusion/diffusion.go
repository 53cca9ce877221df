// Package diffusion is the scenario glue of decentralized learning (paper
// 001, thesis ch. 4): consensus, CTA and ATC diffusion with random,
// graph-homomorphic and local graph-homomorphic noise, the eavesdropper
// audit and the systems model's faults. It registers the family diffusion
// with the runner.
package diffusion

import (
	"context"
	"fmt"
	"math"
	"strings"

	"gonum.org/v1/gonum/mat"

	"maple/actors"
	adiffusion "maple/actors/diffusion"
	"maple/actors/msg"
	"maple/algorithms/diffusion"
	"maple/algorithms/systems"
	"maple/families/internal/dpaudit"
	"maple/privacy/homomorphic"
	"maple/privacy/noise"
	"maple/rundir"
	"maple/scenarios"
	"maple/scenarios/inputs"
	"maple/scenarios/run"
	"maple/topology"
)

func init() {
	run.Register(run.Family{
		Family: scenarios.Family{
			Kind:     "diffusion",
			Summary:  "decentralized consensus, CTA and ATC with random, graph-homomorphic and local graph-homomorphic noise (paper 001, thesis ch. 4)",
			Topology: true,
			Schemes:  diffusion.SchemeNames(),
			Defaults: diffusionDefaults,
			Validate: validateDiffusion,
			Systems:  diffusionSystems,
			Audit:    dpaudit.Support,
		},
		Check:    checkDiffusion,
		Columns:  diffusionColumns,
		Run:      runDiffusion,
		Estimate: diffusionEstimate,
		// The first is the scenario the parity walk derives for a family
		// that lists none; the second adds a many-run audit.
		Tiny: []string{tiny, strings.Replace(tiny, "runs: 2", "runs: 4", 1) + "privacy: {scheme: random, variance: 0.01, audit: {view: network}}\n"},
	})
}

// tiny is the family's small scenario for the engines' parity walk.
const tiny = `name: tiny
seed: 3
runs: 2
iterations: 8
data: {agents: 6, samples: [8, 12], dim: 2}
algorithm: {kind: diffusion}
output: {plot: false, steady_state: 0.5}
topology: {graph: ring}
`

// Diffusion parameterizes decentralized learning with the generalized
// recursion of paper 001 eqs. 21–23: the section algorithm.diffusion.
type Diffusion struct {
	// Strategy is consensus, cta, atc or general.
	Strategy string `yaml:"strategy"`
	// Stages, for strategy general, lists which of the combination steps
	// a0, a1, a2 use the network matrix A (the others use I).
	Stages []string `yaml:"stages,omitempty"`
	// Combine is the receivers' combination step: linear (the papers') or
	// clipped-gossip, with its parameters.
	Combine scenarios.Behaviour `yaml:"combine" slot:"diffusion.combine"`
	// Adapt is the agents' adaptation step: sgd (the papers') or momentum,
	// with its parameters.
	Adapt scenarios.Behaviour `yaml:"adapt" slot:"diffusion.adapt"`
	// Gradient is full (full local batch), sample (one sample) or batch.
	Gradient string `yaml:"gradient"`
	// Batch is the mini-batch size of gradient batch.
	Batch int `yaml:"batch,omitempty"`
	// Mode is sync (the papers' rounds) or async (each agent combines
	// whatever has arrived when its own step ends; docs/systems.md).
	Mode string `yaml:"mode"`
	// Wait is how long an asynchronous agent waits after its compute before
	// combining.
	Wait float64 `yaml:"wait,omitempty"`
	// DroppedPartner is what local graph-homomorphic masks do when a
	// sender's partner is down in a round: ignore (the residual is
	// reported), drop-mask or re-key.
	DroppedPartner string `yaml:"dropped_partner"`
	// Audit, if set, places an eavesdropper on the victim's links (see
	// Audit); its reconstruction error is the metric audit_msd.
	Audit *Audit `yaml:"audit,omitempty"`
}

// diffusionDefaults returns the defaults of decentralized learning and sets
// the default topology: a random geometric graph of radius 0.3 with
// Metropolis weights, drawn once for every run.
func diffusionDefaults(sc *scenarios.Scenario) any {
	sc.Topology = &scenarios.Topology{Graph: "geometric", Radius: 0.3, MinDegree: 1, Weights: "metropolis", Regenerate: "once"}
	return &Diffusion{Strategy: "atc", Combine: scenarios.NewBehaviour(adiffusion.CombineSlot, "linear"),
		Adapt: scenarios.NewBehaviour(adiffusion.AdaptSlot, "sgd"), Gradient: "full", Mode: "sync", DroppedPartner: "ignore"}
}

func diffusionParams(sc *scenarios.Scenario) *Diffusion { return sc.Algorithm.Params.(*Diffusion) }

func validateDiffusion(v *scenarios.Validator, sc *scenarios.Scenario) {
	d := diffusionParams(sc)
	_, err := diffusion.ParseStrategy(d.Strategy)
	v.Parse("algorithm.diffusion.strategy", err)
	for i, s := range d.Stages {
		_, err := diffusion.ParseStage(s)
		v.Parse(fmt.Sprintf("algorithm.diffusion.stages[%d]", i), err)
	}
	switch {
	case d.Strategy == "general" && len(d.Stages) == 0:
		v.Fail("algorithm.diffusion.stages", "strategy general needs the list of stages that use A (a0, a1, a2)")
	case d.Strategy != "general" && len(d.Stages) > 0:
		v.Fail("algorithm.diffusion.stages", "only applies to strategy general (strategy %s fixes its stages)", d.Strategy)
	}
	comb, _ := adiffusion.Combiners.New(d.Combine.Kind, d.Combine.Params) // the loader checked the name
	if s := sc.Privacy.Scheme; comb != diffusion.Combiner(diffusion.Linear{}) && (s == diffusion.GraphHomomorphic.String() || s == diffusion.LocalGraphHomomorphic.String()) {
		v.Fail("algorithm.diffusion.combine", "%s noise cancels only in the linear combination, not with %s", s, d.Combine.Kind)
	}
	if sc.Privacy.Scheme == diffusion.LocalGraphHomomorphic.String() && sc.Privacy.Mechanism != noise.Laplace.String() {
		v.Fail("privacy.mechanism", "local graph-homomorphic masks are Laplace by construction; mechanism %s does not apply", sc.Privacy.Mechanism)
	}
	_, err = diffusion.ParseGradient(d.Gradient)
	v.Parse("algorithm.diffusion.gradient", err)
	if d.Gradient == "batch" {
		v.AtLeast("algorithm.diffusion.batch", d.Batch, 1)
		if d.Batch > sc.Data.Samples.Min {
			v.Fail("algorithm.diffusion.batch", "batches of %d distinct samples need every agent to hold that many, but data.samples can be as low as %d", d.Batch, sc.Data.Samples.Min)
		}
	} else if d.Batch != 0 {
		v.Fail("algorithm.diffusion.batch", "only applies to gradient batch")
	}
	validateDiffusionSystems(v, sc, d)
	if d.Audit != nil {
		validateAudit(v, sc, d.Audit)
	}
	if sc.Privacy.Audit != nil {
		validatePrivacyAudit(v, sc, d)
	}
}

// diffusionEstimate is the cost of one decentralized run: building its
// network and combination matrix (inputs.NetworkCost) and, per iteration, a
// Tick and a Done per agent and, per combination stage, a share along every
// edge (both ways); a gradient per agent on its whole dataset, one sample or
// a batch; under local graph-homomorphic noise, the set-up messages (roles,
// keys and their relays) and a mask per partner and share. The degree is
// the expected one of the graph model (a rough 8 for graphs read from files).
func diffusionEstimate(sc *scenarios.Scenario, md run.Model) run.Estimate {
	d, dim := diffusionParams(sc), md.Dim
	P, T := float64(sc.Data.Agents), float64(sc.Iterations)
	deg := inputs.ExpectedDegree(sc.Topology, sc.Data.Agents)
	stages := 1.0
	if d.Strategy == "general" {
		stages = float64(len(d.Stages))
	}
	samples := float64(sc.Data.Samples.Max)
	switch d.Gradient {
	case "sample":
		samples = 1
	case "batch":
		samples = float64(d.Batch)
	}
	e := run.Estimate{
		Bytes:       P * (run.ActorBytes + (4+2*deg)*dim*8),
		Ops:         T * P * (samples*md.SampleOps + stages*deg*2*dim),
		Messages:    1 + T*(2*P+stages*P*deg),
		RecordBytes: 160,
		VectorLen:   dim,
	}
	if sc.Privacy.Scheme == "local-graph-homomorphic" {
		partners := deg / 2
		e.Messages += P * deg * (2 + partners)
		e.Ops += T * stages * P * deg * partners * 50 * dim // HKDF and a Laplace draw per coordinate
		if sc.Privacy.Keys == "paper" {
			e.Messages += T * stages * P * deg * partners * 2
		}
	}
	bytes, ops := inputs.NetworkCost(sc.Topology, P, deg, true)
	e.Bytes += bytes
	e.Ops += ops
	return e
}

// diffusionConfig translates a curve's scenario into the algorithm's
// configuration, naming the field of any unknown value.
func diffusionConfig(c *scenarios.CurveSpec) (diffusion.Config, error) {
	sc := c.Scenario
	d := diffusionParams(sc)
	var cfg diffusion.Config
	var err error
	if cfg.Strategy, err = diffusion.ParseStrategy(d.Strategy); err != nil {
		return cfg, c.Errorf("algorithm.diffusion.strategy", "%v", err)
	}
	for i, s := range d.Stages {
		j, err := diffusion.ParseStage(s)
		if err != nil {
			return cfg, c.Errorf(fmt.Sprintf("algorithm.diffusion.stages[%d]", i), "%v", err)
		}
		cfg.Stages[j] = true
	}
	if cfg.Gradient, err = diffusion.ParseGradient(d.Gradient); err != nil {
		return cfg, c.Errorf("algorithm.diffusion.gradient", "%v", err)
	}
	if cfg.Combine, err = adiffusion.Combiners.New(d.Combine.Kind, d.Combine.Params); err != nil {
		return cfg, c.Errorf("algorithm.diffusion.combine", "%v", err)
	}
	if cfg.Adapt, err = adiffusion.Adapters.New(d.Adapt.Kind, d.Adapt.Params); err != nil {
		return cfg, c.Errorf("algorithm.diffusion.adapt", "%v", err)
	}
	cfg.StepSize, cfg.Batch = sc.Algorithm.StepSize, d.Batch
	p := &cfg.Privacy
	if p.Scheme, err = diffusion.ParseScheme(sc.Privacy.Scheme); err != nil {
		return cfg, c.Errorf("privacy.scheme", "%v", err)
	}
	if p.Mechanism, err = noise.ParseMechanism(sc.Privacy.Mechanism); err != nil {
		return cfg, c.Errorf("privacy.mechanism", "%v", err)
	}
	if p.Scheme != diffusion.None {
		p.Std, p.SelfNoise = math.Sqrt(sc.Privacy.Variance), sc.Privacy.SelfNoise
	}
	if err := inputs.ParseMaskFields(c, &p.Form, &p.Keys, &p.Roles, &p.OSKeys); err != nil {
		return cfg, err
	}
	if p.Partner, err = diffusion.ParsePartnerPolicy(d.DroppedPartner); err != nil {
		return cfg, c.Errorf("algorithm.diffusion.dropped_partner", "%v", err)
	}
	if err := cfg.Validate(); err != nil {
		return cfg, c.Errorf("algorithm.diffusion", "%v", err)
	}
	return cfg, nil
}

// checkDiffusion builds the configuration and the run-0 network, so that a
// bad topology is reported before anything runs.
func checkDiffusion(c *scenarios.CurveSpec, dir string) error {
	cfg, err := diffusionConfig(c)
	if err != nil {
		return err
	}
	sc := c.Scenario
	n, err := inputs.FirstNetwork(c, dir)
	if err != nil {
		return err
	}
	if _, err := diffusion.NewNetwork(n.A, cfg); err != nil {
		return c.Errorf("topology", "%v", err)
	}
	if diffusionParams(sc).Audit != nil {
		if _, err := planAudit(c, cfg, n.A); err != nil {
			return err
		}
	}
	if diffusionUsesSystems(sc) {
		_, err := inputs.SystemsModel(context.Background(), c, dir)
		return err
	}
	return nil
}

// diffusionColumns are the metrics of a decentralized run: paper 001's
// centroid and average MSD (eqs. 58–59, when there is an optimum), the
// network disagreement, for classification the test metrics of the
// centroid and their average over the agents, and with an eavesdropper its
// reconstruction error.
func diffusionColumns(sc *scenarios.Scenario) []rundir.Column {
	cols := run.MSDColumns(sc,
		rundir.Column{Name: "msd_centroid", Decibel: true, Label: "centroid MSD ‖w_c,i − w^o‖² (dB)"},
		rundir.Column{Name: "msd_average", Decibel: true, Label: "average MSD (1/P)Σ‖w_p,i − w^o‖² (dB)"})
	cols = append(cols, rundir.Column{Name: "disagreement", Decibel: true, Label: "disagreement (1/P)Σ‖w_p,i − w_c,i‖² (dB)"})
	cols = append(cols, run.ClassColumns(sc, "_centroid", " of the centroid")...)
	cols = append(cols, run.ClassColumns(sc, "_average", ", mean over the agents")...)
	cols = append(cols, diffusionSystemsColumns(sc)...)
	if diffusionParams(sc).Audit != nil {
		cols = append(cols, auditColumn) // the last columns (see spawnEavesdropper)
		if seededAudit(sc) {
			cols = append(cols, auditSeededColumn)
		}
	}
	return cols
}

// diffusionObserver turns the agents' models of a round into a metrics row
// and tracks the graph-homomorphic residual.
type diffusionObserver struct {
	t        *rundir.Table
	q, wOpt  []float64 // wOpt is zero without an optimum (its MSDs are not recorded)
	p        *inputs.Problem
	centroid []float64
	m        diffusion.Metrics
	class    [3 * run.ClassMetrics]float64 // centroid, average, one agent's

	a        *mat.Dense
	form     homomorphic.Form
	residual []float64
	maxGH    float64 // largest |coordinate| of a stage's Perron-weighted noise sum
}

func (o *diffusionObserver) models(round int, W [][]float64) {
	row := o.t.Row(round)
	if row < 0 {
		return
	}
	diffusion.Measure(&o.m, o.centroid, o.q, W, o.wOpt, o.p.Loss, nil)
	col := 0
	if o.p.WOpt != nil {
		o.t.Set(row, 0, o.m.CentroidMSD)
		o.t.Set(row, 1, o.m.AverageMSD)
		col = 2
	}
	o.t.Set(row, col, o.m.Disagreement)
	centroid, average, agent := o.class[:run.ClassMetrics], o.class[run.ClassMetrics:2*run.ClassMetrics], o.class[2*run.ClassMetrics:]
	if !o.p.Classify(centroid, o.centroid) {
		return
	}
	clear(average)
	for _, w := range W {
		o.p.Classify(agent, w)
		for i, v := range agent {
			average[i] += v
		}
	}
	for i := range average {
		average[i] /= float64(len(W))
	}
	for i, v := range o.class[:2*run.ClassMetrics] {
		o.t.Set(row, col+1+i, v)
	}
}

func (o *diffusionObserver) draws(_, _ int, G [][]float64) {
	diffusion.GHResidual(o.residual, o.a, o.q, G, o.form)
	for _, v := range o.residual {
		o.maxGH = max(o.maxGH, math.Abs(v))
	}
}

// runDiffusion executes one decentralized run on the job's engine.
func runDiffusion(j *run.Job, p *inputs.Problem, sink *run.TraceSink) error {
	c := j.Curve
	sc := c.Scenario
	cfg, err := diffusionConfig(c)
	if err != nil {
		return err
	}
	net, err := inputs.BuildNetwork(j.Context(), c, j.Dir, inputs.NetworkSeed(sc, j.RunSeed))
	if err != nil {
		return err
	}
	dim := p.Loss.Dim(p.Sets[0].Dim)
	w0 := make([]float64, dim)
	var plan *auditPlan
	if diffusionParams(sc).Audit != nil {
		if j.Opts.Engine == run.Reference {
			return c.Errorf("algorithm.diffusion.audit", "the eavesdropper is an actor: it needs the actor engine")
		}
		if plan, err = planAudit(c, cfg, net.A); err != nil {
			return err
		}
	}
	sets := p.Sets
	var dp *auditRun
	if j.Audit() != nil {
		if dp, sets, err = newAuditRun(j, p, cfg, diffusion.Problem{A: net.A, Sets: p.Sets, Loss: p.Loss, W0: w0}); err != nil {
			return err
		}
	}
	cols := diffusionColumns(sc)
	wOpt := p.WOpt
	if wOpt == nil {
		wOpt = make([]float64, dim)
	}
	obs := &diffusionObserver{
		t: rundir.NewTable(sc.Iterations, sc.Output.Every, len(cols)),
		q: net.Q, wOpt: wOpt, p: p, centroid: make([]float64, dim),
		a: net.A, form: cfg.Privacy.Form, residual: make([]float64, dim),
	}
	initial := make([][]float64, len(p.Sets))
	for k := range initial {
		initial[k] = w0
	}
	obs.models(0, initial)
	j.Table = obs.t
	sysLog := newDiffusionLog(sc, obs.t, cols)
	setup := adiffusion.Setup{Config: cfg, A: net.A, Sets: sets, Loss: p.Loss, W0: w0,
		Iterations: sc.Iterations, GradientTime: sc.Network.GradientTime, Async: diffusionAsync(sc)}
	var model *systems.Model
	if diffusionUsesSystems(sc) {
		if model, err = inputs.SystemsModel(j.Context(), c, j.Dir); err != nil {
			return err
		}
		setup.Devices = model.Devices(j.RunSeed, len(p.Sets), diffusion.AgentName)
		if diffusionDynamic(sc) {
			setup.Dynamics = diffusionDynamics(sc, model, j.RunSeed, len(p.Sets))
		}
	}
	var setupCounts []diffusion.SetupCounts
	if j.Opts.Engine == run.Reference {
		prob := diffusion.Problem{A: net.A, Sets: sets, Loss: p.Loss, W0: w0}
		var share func(i, j, from, to int, v []float64)
		var auditErr error
		if dp != nil {
			share = func(i, j, from, to int, v []float64) {
				if auditErr == nil {
					auditErr = dp.auditor.Observe(i, j, from, to, v)
				}
			}
		}
		switch {
		case setup.Async != nil:
			err = asyncDiffusionReference(j, cfg, prob, model, obs, sysLog)
		case sc.Output.XAxis == "time":
			return c.Errorf("output.x_axis", "the reference engine has no virtual time for synchronous decentralized runs (only asynchronous ones); use the actor engine")
		default:
			if setup.Dynamics != nil {
				prob.Dynamics = diffusionDynamics(sc, model, j.RunSeed, len(p.Sets))
			}
			err = diffusion.ReferenceContext(j.Context(), cfg, prob, j.RunSeed, sc.Iterations, diffusion.Hooks{Models: obs.models, Draws: obs.draws,
				Live: func(i int, lr *diffusion.LiveRound) { sysLog.live(i, lr.Facts()) }, Report: sysLog.report, Share: share})
		}
		if err != nil {
			return err
		}
		if auditErr != nil {
			return auditErr
		}
	} else {
		collector := adiffusion.NewCollector(len(p.Sets), dim)
		collector.Models, collector.Draws = obs.models, obs.draws
		collector.Links, collector.Reports, collector.Time = sysLog.live, sysLog.report, sysLog.time
		collector.Async = setup.Async != nil
		var observer actors.Observer = collector
		tap := &relay{collector} // the eavesdropper's observer, once spawned
		if plan != nil {
			observer = tap
		}
		r := actors.NewRun(j.ActorOptions(observer, sink))
		defer r.Close()
		sched, err := adiffusion.Spawn(r, setup)
		if err != nil {
			return err
		}
		collector.First = sched + 1
		if dp != nil {
			dp.spawn(r, collector.First)
		}
		if plan != nil {
			col := len(cols) - 1
			if plan.masked != nil {
				col-- // audit_msd, then audit_seeded_msd
			}
			if tap.Observer, err = plan.spawnEavesdropper(r, collector.First, collector, obs.t, col, j.RunSeed); err != nil {
				return err
			}
			j.Stats.Details["audit"] = plan.describe(dim, sc.Privacy.KeyRandomness)
		}
		if err := r.Execute(sched, &msg.Start{}); err != nil {
			return err
		}
		j.Finish(r)
		setupCounts = collector.Setup
	}
	sysLog.finishMasks()
	if dp != nil {
		if err := dp.record(j, obs.t, len(p.Sets), dim); err != nil {
			return err
		}
	}
	if j.Run == 0 && diffusionUsesSystems(sc) {
		j.Stats.Details["systems"] = sysLog.details(sc)
	}
	if setup.Dynamics != nil || setup.Async != nil {
		obs.maxGH = math.NaN() // the residual of a fixed matrix does not apply
	}
	return describeDiffusion(j, p, net, setup, obs, setupCounts)
}

// describeDiffusion records what the summary reports of a decentralized run:
// the network, the noise-cancellation residual, the LGH set-up cost and the
// unmasked edges, and a warning when A is not doubly stochastic.
func describeDiffusion(j *run.Job, p *inputs.Problem, net *inputs.Network, setup adiffusion.Setup, obs *diffusionObserver, counts []diffusion.SetupCounts) error {
	sc := j.Curve.Scenario
	d := j.Stats.Details
	d["network"] = net.Describe()
	if topology.CheckDoublyStochastic(net.A, topology.DefaultTol) != nil {
		j.Stats.Warnings = append(j.Stats.Warnings, "the combination matrix is not doubly stochastic: the agents converge to the minimizer of Σ_p q_p J_p (Perron weights), not to the uniform-average w^o the MSD is measured against")
	}
	switch sc.Privacy.Scheme {
	case "graph-homomorphic":
		d["gh_residual_max"] = obs.maxGH
		d["gh_noise_std"] = setup.Config.Privacy.Std
	case "local-graph-homomorphic":
		unmasked, err := setup.UnmaskedEdges()
		if err != nil {
			return err
		}
		edges := make([][2]int, len(unmasked))
		for i, e := range unmasked {
			edges[i] = [2]int{e.From, e.To}
		}
		d["unmasked_edges"] = edges
		if counts != nil {
			bounds, err := setup.SetupBounds()
			if err != nil {
				return err
			}
			roles, keys, relays := make([]int, len(counts)), make([]int, len(counts)), make([]int, len(counts))
			within := true
			for k, c := range counts {
				roles[k], keys[k], relays[k] = c.Roles, c.Keys, c.Relays
				within = within && float64(c.Roles+c.Keys) <= bounds[k]
			}
			d["lgh_setup"] = map[string]any{"roles": roles, "keys": keys, "relays": relays, "bound": bounds, "within_bound": within}
		}
	}
	return j.Account(p, len(p.Sets), false)
}
