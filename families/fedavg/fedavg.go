// Package fedavg is the scenario glue of federated averaging (thesis ch. 2):
// the section algorithm.fedavg with its defaults and validation, importance
// sampling, the systems model's collection policies, asynchronous servers
// and adversaries, the estimate and columns, and the run on either engine.
// It registers the family fedavg with the runner.
package fedavg

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"gonum.org/v1/gonum/floats"

	"maple/actors"
	afedavg "maple/actors/fedavg"
	"maple/actors/msg"
	"maple/algorithms/data"
	"maple/algorithms/fedavg"
	"maple/algorithms/fedavg/reference"
	"maple/algorithms/loss"
	"maple/algorithms/optimum"
	"maple/algorithms/rng"
	"maple/algorithms/systems"
	"maple/families/internal/clients"
	"maple/rundir"
	"maple/scenarios"
	"maple/scenarios/inputs"
	"maple/scenarios/run"
)

func init() {
	run.Register(run.Family{
		Family: scenarios.Family{
			Kind:     "fedavg",
			Summary:  "federated averaging with partial participation and privatized updates (thesis ch. 2)",
			Schemes:  []string{"none", "model-noise", "update-noise"},
			Defaults: fedavgDefaults,
			Complete: fedavgComplete,
			Validate: validateFedAvg,
			Systems: []string{scenarios.FieldStepTime, scenarios.FieldClasses, scenarios.FieldLoss, scenarios.FieldDuplicate,
				scenarios.FieldDropout, scenarios.FieldAvailability, scenarios.FieldCrashes, scenarios.FieldXAxis},
			Privacy: fedavgPrivacy,
			Audit:   fedavgAudit,
		},
		Check:    checkFedAvg,
		Columns:  fedavgColumns,
		Run:      runFedAvg,
		Estimate: fedavgEstimate,
		Lazy:     true,
		Tiny: []string{fedavgTiny, fedavgTiny + "    server: {kind: trimmed-mean, trim: 0.34}\n",
			fedavgTiny + "    collect: {kind: deadline, seconds: 1}\nnetwork: {step_time: {kind: fixed, value: 0.3}}\n",
			secureTiny + "privacy: {secure_aggregation: {protocol: secagg+, clip: 2, bits: 16}, dp: {mode: distributed, clip: 0.5}}\n",
			fedavgTiny + "privacy: {dp: {clip: 0.5, relation: replace-one, adaptive_clip: {quantile: 0.4}}, audit: {method: one-run, canaries: 2, view: final}}\n",
			strings.Replace(fedavgTiny, "runs: 2", "runs: 4", 1) + "    participation: poisson\nprivacy: {dp: {clip: 0.5}, audit: {method: many-run}}\n",
			secureTiny + "    participation: poisson\nprivacy: {secure_aggregation: {protocol: secagg+, clip: 2, bits: 16}}\n",
			strings.Replace(fedavgTiny, "runs: 2", "runs: 4", 1) + "privacy: {scheme: update-noise, variance: 0.01, audit: {canary: dataset, view: wire}}\n",
			dpsgdAuditTiny,
			fedavgTiny + "    compress: {kind: top-k, k: 1}\n    uplink_bytes: true\n"},
	})
}

// fedavgTiny is a small FedAvg scenario in which every parameter matters:
// ranges of local steps and batches, a sample of half the agents.
const fedavgTiny = `name: tiny
seed: 3
runs: 2
iterations: 8
data: {agents: 6, samples: [8, 12], dim: 2}
output: {plot: false, steady_state: 0.5}
algorithm:
  kind: fedavg
  step_size: 0.05
  fedavg:
    participants: 3
    local_steps: [1, 3]
    batch: [1, 4]
`

// secureTiny is fedavgTiny for 3 rounds: a secure-aggregation round's key
// agreements cost most of the parity walk's time, and every field shows in
// 3 rounds.
var secureTiny = strings.Replace(fedavgTiny, "iterations: 8", "iterations: 3", 1)

