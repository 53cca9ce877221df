// Package graphfl is the scenario glue of graph federated learning (seed
// 002, thesis ch. 3): servers on a graph, each averaging its own clients,
// with privacy at both levels and its accounting. It registers the family
// graphfl with the runner.
package graphfl

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"maple/actors"
	afedavg "maple/actors/fedavg"
	agraphfl "maple/actors/graphfl"
	"maple/actors/msg"
	"maple/actors/trace"
	"maple/algorithms/fedavg"
	"maple/algorithms/graphfl"
	"maple/families/internal/clients"
	"maple/families/internal/dpaudit"
	"maple/internal/params"
	"maple/privacy/noise"
	"maple/privacy/pairmask"
	"maple/rundir"
	"maple/scenarios"
	"maple/scenarios/inputs"
	"maple/scenarios/run"
	"maple/topology"
)

func init() {
	run.Register(run.Family{
		Family: scenarios.Family{
			Kind:     "graphfl",
			Summary:  "graph federated learning: servers on a graph, each averaging its own clients, with privacy at both levels (seed 002, thesis ch. 3)",
			Topology: true,
			Schemes:  graphflSchemes(),
			Defaults: graphflDefaults,
			Complete: graphflComplete,
			Validate: validateGraphFL,
			Nodes: func(sc *scenarios.Scenario) (int, string) {
				return graphflParams(sc).Servers, "algorithm.graphfl.servers"
			},
			Audit: dpaudit.Support,
		},
		Check:    checkGraphFL,
		Columns:  graphflColumns,
		Run:      runGraphFL,
		Estimate: graphflEstimate,
		Tiny: []string{`name: tiny
seed: 3
runs: 2
iterations: 8
data: {agents: 8, samples: [8, 12], dim: 2}
loss: {rho: 0.05}
algorithm:
  kind: graphfl
  step_size: 0.2
  graphfl: {servers: 4, participants: 1, local_steps: [1, 3], batch: [1, 4]}
topology: {graph: ring}
output: {plot: false, steady_state: 0.5}
`, tinyAudited},
	})
}

// tinyAudited is the family's small scenario with random server noise and a
// many-run audit (four runs, the fewest it takes), for the engines' parity walk.
const tinyAudited = `name: tiny
seed: 3
runs: 4
iterations: 8
data: {agents: 8, samples: [8, 12], dim: 2}
loss: {rho: 0.05}
algorithm:
  kind: graphfl
  step_size: 0.2
  graphfl: {servers: 4, participants: 1, local_steps: [1, 3], batch: [1, 4]}
topology: {graph: ring}
output: {plot: false, steady_state: 0.5}
privacy: {scheme: random, variance: 0.01, audit: {view: network}}
`

// Client-level privacy.scheme values, FedAvg's: a scheme that names noise at
// the clients only. algorithm.graphfl.client_noise adds the same noise to a
// server-level scheme.
var clientSchemes = []string{"model-noise", "update-noise"}

// graphflSchemes lists the privacy.scheme values of the family: none, the
// client-level schemes and the server-level ones.
func graphflSchemes() []string {
	names := graphfl.SchemeNames() // none first
	return slices.Concat(names[:1], clientSchemes, names[1:])
}

