package diffusion

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	adiffusion "maple/actors/diffusion"
	"maple/algorithms/diffusion"
	"maple/algorithms/systems"
	"maple/rundir"
	"maple/scenarios"
	"maple/scenarios/inputs"
	"maple/scenarios/run"
	"maple/topology"
)

// This file wires decentralized learning to the systems model
// (docs/systems.md): time-varying graphs (links down, agents dropping out or
// crashing), local graph-homomorphic masks whose partner is down, and the
// asynchronous mode.

// diffusionSystems are the systems fields decentralized learning models.
var diffusionSystems = []string{scenarios.FieldStepTime, scenarios.FieldClasses, scenarios.FieldLoss, scenarios.FieldDuplicate,
	scenarios.FieldDropout, scenarios.FieldCrashes, scenarios.FieldLinkFailure, scenarios.FieldXAxis}

// diffusionDynamic reports whether a synchronous scenario's graph varies
// from round to round: links fail, or agents drop out or crash.
func diffusionDynamic(sc *scenarios.Scenario) bool {
	n := &sc.Network
	dynamic := sc.Topology.LinkFailure > 0 || n.Dropout > 0 || n.Crashes != nil
	for _, c := range n.Classes {
		dynamic = dynamic || c.Dropout != nil && *c.Dropout > 0
	}
	return dynamic && diffusionParams(sc).Mode != "async"
}

// diffusionUsesSystems reports whether a run needs the systems model.
func diffusionUsesSystems(sc *scenarios.Scenario) bool {
	return scenarios.UsesSystems(sc) || diffusionParams(sc).Mode == "async"
}

// validateDiffusionSystems checks the asynchronous mode, the dropped-partner
// policy and how the systems fields combine with them.
func validateDiffusionSystems(v *scenarios.Validator, sc *scenarios.Scenario, d *Diffusion) {
	v.OneOf("algorithm.diffusion.mode", d.Mode, []string{"sync", "async"})
	v.OneOf("algorithm.diffusion.dropped_partner", d.DroppedPartner, diffusion.PartnerPolicyNames())
	n := &sc.Network
	if d.Mode == "async" {
		if d.Strategy != "atc" {
			v.Fail("algorithm.diffusion.strategy", "mode async runs strategy atc, not %s", d.Strategy)
		}
		if s := sc.Privacy.Scheme; s != "none" && s != "random" {
			v.Fail("privacy.scheme", "%s noise cancels only when every receiver combines the same round's messages: mode async takes none or random", s)
		}
		v.Absent("topology.link_failure", sc.Topology.LinkFailure != 0, "mode async has no rounds; links fail per message with network.loss")
		v.NonNegative("algorithm.diffusion.wait", d.Wait)
	} else {
		v.Absent("algorithm.diffusion.wait", d.Wait != 0, "only mode async waits before combining")
		why := "synchronous agents wait for every share, so a lost one would stall the run: use topology.link_failure (links down for a round, announced) or mode async"
		v.Absent("network.loss", n.Loss != 0, why)
		v.Absent("network.duplicate", n.Duplicate != 0, why)
	}
	dynamic := diffusionDynamic(sc)
	if dynamic {
		if sc.Topology.Weights == "file" {
			v.Fail("topology.weights", "a time-varying graph recomputes its weights over the live links by a rule (metropolis, lazy-metropolis, averaging); weights file has none")
		}
		if sc.Privacy.Scheme == "local-graph-homomorphic" && sc.Privacy.Keys == "paper" {
			v.Fail("privacy.keys", "paper keys are exchanged every iteration along the base graph; time-varying graphs take secure or oracle keys")
		}
		if sc.Privacy.Scheme == "graph-homomorphic" && sc.Privacy.Form == "ratio" {
			v.Fail("privacy.form", "the ratio form needs a doubly-stochastic matrix with the base graph's support; time-varying graphs take ratio-free")
		}
	}
	v.Absent("algorithm.diffusion.audit", d.Audit != nil && (dynamic || d.Mode == "async"),
		"the eavesdropper audits the synchronous protocol on a fixed graph, not a time-varying or asynchronous one")
	v.Absent("algorithm.diffusion.dropped_partner", d.DroppedPartner != "ignore" && (!dynamic || sc.Privacy.Scheme != "local-graph-homomorphic"),
		"it applies to local graph-homomorphic masks on a time-varying graph (topology.link_failure, network.dropout or network.crashes)")
}