// FedAvg parameterizes federated averaging (thesis eqs. 1.30–1.31): the
// section algorithm.fedavg.
type FedAvg struct {
	// Participation is without-replacement, with-replacement, full or
	// poisson (each agent independently with probability q = L/K).
	Participation string `yaml:"participation"`
	// Participants is L, the number of agents drawn per round (the expected
	// number under poisson participation).
	Participants int `yaml:"participants"`
	// LocalSteps is the range of E_k, the local steps of agent k.
	LocalSteps scenarios.IntRange `yaml:"local_steps"`
	// Batch is the range of B_k, the mini-batch size of agent k.
	Batch scenarios.IntRange `yaml:"batch"`
	// BatchSampling is without-replacement or with-replacement.
	BatchSampling string `yaml:"batch_sampling"`
	// Schedule is per-agent (E_k, B_k drawn once) or per-round.
	Schedule string `yaml:"schedule"`
	// Normalized divides the local step by E_k (the thesis); false gives
	// the original FedAvg step.
	Normalized bool `yaml:"normalized"`
	// Server is the server behaviour: mean (eq. 1.31), median,
	// trimmed-mean, krum, or the asynchronous fedasync and fedbuff, with
	// their parameters.
	Server scenarios.Behaviour `yaml:"server" slot:"fedavg.server"`
	// Client is the agents' local objective and solver: sgd (eq. 1.30) or
	// fedprox, with their parameters.
	Client scenarios.Behaviour `yaml:"client" slot:"fedavg.client"`
	// Collect is how a synchronous server ends a round: all, deadline or
	// first-k (docs/systems.md).
	Collect scenarios.Behaviour `yaml:"collect" slot:"fedavg.collect"`
	// Adversary makes a fraction of the agents adversaries: none,
	// sign-flip, scaled, gaussian, label-flip or free-rider.
	Adversary scenarios.Behaviour `yaml:"adversary" slot:"fedavg.adversary"`
	// Compress is how the agents compress their replies: none, top-k,
	// qsgd or signsgd (compress.go).
	Compress scenarios.Behaviour `yaml:"compress" slot:"fedavg.compress"`
	// UplinkBytes adds the column uplink_bytes: the bytes of the replies
	// the agents have sent, an axis every metric is also drawn against.
	UplinkBytes bool `yaml:"uplink_bytes"`
	// Importance selects importance sampling of agents and data (thesis
	// Algorithm 2.1); uniform policies are plain FedAvg.
	Importance Importance `yaml:"importance"`
	// ClientMetrics adds the spread of the global model's loss (and
	// accuracy) over the agents' own data to the metrics
	// (clientmetrics.go).
	ClientMetrics bool `yaml:"client_metrics"`
}

// Importance is the section algorithm.fedavg.importance: how the server
// samples agents and the agents sample their data (thesis §2.4).
type Importance struct {
	// Agents is the server's policy for p_k: uniform, optimal (eq. 2.48 at
	// w^o), adaptive (eq. 2.51, probing every agent every round), partial
	// (eq. 2.53, from the participants' reports) or fixed (Probabilities).
	Agents string `yaml:"agents"`
	// Data is every agent's policy for p_n^(k): uniform, optimal (eq. 2.46),
	// adaptive (eq. 2.50) or partial (eq. 2.54).
	Data string `yaml:"data"`
	// Probabilities are the p_k of the fixed agent policy, one per agent,
	// summing to one.
	Probabilities []float64 `yaml:"probabilities,omitempty"`
	// RandomOrder shuffles the population before systematic selection
	// (Hartley and Rao's original scheme); the thesis keeps the index order.
	RandomOrder bool `yaml:"random_order"`
}

func fedavgDefaults(*scenarios.Scenario) any {
	return &FedAvg{
		Participation: "without-replacement",
		Participants:  10,
		LocalSteps:    scenarios.IntRange{Min: 1, Max: 1},
		Batch:         scenarios.IntRange{Min: 1, Max: 1},
		BatchSampling: "without-replacement",
		Schedule:      "per-agent",
		Normalized:    true,
		Server:        scenarios.NewBehaviour(afedavg.ServerSlot, "mean"),
		Client:        scenarios.NewBehaviour(afedavg.ClientSlot, "sgd"),
		Collect:       scenarios.NewBehaviour(afedavg.CollectSlot, "all"),
		Adversary:     scenarios.NewBehaviour(afedavg.AdversarySlot, "none"),
		Compress:      scenarios.NewBehaviour(afedavg.CompressSlot, "none"),
		Importance:    Importance{Agents: "uniform", Data: "uniform"},
	}
}