// GraphFL parameterizes graph federated learning (seed 002 eqs. 6–8): the
// section algorithm.graphfl. data.agents is the total number of clients, P·K.
type GraphFL struct {
	// Servers is P; each server has data.agents/P clients.
	Servers int `yaml:"servers"`
	// Participation is without-replacement, with-replacement or full: how a
	// server picks the clients of a round.
	Participation string `yaml:"participation"`
	// Participants is L, the clients each server draws per round.
	Participants int `yaml:"participants"`
	// LocalSteps is the range of E_{p,k}, the local steps of a client.
	LocalSteps scenarios.IntRange `yaml:"local_steps"`
	// Batch is the range of B_{p,k}, the mini-batch size of a client.
	Batch scenarios.IntRange `yaml:"batch"`
	// BatchSampling is without-replacement or with-replacement.
	BatchSampling string `yaml:"batch_sampling"`
	// Schedule is per-agent (E, B drawn once per client) or per-round.
	Schedule string `yaml:"schedule"`
	// Normalized divides the local step by E_{p,k} (the paper's μ/E_{p,k}).
	Normalized bool `yaml:"normalized"`
	// Server is how each server combines its clients' replies: a FedAvg
	// server behaviour that is a combination rule (mean, median,
	// trimmed-mean, krum), with its parameters.
	Server scenarios.Behaviour `yaml:"server" slot:"fedavg.server"`
	// Client is the clients' local objective and solver, FedAvg's: sgd or
	// fedprox, with their parameters.
	Client scenarios.Behaviour `yaml:"client" slot:"fedavg.client"`
	// ClientNoise is client-level noise, model-noise or update-noise, besides
	// a server-level privacy.scheme (with privacy.scheme none it is the same
	// as privacy.scheme model-noise or update-noise).
	ClientNoise string `yaml:"client_noise"`
}

// graphflDefaults returns the defaults of graph federated learning: FedAvg's
// client defaults, 10 servers of 10 clients (data.agents = 100) on an
// Erdős–Rényi graph with edge probability 0.5 and Metropolis weights (the
// paper does not state its graph; the spec recommends a connected random
// graph with Metropolis weights), drawn once for every run.
func graphflDefaults(sc *scenarios.Scenario) any {
	sc.Data.Agents = 100
	sc.Topology = &scenarios.Topology{Graph: "erdos-renyi", Probability: 0.5, MinDegree: 1, Weights: "metropolis", Regenerate: "once"}
	return &GraphFL{
		Servers:       10,
		Participation: "without-replacement",
		Participants:  10,
		LocalSteps:    scenarios.IntRange{Min: 1, Max: 1},
		Batch:         scenarios.IntRange{Min: 1, Max: 1},
		BatchSampling: "without-replacement",
		Schedule:      "per-agent",
		Normalized:    true,
		Server:        scenarios.NewBehaviour(afedavg.ServerSlot, "mean"),
		Client:        scenarios.NewBehaviour(afedavg.ClientSlot, "sgd"),
		ClientNoise:   "none",
	}
}

func graphflParams(sc *scenarios.Scenario) *GraphFL { return sc.Algorithm.Params.(*GraphFL) }

// graphflComplete caps the default number of participants at the clients per
// server and, for a single server, makes the default topology the one-node
// graph.
func graphflComplete(sc *scenarios.Scenario, set func(string) bool) {
	g := graphflParams(sc)
	if g.Servers > 0 && !set("algorithm.graphfl.participants") {
		g.Participants = min(g.Participants, max(sc.Data.Agents/g.Servers, 1))
	}
	if g.Servers == 1 && sc.Topology != nil {
		if !set("topology.graph") && !set("topology.probability") {
			sc.Topology.Graph, sc.Topology.Probability = "complete", 0
		}
		if !set("topology.min_degree") {
			sc.Topology.MinDegree = 0
		}
	}
}

// clientsPerServer returns K.
func clientsPerServer(sc *scenarios.Scenario) int { return sc.Data.Agents / graphflParams(sc).Servers }