// diffusionSystemsColumns are the systems columns of a decentralized run:
// the virtual time, and on a time-varying graph whether the live graph was
// connected and the fraction of links up (and, with local graph-homomorphic
// masks, the largest coordinate of the residual the receivers' aggregates
// carry).
func diffusionSystemsColumns(sc *scenarios.Scenario) []rundir.Column {
	cols := run.TimeColumns(sc)
	if diffusionDynamic(sc) {
		cols = append(cols,
			rundir.Column{Name: "connected", Label: "live graph connected (fraction of runs)"},
			rundir.Column{Name: "live_links", Label: "fraction of the links up"})
		if sc.Privacy.Scheme == "local-graph-homomorphic" {
			cols = append(cols, rundir.Column{Name: "mask_residual", Label: "largest |coordinate| of the masks left uncancelled"})
		}
	}
	return cols
}

// diffusionLog records the systems side of one decentralized run: the time
// of each round, the live graphs and the masks left uncancelled.
type diffusionLog struct {
	t                         *rundir.Table
	timeCol, linkCol, maskCol int
	rounds, disconnected      int
	down                      int
	liveLinks                 float64
	pairs                     int
	maskRounds                map[int]bool
	residual                  map[[3]int][][]float64 // (round, receiver, stage) → reports, by sender
	maxResidual               float64
	lastTime                  float64
}

func newDiffusionLog(sc *scenarios.Scenario, t *rundir.Table, cols []rundir.Column) *diffusionLog {
	l := &diffusionLog{t: t, timeCol: -1, linkCol: -1, maskCol: -1, maskRounds: map[int]bool{}, residual: map[[3]int][][]float64{}}
	for i, c := range cols {
		switch c.Name {
		case "time":
			l.timeCol = i
		case "connected":
			l.linkCol = i
		case "mask_residual":
			l.maskCol = i
		}
	}
	if l.timeCol >= 0 {
		t.Set(0, l.timeCol, 0)
	}
	if l.linkCol >= 0 {
		t.Set(0, l.linkCol, 1)
		t.Set(0, l.linkCol+1, 1)
	}
	if l.maskCol >= 0 {
		t.Set(0, l.maskCol, 0)
	}
	return l
}

func (l *diffusionLog) time(round int, t float64) {
	l.lastTime = t
	if row := l.t.Row(round); row >= 0 && l.timeCol >= 0 {
		l.t.Set(row, l.timeCol, t)
	}
}

// live records a round's live graph: [connected, live edges, edges, down].
func (l *diffusionLog) live(round int, v []float64) {
	l.rounds++
	if v[0] == 0 {
		l.disconnected++
	}
	if v[3] > 0 {
		l.down++
	}
	frac := 1.0
	if v[2] > 0 {
		frac = v[1] / v[2]
	}
	l.liveLinks += frac
	if row := l.t.Row(round); row >= 0 && l.linkCol >= 0 {
		l.t.Set(row, l.linkCol, v[0])
		l.t.Set(row, l.linkCol+1, frac)
	}
}

// report records what the agents report about their masks.
func (l *diffusionLog) report(round, agent int, key string, v []float64) {
	switch key {
	case diffusion.KeyUncancelled:
		l.pairs += int(v[0])
		l.maskRounds[round] = true
	case diffusion.KeyMaskResidual:
		k := [3]int{round, int(v[0]), int(v[1])}
		l.residual[k] = append(l.residual[k], append([]float64{float64(agent)}, v[2:]...))
	}
}