// fedavgComplete caps the default number of participants at the number of
// agents.
func fedavgComplete(sc *scenarios.Scenario, set func(string) bool) {
	fa := fedavgParams(sc)
	if !set("algorithm.fedavg.participants") {
		fa.Participants = min(fa.Participants, sc.Data.Agents)
	}
	completeFedAvgPrivacy(sc, set)
	completeSampleAudit(sc, set)
}

func fedavgParams(sc *scenarios.Scenario) *FedAvg { return sc.Algorithm.Params.(*FedAvg) }

func validateFedAvg(v *scenarios.Validator, sc *scenarios.Scenario) {
	fa := fedavgParams(sc)
	if sc.Data.Agents > afedavg.MaxAgents {
		v.Fail("data.agents", "FedAvg runs at most %d agents (its actors have 32-bit IDs), got %d", afedavg.MaxAgents, sc.Data.Agents)
	}
	_, err := fedavg.ParseParticipation(fa.Participation)
	v.Parse("algorithm.fedavg.participation", err)
	v.AtLeast("algorithm.fedavg.participants", fa.Participants, 1)
	if fa.Participation == fedavg.Full.String() {
		v.Unused("algorithm.fedavg.participants", "participation full takes every agent")
	}
	if fa.Participation == fedavg.WithoutReplacement.String() && fa.Participants > sc.Data.Agents {
		v.Fail("algorithm.fedavg.participants", "%d agents cannot be sampled without replacement from data.agents = %d", fa.Participants, sc.Data.Agents)
	}
	if fa.Participation == fedavg.Poisson.String() && fa.Participants > sc.Data.Agents {
		v.Fail("algorithm.fedavg.participants", "under participation poisson it is the expected number L of agents per round, each agent taking part with probability q = L/K ≤ 1, but data.agents = %d < %d", sc.Data.Agents, fa.Participants)
	}
	v.IntRange("algorithm.fedavg.local_steps", fa.LocalSteps, 1)
	v.IntRange("algorithm.fedavg.batch", fa.Batch, 1)
	v.OneOf("algorithm.fedavg.batch_sampling", fa.BatchSampling, []string{"without-replacement", "with-replacement"})
	if fa.BatchSampling == "without-replacement" && fa.Batch.Max > sc.Data.Samples.Min {
		v.Fail("algorithm.fedavg.batch", "mini-batches of up to %d distinct samples need every agent to hold that many, but data.samples can be as low as %d", fa.Batch.Max, sc.Data.Samples.Min)
	}
	_, err = fedavg.ParseSchedule(fa.Schedule)
	v.Parse("algorithm.fedavg.schedule", err)
	draft := draftConfig(sc)
	checkBehaviours(draft, fa, func(field, msg string) { v.Fail(field, "%s", msg) })
	validateImportance(v, sc, fa)
	validateFedAvgSystems(v, sc, fa, draft)
	validateCompress(v, sc, fa, draft) // compress.go
	validateFedAvgPrivacy(v, sc, fa, draft)
}