func validateGraphFL(v *scenarios.Validator, sc *scenarios.Scenario) {
	g := graphflParams(sc)
	v.AtLeast("algorithm.graphfl.servers", g.Servers, 1)
	if g.Servers < 1 {
		return
	}
	if sc.Data.Agents%g.Servers != 0 {
		v.Fail("data.agents", "%d clients cannot be split evenly among algorithm.graphfl.servers = %d servers", sc.Data.Agents, g.Servers)
	}
	K := clientsPerServer(sc)
	part, err := fedavg.ParseParticipation(g.Participation)
	v.Parse("algorithm.graphfl.participation", err)
	v.AtLeast("algorithm.graphfl.participants", g.Participants, 1)
	if part == fedavg.Full {
		v.Unused("algorithm.graphfl.participants", "participation full takes every client of a server")
	}
	if part == fedavg.Poisson {
		v.Fail("algorithm.graphfl.participation", "poisson participation is FedAvg's alone: a graph FL server draws a fixed number of its clients (without-replacement, with-replacement or full)")
	}
	if part == fedavg.WithoutReplacement && g.Participants > K {
		v.Fail("algorithm.graphfl.participants", "L = %d clients cannot be sampled without replacement from the K = %d clients of a server (data.agents/servers)", g.Participants, K)
	}
	v.IntRange("algorithm.graphfl.local_steps", g.LocalSteps, 1)
	v.IntRange("algorithm.graphfl.batch", g.Batch, 1)
	v.OneOf("algorithm.graphfl.batch_sampling", g.BatchSampling, []string{"without-replacement", "with-replacement"})
	if g.BatchSampling == "without-replacement" && g.Batch.Max > sc.Data.Samples.Min {
		v.Fail("algorithm.graphfl.batch", "mini-batches of up to %d distinct samples need every client to hold that many, but data.samples can be as low as %d", g.Batch.Max, sc.Data.Samples.Min)
	}
	_, err = fedavg.ParseSchedule(g.Schedule)
	v.Parse("algorithm.graphfl.schedule", err)
	validateBehaviours(v, sc, g, part)
	v.OneOf("algorithm.graphfl.client_noise", g.ClientNoise, append([]string{"none"}, clientSchemes...))
	pr := &sc.Privacy
	server := serverScheme(sc)
	if g.ClientNoise != "none" {
		if slices.Contains(clientSchemes, pr.Scheme) {
			v.Fail("algorithm.graphfl.client_noise", "privacy.scheme %s already sets the client noise", pr.Scheme)
		}
		v.Positive("privacy.variance", pr.Variance)
	}
	if server != graphfl.None && g.Servers == 1 {
		v.Fail("privacy.scheme", "%s perturbs the exchange between servers, but algorithm.graphfl.servers = 1 exchanges nothing", pr.Scheme)
	}
	if server == graphfl.LocalGraphHomomorphic {
		if pr.Keys == pairmask.Paper.String() {
			v.Fail("privacy.keys", "paper keys are not supported between servers (use secure or oracle)")
		}
		if pr.Mechanism != noise.Laplace.String() {
			v.Fail("privacy.mechanism", "local graph-homomorphic masks are Laplace by construction; %s does not apply (client noise would use it, but the masks cannot)", pr.Mechanism)
		}
	}
	if pr.Audit != nil {
		validatePrivacyAudit(v, sc)
	}
}

// validateBehaviours checks the server and client behaviours: a graph FL
// server combines its clients' replies in synchronous rounds, so its
// behaviour must be a combination rule; and each behaviour's own checks of
// the clients' configuration (Krum's replies per round, say).
func validateBehaviours(v *scenarios.Validator, sc *scenarios.Scenario, g *GraphFL, part fedavg.Participation) {
	const field = "algorithm.graphfl.server"
	rules := afedavg.RuleServers()
	if s, _ := afedavg.LookupServer(g.Server.Kind); s.Client != "" {
		v.Fail(field, "server %s needs its own client (%s) to send it more than the reply, which graph FL's clients do not (rules: %s)", g.Server.Kind, s.Client, strings.Join(rules, ", "))
		return
	}
	if !slices.Contains(rules, g.Server.Kind) {
		v.Fail(field, "server %s is not a combination rule: a graph FL server combines its clients' replies in synchronous rounds (rules: %s)", g.Server.Kind, strings.Join(rules, ", "))
		return
	}
	if owner := afedavg.ClientOwner(g.Client.Kind); owner != "" {
		v.Fail("algorithm.graphfl.client", "client %s is the client of server %s, which graph FL's servers do not run", g.Client.Kind, owner)
		return
	}
	cfg := &fedavg.Config{Agents: clientsPerServer(sc), Participants: g.Participants, Participation: part,
		Batch: fedavg.Range{Min: g.Batch.Min, Max: g.Batch.Max}, BatchWithReplacement: g.BatchSampling == "with-replacement"}
	server, _ := params.Lookup(afedavg.ServerSlot, g.Server.Kind)
	_, _ = afedavg.ConfigureClient(cfg, g.Client.Kind, g.Client.Params) // the loader has checked the name
	clients.Check(cfg, []clients.Slot{
		{Field: field, Value: server.New(g.Server.Params)},
		{Field: "algorithm.graphfl.client", Value: cfg.ClientBehaviour()},
	}, func(f, msg string) { v.Fail(f, "%s", msg) })
}