// finishMasks sums each receiver's mask reports in ascending sender order
// and keeps each round's largest coordinate.
func (l *diffusionLog) finishMasks() {
	keys := make([][3]int, 0, len(l.residual))
	for k := range l.residual {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b [3]int) int {
		for i := range a {
			if a[i] != b[i] {
				return a[i] - b[i]
			}
		}
		return 0
	})
	perRound := map[int]float64{}
	for _, k := range keys {
		reports := l.residual[k]
		slices.SortStableFunc(reports, func(a, b []float64) int { return int(a[0] - b[0]) })
		sum := make([]float64, len(reports[0])-1)
		for _, r := range reports {
			for j, x := range r[1:] {
				sum[j] += x
			}
		}
		for _, x := range sum {
			perRound[k[0]] = max(perRound[k[0]], math.Abs(x))
		}
	}
	for round, m := range perRound {
		l.maxResidual = max(l.maxResidual, m)
		if row := l.t.Row(round); row >= 0 && l.maskCol >= 0 {
			l.t.Set(row, l.maskCol, m)
		}
	}
	if l.maskCol >= 0 {
		for r, it := range l.t.Iterations {
			if _, ok := perRound[it]; !ok {
				l.t.Set(r, l.maskCol, 0)
			}
		}
	}
}

// details returns the summary's systems facts of the run.
func (l *diffusionLog) details(sc *scenarios.Scenario) map[string]any {
	d := map[string]any{}
	if l.lastTime > 0 {
		d["virtual_time"] = l.lastTime
		d["virtual_time_per_round"] = l.lastTime / float64(sc.Iterations)
	}
	if l.rounds > 0 {
		d["disconnected_rounds"] = float64(l.disconnected) / float64(l.rounds)
		d["rounds_with_agents_down"] = l.down
		d["mean_live_links"] = l.liveLinks / float64(l.rounds)
	}
	if sc.Privacy.Scheme == "local-graph-homomorphic" && l.rounds > 0 {
		d["lgh"] = map[string]any{
			"dropped_partner":         diffusionParams(sc).DroppedPartner,
			"uncancelled_pairs":       l.pairs,
			"rounds_with_uncancelled": len(l.maskRounds),
			"residual_max":            l.maxResidual,
		}
	}
	return d
}

// diffusionDynamics returns the time-varying graph of a run: the topology's
// link failure and weight rule, and the devices that decide which agents are
// down.
func diffusionDynamics(sc *scenarios.Scenario, m *systems.Model, runSeed uint64, agents int) *diffusion.Dynamics {
	d := &diffusion.Dynamics{Failure: sc.Topology.LinkFailure, Rule: func(g *topology.Graph) *mat.Dense { return inputs.Weights(sc.Topology.Weights, g) }}
	if m.Drops() {
		d.Devices = m.Devices(runSeed, agents, diffusion.AgentName)
	}
	return d
}

// diffusionAsync returns the asynchronous setup of a run, or nil.
func diffusionAsync(sc *scenarios.Scenario) *adiffusion.Async {
	if d := diffusionParams(sc); d.Mode == "async" {
		return &adiffusion.Async{Wait: d.Wait}
	}
	return nil
}

// asyncDiffusionReference runs the event-driven reference of asynchronous
// ATC, assembling each step's network view and time as the actor run's
// collector does.
func asyncDiffusionReference(j *run.Job, cfg diffusion.Config, prob diffusion.Problem, m *systems.Model, obs *diffusionObserver, log *diffusionLog) error {
	P := len(prob.Sets)
	rows := map[int][][]float64{}
	seen := map[int]int{}
	times := map[int]float64{}
	return diffusion.AsyncReferenceContext(j.Context(), cfg, prob, j.RunSeed, j.Curve.Scenario.Iterations, diffusion.AsyncOptions{
		Model: m, Wait: diffusionParams(j.Curve.Scenario).Wait,
		Observe: func(round, agent int, key string, v []float64) {
			switch key {
			case diffusion.KeyAsyncTime:
				times[round] = max(times[round], v[0])
			case diffusion.KeyAsyncModel:
				if rows[round] == nil {
					rows[round] = make([][]float64, P)
				}
				rows[round][agent] = slices.Clone(v)
				if seen[round]++; seen[round] == P {
					log.time(round, times[round])
					obs.models(round, rows[round])
					delete(rows, round)
					delete(times, round)
				}
			}
		}})
}