// validateImportance checks the section algorithm.fedavg.importance and how
// it combines with participation and the schedule.
func validateImportance(v *scenarios.Validator, sc *scenarios.Scenario, fa *FedAvg) {
	const field = "algorithm.fedavg.importance"
	im := &fa.Importance
	agents, err := fedavg.ParsePolicy(im.Agents)
	v.Parse(field+".agents", err)
	v.OneOf(field+".data", im.Data, []string{"uniform", "optimal", "adaptive", "partial"})
	if err != nil {
		return
	}
	switch {
	case agents != fedavg.Uniform && fa.Participation == fedavg.Full.String():
		v.Fail(field+".agents", "policy %s needs partial participation: with algorithm.fedavg.participation full every p_k = 1/K", im.Agents)
	case agents != fedavg.Uniform && fa.Participation == fedavg.Poisson.String():
		v.Fail(field+".agents", "policy %s draws a fixed number of agents with unequal probabilities, which algorithm.fedavg.participation poisson does not", im.Agents)
	case (agents == fedavg.Optimal || agents == fedavg.Adaptive || agents == fedavg.Partial) && fa.Schedule == fedavg.PerRound.String():
		v.Fail(field+".agents", "policy %s needs E_k and B_k fixed per agent (algorithm.fedavg.schedule per-agent): α_k = 3 + 6/(E_k B_k) enters p_k (thesis eq. 2.49)", im.Agents)
	}
	if agents != fedavg.Fixed {
		v.Absent(field+".probabilities", len(im.Probabilities) > 0, "only the fixed agent policy uses probabilities")
		return
	}
	p := im.Probabilities
	if len(p) != sc.Data.Agents {
		v.Fail(field+".probabilities", "policy fixed needs one probability per agent (data.agents = %d), got %d", sc.Data.Agents, len(p))
		return
	}
	var sum float64
	positive := 0
	for k, x := range p {
		v.NonNegative(fmt.Sprintf("%s.probabilities[%d]", field, k), x)
		sum += x
		if x > 0 {
			positive++
		}
	}
	// A list typed with a few decimals sums to one up to its rounding; 1e-9
	// accepts any float64 rounding and refuses every real mistake.
	if math.Abs(sum-1) > 1e-9 {
		v.Fail(field+".probabilities", "must sum to 1, got %v", sum)
	}
	if fa.Participation == fedavg.WithoutReplacement.String() && positive < fa.Participants {
		v.Fail(field+".probabilities", "only %d agents have a positive probability, fewer than the %d distinct participants of a round (algorithm.fedavg.participants)", positive, fa.Participants)
	}
}

// fedavgColumns are the metrics of a FedAvg run: the MSD of the global model
// (when there is an optimum) and, for classification, its test error,
// accuracy and cross-entropy.
func fedavgColumns(sc *scenarios.Scenario) []rundir.Column {
	cols := run.MSDColumns(sc, rundir.Column{Name: "msd", Decibel: true, Label: "MSD ‖w_i − w^o‖² (dB)"})
	cols = append(cols, run.ClassColumns(sc, "", "")...)
	cols = append(cols, clientColumns(sc)...)
	cols = append(cols, run.SystemsColumns(sc, fedavgFaulty(sc))...)
	cols = append(cols, uplinkColumns(sc)...)
	return append(cols, privacyColumns(sc, draftConfig(sc))...)
}

// fedavgConfig translates a curve's scenario into the algorithm's
// configuration.
func fedavgConfig(c *scenarios.CurveSpec) (*fedavg.Config, error) {
	sc := c.Scenario
	fa := fedavgParams(sc)
	cfg, err := clients.Config(c, "algorithm.fedavg", sc.Data.Agents, clients.Params{
		Participation: fa.Participation, Participants: fa.Participants, LocalSteps: fa.LocalSteps,
		Batch: fa.Batch, BatchSampling: fa.BatchSampling, Schedule: fa.Schedule, Normalized: fa.Normalized, Client: fa.Client})
	if err != nil {
		return nil, err
	}
	var failed error
	if field, err := applyBehaviours(cfg, fa); err != nil {
		return nil, c.Errorf(field, "%v", err)
	}
	if cfg.Importance.Agents, err = fedavg.ParsePolicy(fa.Importance.Agents); err != nil {
		return nil, c.Errorf("algorithm.fedavg.importance.agents", "%v", err)
	}
	if cfg.Importance.Data, err = fedavg.ParsePolicy(fa.Importance.Data); err != nil {
		return nil, c.Errorf("algorithm.fedavg.importance.data", "%v", err)
	}
	cfg.Importance.Probabilities = fa.Importance.Probabilities
	cfg.Importance.RandomOrder = fa.Importance.RandomOrder
	// The behaviours check the whole section, importance sampling included
	// (DP-SGD refuses it).
	checkBehaviours(cfg, fa, func(field, msg string) {
		if failed == nil {
			failed = c.Errorf(field, "%s", msg)
		}
	})
	if failed != nil {
		return nil, failed
	}
	switch sc.Privacy.Scheme {
	case "model-noise":
		cfg.NoiseStd = math.Sqrt(sc.Privacy.Variance)
	case "update-noise":
		cfg.Share = fedavg.Updates
		cfg.NoiseStd = math.Sqrt(sc.Privacy.Variance)
	}
	applyPrivacy(c, cfg)
	return cfg, nil
}