// graphflEstimate is the cost of one run: per round a Tick and a Done per
// server, a model to and from each of the L clients a server draws (each
// running up to E local steps on up to B samples), and a share along every
// edge of the server graph both ways; every client and server is an actor
// holding a few model-sized vectors; local graph-homomorphic masks add the
// set-up messages and a mask per partner and share; the server graph and its
// combination matrix cost what inputs.NetworkCost says. Run 0 of a noisy curve
// also runs the reference twice for the accountant, which is within the
// estimate's slack.
func graphflEstimate(sc *scenarios.Scenario, md run.Model) run.Estimate {
	g, d := graphflParams(sc), md.Dim
	P, T := float64(max(g.Servers, 1)), float64(sc.Iterations)
	L := float64(g.Participants)
	if g.Participation == fedavg.Full.String() {
		L = float64(sc.Data.Agents) / P
	}
	deg := 0.0
	if g.Servers > 1 && sc.Topology != nil {
		deg = inputs.ExpectedDegree(sc.Topology, g.Servers)
	}
	e := run.Estimate{
		Bytes:       float64(sc.Data.Agents)*(run.ActorBytes+3*d*8) + P*(run.ActorBytes+(6+deg)*d*8),
		Ops:         T * P * (L*(float64(g.LocalSteps.Max)*float64(g.Batch.Max)*md.SampleOps+4*d) + 2*(deg+1)*d),
		Messages:    1 + T*P*(2+2*L+deg),
		RecordBytes: 150,
		VectorLen:   d,
	}
	if sc.Privacy.Scheme == "local-graph-homomorphic" {
		partners := deg / 2
		e.Messages += P * deg * (2 + partners)
		e.Ops += T * P * deg * partners * 50 * d // HKDF and a Laplace draw per coordinate
	}
	if g.Servers > 1 && sc.Topology != nil {
		bytes, ops := inputs.NetworkCost(sc.Topology, P, deg, true)
		e.Bytes += bytes
		e.Ops += ops
	}
	return e
}

// serverScheme returns the server-level scheme of sc's privacy.scheme (None
// for the client-level schemes).
func serverScheme(sc *scenarios.Scenario) graphfl.Scheme {
	s, err := graphfl.ParseScheme(sc.Privacy.Scheme)
	if err != nil {
		return graphfl.None
	}
	return s
}

// clientNoise returns the client-level noise of sc: "none", "model-noise" or
// "update-noise", from privacy.scheme or algorithm.graphfl.client_noise.
func clientNoise(sc *scenarios.Scenario) string {
	if slices.Contains(clientSchemes, sc.Privacy.Scheme) {
		return sc.Privacy.Scheme
	}
	return graphflParams(sc).ClientNoise
}

// graphflConfig translates a curve's scenario into the algorithm's
// configuration, naming the field of any unknown value.
func graphflConfig(c *scenarios.CurveSpec) (graphfl.Config, error) {
	sc := c.Scenario
	g := graphflParams(sc)
	var cfg graphfl.Config
	clients, err := clients.Config(c, "algorithm.graphfl", clientsPerServer(sc), clients.Params{
		Participation: g.Participation, Participants: g.Participants, LocalSteps: g.LocalSteps,
		Batch: g.Batch, BatchSampling: g.BatchSampling, Schedule: g.Schedule, Normalized: g.Normalized, Client: g.Client})
	if err != nil {
		return cfg, err
	}
	if _, err := afedavg.ConfigureServer(clients, g.Server.Kind, g.Server.Params); err != nil {
		return cfg, c.Errorf("algorithm.graphfl.server", "%v", err)
	}
	mech, std := clients.Noise, math.Sqrt(sc.Privacy.Variance)
	cfg = graphfl.Config{Servers: g.Servers, Clients: *clients}
	switch clientNoise(sc) {
	case "model-noise":
		cfg.Clients.NoiseStd = std
	case "update-noise":
		cfg.Clients.Share, cfg.Clients.NoiseStd = fedavg.Updates, std
	}
	p := &cfg.Privacy
	if p.Scheme = serverScheme(sc); p.Scheme != graphfl.None {
		p.Mechanism, p.Std, p.SelfNoise = mech, std, sc.Privacy.SelfNoise
		if p.Scheme == graphfl.LocalGraphHomomorphic {
			p.Mechanism = noise.Laplace
		}
	}
	if err := inputs.ParseMaskFields(c, &p.Form, &p.Keys, &p.Roles, &p.OSKeys); err != nil {
		return cfg, err
	}
	if err := cfg.Validate(); err != nil {
		return cfg, c.Errorf("algorithm.graphfl", "%v", err)
	}
	return cfg, nil
}

// checkGraphFL builds the configuration and the run-0 server network, so that
// a bad topology is reported before anything runs.
func checkGraphFL(c *scenarios.CurveSpec, dir string) error {
	cfg, err := graphflConfig(c)
	if err != nil {
		return err
	}
	n, err := inputs.FirstNetwork(c, dir)
	if err != nil {
		return err
	}
	if _, err := graphfl.NewNetwork(n.A, cfg); err != nil {
		return c.Errorf("topology", "%v", err)
	}
	return nil
}

// graphflColumns are the metrics of a run: the centroid MSD, and with more
// than one server the average MSD and the disagreement of the servers' models
// (seed 002 §5); for classification the test error, accuracy and
// cross-entropy of the centroid (and their mean over the servers, the shared
// ClassColumns); with server-level noise the squared norm of the noise
// that reaches the centroid. With one server the centroid is the model and
// the metrics are FedAvg's.
func graphflColumns(sc *scenarios.Scenario) []rundir.Column {
	network := graphflParams(sc).Servers > 1
	cols := []rundir.Column{{Name: "msd_centroid", Decibel: true, Label: "centroid MSD ‖w_c,i − w^o‖² (dB)"}}
	if network {
		cols = append(cols,
			rundir.Column{Name: "msd_average", Decibel: true, Label: "average MSD (1/P)Σ‖w_p,i − w^o‖² (dB)"},
			rundir.Column{Name: "disagreement", Decibel: true, Label: "disagreement (1/P)Σ‖w_p,i − w_c,i‖² (dB)"})
	}
	cols = append(cols, run.ClassColumns(sc, "_centroid", " of the centroid")...)
	if network {
		cols = append(cols, run.ClassColumns(sc, "_average", ", mean over the servers")...)
	}
	if serverScheme(sc) != graphfl.None {
		cols = append(cols, rundir.Column{Name: "centroid_noise", Decibel: true, Label: "noise reaching the centroid ‖Σ_p q_p n_p,i‖² (dB)"})
	}
	return cols
}

// columnIndex returns the index of the column named name, or −1.
func columnIndex(cols []rundir.Column, name string) int {
	return slices.IndexFunc(cols, func(c rundir.Column) bool { return c.Name == name })
}