// fedavgObserver turns the server's reported models into the metrics row of
// their round: the MSD against w^o and, for classification, the test metrics.
type fedavgObserver struct {
	t     *rundir.Table
	p     *inputs.Problem
	class [run.ClassMetrics]float64
	// clients fills the per-agent columns, nil without them.
	clients *clientLog
	sys     *run.SystemsLog // the systems columns and counts, nil without them
	priv    *privacyLog     // the privacy features' columns and details
	audit   *auditor        // the audit's canary clients, nil without them
	// sample is the audit's canary examples (audit_sgd.go), nil without
	// them.
	sample *sampleAuditor
	wire   *wireAudit // the dataset audit's auditor, nil without it
	uplink *uplinkLog // the bytes column
}

func (o *fedavgObserver) record(round int, w []float64) {
	row := o.t.Row(round)
	if row < 0 {
		return
	}
	col := 0
	if o.p.WOpt != nil {
		o.t.Set(row, 0, run.MSD(w, o.p.WOpt))
		col++
	}
	if o.p.Classify(o.class[:], w) {
		for i, v := range o.class {
			o.t.Set(row, col+i, v)
		}
	}
	o.uplink.record(o.t, row)
	if o.clients != nil {
		o.clients.record(row, w)
	}
}

// Observe implements actors.Observer.
func (o *fedavgObserver) Observe(_ actors.ID, round int, key string, v []float64) {
	o.observe(round, key, v)
}

func (o *fedavgObserver) observe(round int, key string, v []float64) {
	switch {
	case key == "model":
		o.record(round, v)
		if o.audit != nil {
			o.audit.release(round, v)
		}
		if o.sample != nil {
			o.sample.release(round, v)
		}
	case key == fedavg.ObsAuditSteps && o.sample != nil:
		o.sample.observe(round, v)
	case o.uplink.observe(key, v):
	case o.priv.observe(round, key, v):
	case o.sys != nil:
		o.sys.Observe(round, key, v)
	}
}

// runFedAvg executes one FedAvg run on the job's engine.
func runFedAvg(j *run.Job, p *inputs.Problem, sink *run.TraceSink) error {
	sc := j.Curve.Scenario
	cfg, err := fedavgConfig(j.Curve)
	if err != nil {
		return err
	}
	if p.WOpt == nil && (cfg.Importance.Agents == fedavg.Optimal || cfg.Importance.Data == fedavg.Optimal) {
		return j.Curve.Errorf("algorithm.fedavg.importance", "policy optimal evaluates gradients at w^o, and loss.kind %s has no minimizer w^o", sc.Loss.Kind)
	}
	cfg.Importance.Optimum = p.WOpt
	cfg.Hold = fedavgHold(sc, p.Sets != nil)
	if j.Run == 0 {
		if err := fedavgDetails(j, cfg, p); err != nil {
			return err
		}
	}
	K := p.Data.Agents()
	w0 := make([]float64, p.Loss.Dim(p.Data.Set(0).Dim))
	cols := run.Columns(sc)
	obs := &fedavgObserver{t: rundir.NewTable(sc.Iterations, sc.Output.Every, len(cols)), p: p, uplink: newUplinkLog(cols)}
	obs.sys = run.NewSystemsLog(sc, obs.t, cols)
	obs.clients = newClientLog(p, obs.t, cols)
	obs.priv = newPrivacyLog(sc, cfg, len(w0), obs.t, cols)
	obs.priv.minSamples = fedavg.LedgerSamples(cfg, p.Data)
	applyAudit(sc.Privacy.Audit, cfg, sc.Seed, len(w0), j.CanaryIn())
	if cfg.DP.Audit.Active() {
		obs.audit = newAuditor(sc.Privacy.Audit, cfg, j.RunSeed, w0, len(obs.t.Iterations), obs.t)
	}
	obs.sample = newSampleAuditor(j, cfg, p, w0, obs.t)
	if obs.wire, p, err = startWireAudit(j, p, cfg); err != nil {
		return err
	}
	obs.record(0, w0)
	j.Table = obs.t
	fa := fedavgParams(sc)
	systemsRun := scenarios.UsesSystems(sc) || cfg.Eventful()
	var model *systems.Model
	if systemsRun {
		if model, err = inputs.SystemsModel(j.Context(), j.Curve, j.Dir); err != nil {
			return err
		}
	}
	if j.Opts.Engine == run.Reference {
		if err := fedavgReferenceServer(j.Curve); err != nil {
			return err
		}
		if !systemsRun {
			if err := reference.ReferenceTapped(j.Context(), *cfg, p.Data, p.Loss, w0, j.RunSeed, sc.Iterations, obs.observe, obs.wire.tap()); err != nil {
				return err
			}
			return fedavgAccount(j, p, cfg, obs, fa.Server.Kind)
		}
		if cfg.SecAgg != nil {
			return j.Curve.Errorf(scenarios.FieldSecureAggregation, "the reference engine runs secure aggregation's machines without the systems model only (the scenario sets %s): run it with --engine actors", systemsCause(sc, cfg))
		}
		err = reference.SimulateContext(j.Context(), *cfg, p.Data, p.Loss, w0, j.RunSeed, sc.Iterations, reference.SimOptions{Model: model, Observe: obs.observe})
		if err != nil {
			return err
		}
	} else {
		r := actors.NewRun(j.ActorOptions(obs, sink))
		defer r.Close()
		setup := afedavg.Setup{
			Config: cfg, Data: p.Data, Loss: p.Loss, W0: w0, Rounds: sc.Iterations,
			Server: fa.Server.Kind, ServerParams: fa.Server.Params, GradientTime: sc.Network.GradientTime,
		}
		if systemsRun {
			setup.Fleet = model.Fleet(j.RunSeed, K, fedavg.AgentName)
		}
		attach := obs.wire.spawn(r)
		sched, err := afedavg.Spawn(r, setup)
		if err != nil {
			return err
		}
		if err := attach(sched); err != nil {
			return err
		}
		if err := r.Execute(sched, &msg.Start{}); err != nil {
			return err
		}
		j.Finish(r)
	}
	if systemsRun {
		if d := obs.sys.Finish(j, model, K); d != nil && cfg.Adversarial() {
			bad := cfg.ChooseAdversaries(func() *rand.Rand { return rng.New(j.RunSeed, fedavg.AdversaryOwner, fedavg.AdversaryPurpose) }, K)
			var ids []int
			for k, b := range bad {
				if b {
					ids = append(ids, k)
				}
			}
			d["adversaries"] = ids
		}
	}
	return fedavgAccount(j, p, cfg, obs, fa.Server.Kind)
}

// fedavgAccount writes what a run reports of its privacy: the columns and
// details of the privacy features and, under DP, its guarantees and audit;
// otherwise the accountant of the privacy schemes.
func fedavgAccount(j *run.Job, p *inputs.Problem, cfg *fedavg.Config, obs *fedavgObserver, server string) error {
	if w := obs.stallWarning(j.Curve.Scenario, cfg); w != "" {
		j.Stats.Warnings = append(j.Stats.Warnings, w)
	}
	obs.priv.finish(j)
	if obs.sample != nil {
		if err := obs.sample.record(j); err != nil {
			return err
		}
	}
	if err := obs.wire.record(j, obs.t); err != nil {
		return err
	}
	if cfg.DP.Mode == fedavg.NoDP {
		if _, private := cfg.Client.(fedavg.PrivateClient); private {
			dpReport(j, cfg, obs.priv)
		}
		return j.AccountFor(p, fedavgExposure(cfg, server))
	}
	dpReport(j, cfg, obs.priv)
	if obs.audit != nil {
		obs.audit.record(j, obs.priv)
	}
	return nil
}