// graphflObserver turns the servers' reports of a round into a metrics row.
// The centroid is w_c = Σ_p q_p w_p with q uniform (1/P) when A is doubly
// stochastic, as in the paper, and the Perron vector otherwise; every MSD is
// measured as FedAvg's is (msd), so that with one server the centroid MSD is
// FedAvg's MSD to the last bit.
//
// The noise the exchange injected into server p's model is
// n_p = w_p − Σ_m a_mp ψ_m, computed from the reported aggregates, so the
// observer needs no knowledge of the scheme: its centroid Σ_p q_p n_p is what
// reaches the centroid (zero up to rounding for graph-homomorphic and local
// graph-homomorphic noise).
type graphflObserver struct {
	t       *rundir.Table
	q, wOpt []float64
	p       *inputs.Problem
	a       *mat.Dense
	// Column indices, −1 for the columns the run does not have; the test
	// columns are the first of ClassMetrics consecutive ones.
	colCentroid, colAverage, colDisagreement  int
	colTestCentroid, colTestAverage, colNoise int
	class                                     [3 * run.ClassMetrics]float64 // centroid, mean, one server's

	centroid, residual, combo []float64
	psi                       [][]float64
	maxNoise                  float64 // largest |coordinate| of the centroid noise
}

// setColumns records where each metric goes.
func (o *graphflObserver) setColumns(cols []rundir.Column) {
	o.colCentroid, o.colAverage = columnIndex(cols, "msd_centroid"), columnIndex(cols, "msd_average")
	o.colDisagreement = columnIndex(cols, "disagreement")
	o.colTestCentroid, o.colTestAverage = columnIndex(cols, "test_error_centroid"), columnIndex(cols, "test_error_average")
	o.colNoise = columnIndex(cols, "centroid_noise")
}

func (o *graphflObserver) aggregates(_ int, Psi [][]float64) {
	for p, v := range Psi {
		copy(o.psi[p], v)
	}
}

func (o *graphflObserver) models(round int, W [][]float64) {
	if round > 0 && o.colNoise >= 0 {
		clear(o.residual)
		for p, w := range W {
			clear(o.combo)
			for m, psi := range o.psi {
				if a := o.a.At(m, p); a != 0 {
					floats.AddScaled(o.combo, a, psi)
				}
			}
			floats.SubTo(o.combo, w, o.combo)
			floats.AddScaled(o.residual, o.q[p], o.combo)
		}
		o.maxNoise = max(o.maxNoise, floats.Norm(o.residual, math.Inf(1)))
	}
	row := o.t.Row(round)
	if row < 0 {
		return
	}
	clear(o.centroid)
	for p, w := range W {
		floats.AddScaled(o.centroid, o.q[p], w)
	}
	o.t.Set(row, o.colCentroid, run.MSD(o.centroid, o.wOpt))
	if o.colTestCentroid >= 0 && o.p.Classify(o.class[:run.ClassMetrics], o.centroid) {
		for i, v := range o.class[:run.ClassMetrics] {
			o.t.Set(row, o.colTestCentroid+i, v)
		}
	}
	if o.colNoise >= 0 {
		o.t.Set(row, o.colNoise, floats.Dot(o.residual, o.residual))
	}
	if o.colAverage < 0 {
		return
	}
	var average, disagreement float64
	mean, one := o.class[run.ClassMetrics:2*run.ClassMetrics], o.class[2*run.ClassMetrics:]
	clear(mean)
	classified := false
	for _, w := range W {
		average += run.MSD(w, o.wOpt)
		disagreement += run.MSD(w, o.centroid)
		if o.colTestAverage >= 0 && o.p.Classify(one, w) {
			classified = true
			for i, v := range one {
				mean[i] += v
			}
		}
	}
	P := float64(len(W))
	o.t.Set(row, o.colAverage, average/P)
	o.t.Set(row, o.colDisagreement, disagreement/P)
	if classified {
		for i, v := range mean {
			o.t.Set(row, o.colTestAverage+i, v/P)
		}
	}
}