// fedavgExposure describes FedAvg to the accountant: one server, agent 0's
// reply seen in every round by an observer of its link, and, for an
// observer of the global models alone, a mean of L replies from agents drawn
// without replacement (a fraction L/K, or all of them) — unless the server
// combines them otherwise than by their mean.
func fedavgExposure(cfg *fedavg.Config, server string) run.Exposure {
	e := run.Exposure{Agents: 1, Federated: true, Messages: 1}
	if _, mean := cfg.Rule.(fedavg.MeanRule); cfg.Rule != nil && !mean || cfg.Async.Mode != fedavg.Sync {
		e.NoSampling = fmt.Sprintf("server %s does not release the mean of the round's replies, and the amplification bound is for a mean", server)
		return e
	}
	if cfg.Importance.Agents != fedavg.Uniform {
		e.NoSampling = "agents are drawn with unequal probabilities (importance sampling), and the amplification bound is for a uniform sample"
		return e
	}
	switch cfg.Participation {
	case fedavg.Poisson:
		e.NoSampling = "agents take part by Poisson sampling, so a round averages a random number n of replies (agent 0 weighs 1/n, the noise on the mean is σ/√n), and the amplification bound is for a mean of a fixed number"
	case fedavg.WithoutReplacement:
		e.Fraction, e.Average = float64(cfg.Participants)/float64(cfg.Agents), cfg.Participants
	case fedavg.Full:
		e.Fraction, e.Average = 1, cfg.Agents
	default:
		e.NoSampling = "agents are drawn with replacement, so agent 0 may count several times in one mean"
	}
	return e
}

// fedavgDetails adds to the summary what run 0's data say about importance
// sampling: the gradient-noise constant σ_s² (thesis eq. 2.23) under uniform
// and optimal probabilities and the improvement of the MSD bound between them
// in dB, and, for least squares, the model drift ξ = max_k ‖w_k^o − w^o‖
// (Assumption 2.2) that Fig. 2.5 is parameterized by. Both come from one
// pass over the agents (inputs.Pass, which adds the solver's gradient norm
// when it is still due), each agent's share computed on every core without
// allocating — w_k^o by optimum.LocalLeastSquares — and combined in agent
// order.
func fedavgDetails(j *run.Job, cfg *fedavg.Config, p *inputs.Problem) error {
	d := map[string]any{}
	noise := cfg.Schedule == fedavg.PerAgent && p.WOpt != nil
	drift := p.Loss.Kind == loss.LeastSquares && p.WOpt != nil
	if !noise && !drift {
		j.Stats.Details["importance"] = d
		return nil
	}
	type share struct {
		noise fedavg.NoiseTerm
		xi    float64
		err   error
	}
	var sum fedavg.NoiseSum
	var xi float64
	err := inputs.Pass(j.Context(), p, func(lo int, sets []*data.Set, out []share) {
		var scratch fedavg.NoiseScratch
		var eq *optimum.NormalEquations
		wk := make([]float64, len(p.WOpt))
		for i, set := range sets {
			k, s := lo+i, share{}
			if noise {
				s.noise = cfg.NoiseTermWith(k, set, p.Loss, p.WOpt, j.RunSeed, &scratch)
			}
			if drift {
				if eq == nil {
					eq = optimum.NewNormalEquations(set.Dim)
				}
				if err := optimum.LocalLeastSquares(wk, eq, set, p.Loss.Rho); err != nil {
					s.err = j.Curve.Errorf("data", "agent %d's local minimizer w_k^o: %v", k, err)
				} else {
					s.xi = floats.Distance(wk, p.WOpt, 2)
				}
			}
			out[i] = s
		}
	}, func(_ int, _ *data.Set, s *share) error {
		sum.Add(s.noise)
		xi = math.Max(xi, s.xi)
		return s.err
	})
	if err != nil {
		return err
	}
	if noise {
		uniform, optimal := sum.Bound(cfg)
		d["noise_bound_uniform"] = uniform
		d["noise_bound_optimal"] = optimal
		d["bound_gain_db"] = rundir.Decibel(uniform / optimal)
	}
	if drift {
		d["xi"] = xi
	}
	j.Stats.Details["importance"] = d
	return nil
}