// centroidWeights returns the weights of the network centroid: 1/P when A is
// doubly stochastic (the paper's centroid), the Perron vector q otherwise.
func centroidWeights(net *inputs.Network) []float64 {
	if topology.CheckDoublyStochastic(net.A, topology.DefaultTol) != nil {
		return net.Q
	}
	q := make([]float64, len(net.Q))
	for p := range q {
		q[p] = 1 / float64(len(q))
	}
	return q
}

// runGraphFL executes one graph federated learning run on the job's engine.
func runGraphFL(j *run.Job, p *inputs.Problem, sink *run.TraceSink) error {
	c := j.Curve
	sc := c.Scenario
	cfg, err := graphflConfig(c)
	if err != nil {
		return err
	}
	net, err := inputs.BuildNetwork(j.Context(), c, j.Dir, inputs.NetworkSeed(sc, j.RunSeed))
	if err != nil {
		return err
	}
	P, dim := cfg.Servers, p.Loss.Dim(p.Sets[0].Dim)
	w0 := make([]float64, dim)
	cols := graphflColumns(sc)
	obs := &graphflObserver{t: rundir.NewTable(sc.Iterations, sc.Output.Every, len(cols)), q: centroidWeights(net), wOpt: p.WOpt,
		p: p, a: net.A, centroid: make([]float64, dim),
		psi: matrixOf(P, dim), residual: make([]float64, dim), combo: make([]float64, dim)}
	obs.setColumns(cols)
	initial := make([][]float64, P)
	for i := range initial {
		initial[i] = w0
	}
	obs.models(0, initial)
	j.Table = obs.t
	sets := p.Sets
	var dp *auditRun
	if j.Audit() != nil {
		if dp, sets, err = newAuditRun(j, p, cfg, graphfl.Problem{A: net.A, Sets: p.Sets, Loss: p.Loss, W0: w0}); err != nil {
			return err
		}
	}
	setup := agraphfl.Setup{Config: cfg, A: net.A, Sets: sets, Loss: p.Loss, W0: w0,
		Rounds: sc.Iterations, GradientTime: sc.Network.GradientTime}
	var counts []pairmask.SetupCounts
	traffic := map[string]*trafficCount{}
	if j.Opts.Engine == run.Reference {
		prob := graphfl.Problem{A: net.A, Sets: sets, Loss: p.Loss, W0: w0}
		hooks := graphfl.Hooks{Aggregates: obs.aggregates, Models: obs.models}
		var auditErr error
		if dp != nil {
			hooks.Share = func(i, from, to int, v []float64) {
				if auditErr == nil {
					auditErr = dp.auditor.Observe(i, from, to, v)
				}
			}
		}
		if err := graphfl.ReferenceContext(j.Context(), cfg, prob, j.RunSeed, sc.Iterations, hooks); err != nil {
			return err
		}
		if auditErr != nil {
			return auditErr
		}
	} else {
		collector := agraphfl.NewCollector(P, dim)
		collector.Aggregates, collector.Models = obs.aggregates, obs.models
		opts := j.ActorOptions(collector, sink)
		if j.Run == 0 {
			opts.Trace.Sink = countTraffic(traffic, opts.Trace.Sink)
		}
		r := actors.NewRun(opts)
		defer r.Close()
		sched, err := agraphfl.Spawn(r, setup)
		if err != nil {
			return err
		}
		collector.First = sched + 1
		if dp != nil {
			dp.spawn(r, collector.First)
		}
		if err := r.Execute(sched, &msg.Start{}); err != nil {
			return err
		}
		j.Finish(r)
		counts = collector.Setup
	}
	if dp != nil {
		if err := dp.record(j, obs.t, net, dim); err != nil {
			return err
		}
	}
	return describeGraphFL(j, p, net, setup, obs, counts, traffic)
}

func matrixOf(rows, cols int) [][]float64 {
	m := make([][]float64, rows)
	for r := range m {
		m[r] = make([]float64, cols)
	}
	return m
}

// trafficCount counts the messages of one type and their encoded bytes.
type trafficCount struct {
	messages, bytes int
}

// countTraffic returns a trace sink that counts messages and bytes by type
// and passes every record on to next, if any.
func countTraffic(counts map[string]*trafficCount, next func(*trace.Record) error) func(*trace.Record) error {
	return func(rec *trace.Record) error {
		tc := counts[rec.Type]
		if tc == nil {
			tc = &trafficCount{}
			counts[rec.Type] = tc
		}
		tc.messages++
		tc.bytes += rec.Size
		if next != nil {
			return next(rec)
		}
		return nil
	}
}

// describeGraphFL records what the summary reports of a run: the sizes, the
// server network, the largest noise residual in the centroid, the local
// graph-homomorphic set-up, the traffic by message type (run 0, actor
// engine) and the privacy accounting (run 0).
func describeGraphFL(j *run.Job, p *inputs.Problem, net *inputs.Network, setup agraphfl.Setup, obs *graphflObserver, counts []pairmask.SetupCounts, traffic map[string]*trafficCount) error {
	sc := j.Curve.Scenario
	cfg := setup.Config
	d := j.Stats.Details
	d["servers"], d["clients_per_server"] = cfg.Servers, cfg.Clients.Agents
	d["network"] = net.Describe()
	d["centroid_weights"] = obs.q
	if topology.CheckDoublyStochastic(net.A, topology.DefaultTol) != nil {
		j.Stats.Warnings = append(j.Stats.Warnings, "the servers' combination matrix is not doubly stochastic: the servers converge to the minimizer of Σ_p q_p J_p (Perron weights), not to the uniform-average w^o the MSD is measured against")
	}
	if obs.colNoise >= 0 {
		d["centroid_noise_max"] = obs.maxNoise
		if s := cfg.Privacy.Scheme; s == graphfl.GraphHomomorphic || s == graphfl.LocalGraphHomomorphic {
			d["gh_residual_max"] = obs.maxNoise
			// Rounding bound: each n_p is a difference of two sums of at
			// most P + 1 terms; 1e-9 relative to the noise and the models is
			// far above rounding and far below any real leak.
			if tol := 1e-9 * (cfg.Privacy.Std + maxAbs(obs.psi)); obs.maxNoise > tol {
				j.Stats.Warnings = append(j.Stats.Warnings, fmt.Sprintf("run %d: the %s noise did not cancel in the centroid: residual %g > %g", j.Run, s, obs.maxNoise, tol))
			}
		}
	}
	if cfg.Privacy.Scheme == graphfl.LocalGraphHomomorphic {
		gn, err := setup.Network()
		if err != nil {
			return err
		}
		d["unmasked_edges"] = gn.Unmasked()
		if counts != nil {
			plan := gn.Plan()
			roles, keys, relays, bounds := make([]int, len(counts)), make([]int, len(counts)), make([]int, len(counts)), make([]float64, len(counts))
			within := true
			for k, c := range counts {
				roles[k], keys[k], relays[k], bounds[k] = c.Roles, c.Keys, c.Relays, plan.SetupBound(k)
				within = within && float64(c.Roles+c.Keys) <= bounds[k]
			}
			d["lgh_setup"] = map[string]any{"roles": roles, "keys": keys, "relays": relays, "bound": bounds, "within_bound": within}
		}
	}
	if len(traffic) > 0 {
		t := map[string]any{}
		for typ, c := range traffic {
			t[typ] = map[string]any{"messages": c.messages, "bytes": c.bytes,
				"messages_per_round": float64(c.messages) / float64(sc.Iterations), "bytes_per_round": float64(c.bytes) / float64(sc.Iterations)}
		}
		d["traffic"] = t
	}
	return accountGraphFL(j, p, net, cfg)
}

func maxAbs(rows [][]float64) float64 {
	var m float64
	for _, r := range rows {
		m = max(m, floats.Norm(r, math.Inf(1)))
	}
	return m
}
