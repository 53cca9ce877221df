package fedavg

import (
	"fmt"
	"math"

	"maple/algorithms/fedavg"
	"maple/privacy/accountant"
	"maple/privacy/clip"
	"maple/privacy/fixedpoint"
	"maple/privacy/ledger"
	"maple/privacy/secagg"
	"maple/rundir"
	"maple/scenarios"
	"maple/scenarios/run"
)

// This file wires the privacy features FedAvg models (Family.Privacy) to
// the scenario: privacy.secure_aggregation (SecAgg, SecAgg+, or none for
// the cost columns alone) and privacy.dp (DP-FedAvg, central or
// distributed, with adaptive clipping and the one-run audit) — their
// defaults that depend on the round's clients, their checks against the
// rest of the section, their translation into fedavg.Config, and what a run
// reports of them: the cost and ε columns and the summary's details.

// fedavgPrivacy lists the privacy features FedAvg models.
var fedavgPrivacy = []string{scenarios.FieldSecureAggregation, scenarios.FieldDP}

// draws returns the clients of a round: L, or every agent under full
// participation.
func draws(sc *scenarios.Scenario) int {
	fa := fedavgParams(sc)
	if fa.Participation == fedavg.Full.String() {
		return sc.Data.Agents
	}
	return fa.Participants
}

// poisson reports whether the scenario's rounds are of random size
// (participation poisson).
func poisson(sc *scenarios.Scenario) bool {
	return fedavgParams(sc).Participation == fedavg.Poisson.String()
}

// completeFedAvgPrivacy fills the defaults of the privacy sections that
// depend on the round's clients: SecAgg's k = n − 1 and SecAgg+'s
// 2⌈log₂ n⌉ (fedavg.RoundNeighbours), a majority of each client's share
// holders as the threshold (fedavg.RoundThreshold), and the count noise
// L/20 of adaptive clipping (at least z, so that the update query keeps
// some of the budget). Under poisson participation k and t are left to
// each round (0), whose n is its own.
func completeFedAvgPrivacy(sc *scenarios.Scenario, set func(string) bool) {
	n := draws(sc)
	const field = scenarios.FieldSecureAggregation
	if sa := sc.Privacy.SecureAggregation; sa != nil && sa.Protocol != "none" && !poisson(sc) {
		if !set(field + ".neighbours") {
			sa.Neighbours = fedavg.RoundNeighbours(n, sa.Protocol == "secagg+")
		}
		if !set(field + ".threshold") {
			sa.Threshold = fedavg.RoundThreshold(sa.Neighbours)
		}
	}
	if d := sc.Privacy.DP; d != nil {
		// The accountants of distributed DP bound replace-one neighbours in
		// Rényi DP only (Kairouz et al. 2021); central DP is stated as the
		// literature states DP-FedAvg: add/remove, by the tightest
		// accountant.
		if !set(scenarios.FieldDP + ".relation") {
			d.Relation = "add-remove"
			if d.Mode == "distributed" {
				d.Relation = "replace-one"
			}
		}
		if !set(scenarios.FieldDP + ".accountant") {
			d.Accountant = "pld"
			if d.Mode == "distributed" {
				d.Accountant = "rdp"
			}
		}
	}
	if d := sc.Privacy.DP; d != nil && d.AdaptiveClip != nil && !set(scenarios.FieldDP+".adaptive_clip.count_noise") {
		d.AdaptiveClip.CountNoise = math.Max(float64(n)/20, d.NoiseMultiplier)
	}
}

// validateFedAvgPrivacy checks the privacy sections against the rest of
// the scenario, naming the field at fault.
func validateFedAvgPrivacy(v *scenarios.Validator, sc *scenarios.Scenario, fa *FedAvg, draft *fedavg.Config) {
	validateFedAvgAudit(v, sc)
	sa, d := sc.Privacy.SecureAggregation, sc.Privacy.DP
	secure := sa != nil && sa.Protocol != "none"
	n := draws(sc)
	const sfield = scenarios.FieldSecureAggregation
	if sa != nil && sa.Protocol == "none" {
		for _, f := range []string{"threshold", "neighbours", "bits", "clip", "timeout"} {
			v.Unused(sfield+"."+f, "protocol none sends the replies in the clear")
		}
	} else if poisson(sc) {
		for _, f := range []string{"neighbours", "threshold"} {
			v.Unused(sfield+"."+f, "under algorithm.fedavg.participation poisson each round's is derived from its own number of clients n (k = n − 1 for secagg, 2⌈log₂ n⌉ for secagg+; t = ⌊(k + 1)/2⌋ + 1)")
		}
	} else {
		// completeFedAvgPrivacy derives them from the curve's protocol and
		// clients: the resolved copy derives them again.
		v.Derived(sfield + ".neighbours")
		v.Derived(sfield + ".threshold")
	}
	v.Derived(scenarios.FieldDP + ".adaptive_clip.count_noise")
	v.Derived(scenarios.FieldDP + ".relation")
	v.Derived(scenarios.FieldDP + ".accountant")
	// What only the mean of a round's replies from distinct clients allows:
	// a sum that secure aggregation reveals, or that DP-FedAvg noises.
	if secure || d != nil {
		what := "secure aggregation reveals only the sum of a round's replies"
		if !secure {
			what = "DP-FedAvg noises the sum of a round's clipped updates"
		}
		if _, mean := draft.Rule.(fedavg.MeanRule); draft.Rule != nil && !mean || draft.Async.Mode != fedavg.Sync {
			v.Fail(fieldServer, "%s: server %s does not combine them by their mean (use mean)", what, fa.Server.Kind)
		}
		if fa.Participation == fedavg.WithReplacement.String() {
			v.Fail("algorithm.fedavg.participation", "%s from distinct clients: with-replacement may draw an agent twice in a round", what)
		}
		if fa.Importance.Agents != "uniform" || fa.Importance.Data != "uniform" {
			v.Fail("algorithm.fedavg.importance", "%s: importance sampling is not combined with it", what)
		}
	}
	if secure {
		validateSecAgg(v, sc, sa, n)
	}
	if d != nil {
		validateDP(v, sc, d, secure, n)
	}
}

// validateSecAgg checks SecAgg's and SecAgg+'s parameters for n clients
// per round.
func validateSecAgg(v *scenarios.Validator, sc *scenarios.Scenario, sa *scenarios.SecureAggregation, n int) {
	const field = scenarios.FieldSecureAggregation
	if n < 2 {
		v.Fail(field, "secure aggregation needs at least 2 clients per round, got %d", n)
		return
	}
	if poisson(sc) {
		// Each round's k and t are its own (fedavg.RoundNeighbours); its
		// grid must hold a sum of as many as every agent.
		if _, err := fixedpoint.New(sa.Bits, sa.Clip, sc.Data.Agents); err != nil {
			v.Fail(field+"."+fieldOf(err), "%v (under algorithm.fedavg.participation poisson a round may hold all data.agents = %d agents)", trimField(err), sc.Data.Agents)
		}
		validateTimeout(v, sc, sa)
		return
	}
	if sa.Protocol == "secagg" && sa.Neighbours != n-1 {
		v.Fail(field+".neighbours", "protocol secagg shares with all n − 1 = %d other clients of a round; a sparser graph is protocol secagg+", n-1)
	}
	if sa.Neighbours < 1 || sa.Neighbours > n-1 {
		v.Fail(field+".neighbours", "k must lie in [1, n − 1] = [1, %d] for n = %d clients per round, got %d", n-1, n, sa.Neighbours)
	}
	if h := sa.Neighbours + 1; sa.Threshold < 2 || sa.Threshold > h {
		if sa.Protocol == "secagg" {
			v.Fail(field+".threshold", "t must lie in [2, n] = [2, %d] for n = %d clients per round, got %d", n, n, sa.Threshold)
		} else {
			v.Fail(field+".threshold", "t must lie in [2, k + 1] = [2, %d]: a client's shares have its k neighbours and itself as holders, got %d", h, sa.Threshold)
		}
	}
	enc, err := fixedpoint.New(sa.Bits, sa.Clip, n)
	if err != nil {
		v.Fail(field+"."+fieldOf(err), "%v (n = %d clients per round)", trimField(err), n)
		return
	}
	if d := sc.Privacy.DP; d != nil {
		// DP clips each update to norm C/μ, so no coordinate exceeds it: a
		// grid coarser than that cannot hold one level of any update.
		if g, bound := enc.Step(), d.Clip/sc.Algorithm.StepSize; g > bound {
			v.Fail(field+".bits", "%d bits and clip %v give a grid step γ = clip/L = %.3g (L = %d levels for n = %d clients per round) above C/μ = %.3g, the largest coordinate an update clipped by privacy.dp can have: every coordinate of every update would be rounded to 0 or ±γ, its rounding noise larger than itself; raise bits or lower clip", sa.Bits, sa.Clip, g, enc.Levels(), n, bound)
		}
	}
	if d := sc.Privacy.DP; d != nil && d.Mode == "distributed" {
		sigma := d.NoiseMultiplier * d.Clip / sc.Algorithm.StepSize / math.Sqrt(float64(n))
		switch g := enc.Step(); {
		case sigma < g:
			v.Fail(field+".bits", "%d bits and clip %v give a grid step γ = %.3g coarser than the noise σ = %.3g each client adds (z·C/(μ√n)): the distributed discrete Gaussian needs σ ≥ γ; raise bits or lower clip", sa.Bits, sa.Clip, g, sigma)
		case sigma/g > 1<<30:
			v.Fail(field+".bits", "%d bits and clip %v give a grid step γ = %.3g so fine that the noise each client adds spans σ/γ = %.3g steps, beyond the exact sampler's 2³⁰: lower bits or raise clip", sa.Bits, sa.Clip, g, sigma/g)
		}
	}
	validateTimeout(v, sc, sa)
}

// validateTimeout refuses phases without a timeout when clients can vanish
// mid-round.
func validateTimeout(v *scenarios.Validator, sc *scenarios.Scenario, sa *scenarios.SecureAggregation) {
	if sa.Timeout == 0 {
		if cause := dropCause(sc); cause != "" {
			v.Fail(scenarios.FieldSecureAggregation+".timeout", "clients can vanish mid-round (%s), and a phase without a timeout would wait for them forever: set one", cause)
		}
	}
}

// dropCause names a systems field that can make a client vanish, or "".
func dropCause(sc *scenarios.Scenario) string {
	n := &sc.Network
	switch {
	case n.Dropout > 0:
		return "network.dropout"
	case n.Crashes != nil:
		return "network.crashes"
	case n.Availability != "":
		return "network.availability"
	case n.Loss > 0:
		return "network.loss"
	}
	for i, c := range n.Classes {
		if c.Dropout != nil && *c.Dropout > 0 {
			return fmt.Sprintf("network.classes[%d].dropout", i)
		}
	}
	return ""
}

// fieldOf returns the field an error of package fixedpoint names ("bits",
// "clip") and trimField the rest of its message.
func fieldOf(err error) string {
	f, _, _ := cutField(err.Error())
	return f
}

func trimField(err error) string {
	_, rest, _ := cutField(err.Error())
	return rest
}

func cutField(s string) (field, rest string, ok bool) {
	for i := 0; i+1 < len(s); i++ {
		if s[i] == ':' && s[i+1] == ' ' {
			return s[:i], s[i+2:], true
		}
	}
	return "", s, false
}

// validateDP checks DP-FedAvg's parameters.
func validateDP(v *scenarios.Validator, sc *scenarios.Scenario, d *scenarios.DP, secure bool, n int) {
	const field = scenarios.FieldDP
	if sc.Privacy.Scheme != "none" {
		v.Fail(field, "DP-FedAvg adds its own noise to the sum of the clipped updates: privacy.scheme must be none, not %s", sc.Privacy.Scheme)
	}
	if d.Mode == "distributed" && !secure {
		v.Fail(field+".mode", "distributed noise is added in shares that only secure aggregation sums: set privacy.secure_aggregation (protocol secagg or secagg+)")
	}
	if poisson(sc) {
		switch {
		case d.Mode == "distributed":
			v.Fail(field+".mode", "%s", fedavg.PoissonDistributedDP)
		case secure:
			v.Fail(scenarios.FieldSecureAggregation, "%s", fedavg.PoissonSecureDP)
		}
	}
	rel, errRel := accountant.ParseRelation(d.Relation)
	kind, errKind := ledger.ParseKind(d.Accountant)
	if errRel == nil && errKind == nil && d.Mode != "" {
		draft := fedavg.Config{Agents: sc.Data.Agents, Participants: draws(sc), DP: fedavg.DP{NoiseMultiplier: d.NoiseMultiplier, Relation: rel}}
		draft.Participation, _ = fedavg.ParseParticipation(fedavgParams(sc).Participation)
		r := draft.Round(0, n)
		if d.Mode == "distributed" {
			r.Distributed = true // the grid and noise do not change what the accountants can bound
		}
		if err := ledger.Check(kind, r); err != nil {
			v.Fail(field+".accountant", "%s: %v", d.Accountant, err)
		}
	}
	if a := d.AdaptiveClip; a != nil {
		if poisson(sc) {
			v.Fail(field+".adaptive_clip", "%s", fedavg.PoissonAdaptiveClip)
		}
		if d.Mode != "central" || secure {
			v.Fail(field+".adaptive_clip", "the server adapts C from each update's norm, which it sees only under central DP without secure aggregation")
		}
		if !(a.CountNoise > d.NoiseMultiplier/2) {
			v.Fail(field+".adaptive_clip.count_noise", "σ_b must exceed z/2 = %v, or the count takes the whole noise budget (Andrew et al. 2021, §3.1), got %v", d.NoiseMultiplier/2, a.CountNoise)
		}
	}
}

// applyPrivacy translates the privacy sections into cfg.
func applyPrivacy(c *scenarios.CurveSpec, cfg *fedavg.Config) {
	p := &c.Scenario.Privacy
	if sa := p.SecureAggregation; sa != nil && sa.Protocol != "none" {
		cfg.SecAgg = &fedavg.SecureAggregation{Neighbours: sa.Neighbours, Threshold: sa.Threshold, Bits: sa.Bits, Clip: sa.Clip, Timeout: sa.Timeout,
			Sparse: sa.Protocol == "secagg+"}
	}
	d := p.DP
	if d == nil {
		return
	}
	mode, _ := fedavg.ParseDPMode(d.Mode) // the loader checked the name
	cfg.Share = fedavg.Updates
	rel, _ := accountant.ParseRelation(d.Relation) // the loader checked the names
	kind, _ := ledger.ParseKind(d.Accountant)
	cfg.DP = fedavg.DP{Mode: mode, Clip: d.Clip, NoiseMultiplier: d.NoiseMultiplier, Beta: d.Beta, Delta: d.Delta, Relation: rel, Accountant: kind}
	if a := d.AdaptiveClip; a != nil {
		cfg.DP.Adaptive = &clip.Adaptive{Quantile: a.Quantile, LearningRate: a.LearningRate, CountNoise: a.CountNoise}
	}
}

// privacyColumns are the columns of the privacy features: the traffic of a
// round per client and for the server (with secure aggregation's section,
// any protocol) and, when the run is timed, the round's virtual duration;
// the client-level ε after each round (DP-FedAvg) and the sample-level one
// (a DP-SGD client), each an axis the other metrics are also drawn against
// (accuracy against ε: the privacy–utility frontier along the training).
func privacyColumns(sc *scenarios.Scenario, draft *fedavg.Config) []rundir.Column {
	var cols []rundir.Column
	if sc.Privacy.SecureAggregation != nil {
		cols = append(cols,
			rundir.Column{Name: "client_bytes", Label: "bytes per client and round"},
			rundir.Column{Name: "server_bytes", Label: "server bytes per round"})
		if fedavgUsesSystems(sc) {
			cols = append(cols, rundir.Column{Name: "round_time", Label: "virtual time per round (s)"})
		}
	}
	if sc.Privacy.DP != nil {
		cols = append(cols, rundir.Column{Name: "epsilon", Label: "client-level ε", Axis: true})
	}
	if _, ok := draft.Client.(fedavg.PrivateClient); ok {
		cols = append(cols, rundir.Column{Name: "sample_epsilon", Label: "sample-level ε", Axis: true})
	}
	return cols
}

// privacyLog keeps what a run observes of its privacy features and writes
// their columns and details.
type privacyLog struct {
	sc     *scenarios.Scenario
	cfg    *fedavg.Config
	dim    int
	t      *rundir.Table
	col    map[string]int
	costs  [][]float64 // per round, the ObsSecAggCosts vector
	time   []float64   // per round, the server's clock at its end
	eps    [][2]float64
	failed []map[string]any
	enc    encodingLog
	incl   float64
	rounds int // rounds whose sum completed
	// minSamples is the smallest local dataset, the DP-SGD client with the
	// largest sampling rate.
	minSamples int
	// sizes are the rounds' numbers of clients.
	sizes *roundSizes
}

func newPrivacyLog(sc *scenarios.Scenario, cfg *fedavg.Config, dim int, t *rundir.Table, cols []rundir.Column) *privacyLog {
	l := &privacyLog{sc: sc, cfg: cfg, dim: dim, t: t, col: map[string]int{}, sizes: newRoundSizes(cfg, sc.Iterations),
		costs: make([][]float64, sc.Iterations+1), time: make([]float64, sc.Iterations+1), eps: make([][2]float64, sc.Iterations+1)}
	for i, c := range cols {
		switch c.Name {
		case "client_bytes", "server_bytes", "round_time", "epsilon", "sample_epsilon":
			l.col[c.Name] = i // the privacy features' columns only
		}
	}
	return l
}

// observe records a privacy observation; it reports whether the key was
// one. Times are recorded and passed on.
func (l *privacyLog) observe(round int, key string, v []float64) bool {
	in := round >= 0 && round <= l.sc.Iterations
	if l.sizes.observe(round, key, v) {
		return true
	}
	switch key {
	case fedavg.ObsSecAggCosts:
		if in {
			l.costs[round] = append([]float64(nil), v...)
		}
		l.enc.close(round)
	case fedavg.ObsSecAggEncoding:
		l.enc.observe(round, v)
	case fedavg.ObsSecAggIncluded:
		l.incl += v[0]
		l.rounds++
	case fedavg.ObsSecAggFailed:
		l.failed = append(l.failed, map[string]any{"round": round, "phase": secagg.Phase(v[0]).String(),
			"survivors": int(v[2]), "threshold": int(v[3]), "client": int(v[1])})
	case fedavg.ObsPrivacy:
		if in {
			l.eps[round] = [2]float64{v[0], v[1]}
		}
	case fedavg.ObsTime:
		if in {
			l.time[round] = v[0]
		}
		return false
	default:
		return false
	}
	return true
}

// encoder returns the fixed-point encoding of a round of L clients (every
// round's under fixed-size sampling; under Poisson participation each
// round's grid is that of its own n clients, and L's is the typical one).
func (l *privacyLog) encoder() fixedpoint.Encoder {
	scfg, _ := l.cfg.SecAggRound(1, l.cfg.Draws(), l.dim) // validated
	return scfg.Encoder
}

// roundCosts returns a round's bytes per client and for the server: from
// the server's tally under secure aggregation, or, in the clear, the
// models and replies of every draw. A round without clients (Poisson
// participation) costs nothing.
func (l *privacyLog) roundCosts(round int) (client, server float64) {
	draws := l.sizes.draws(round)
	if draws == 0 {
		return 0, 0
	}
	n := float64(draws)
	if l.cfg.SecAgg == nil {
		b := float64(l.cfg.ModelBytes(draws, l.dim) + l.cfg.ReplyBytes(draws, l.dim))
		return b / n, b
	}
	v := l.costs[round]
	if v == nil {
		return 0, 0
	}
	total := v[1] // the models
	for p := range secagg.PhaseCount {
		total += v[2+4*int(p)+1] + v[2+4*int(p)+3] // clients' and server's bytes
	}
	return total / n, total
}

// finish writes the columns and, for run 0, the details.
func (l *privacyLog) finish(j *run.Job) {
	for r, it := range l.t.Iterations {
		if it == 0 {
			for _, c := range l.col {
				l.t.Set(r, c, 0) // nothing sent, no time passed, no privacy spent
			}
			continue
		}
		if c, ok := l.col["client_bytes"]; ok {
			cb, sb := l.roundCosts(it)
			l.t.Set(r, c, cb)
			l.t.Set(r, l.col["server_bytes"], sb)
		}
		if c, ok := l.col["round_time"]; ok {
			l.t.Set(r, c, l.time[it]-l.time[it-1])
		}
		if c, ok := l.col["epsilon"]; ok {
			l.t.SetBound(r, c, l.eps[it][0])
		}
		if c, ok := l.col["sample_epsilon"]; ok {
			l.t.SetBound(r, c, l.eps[it][1])
		}
	}
	if l.cfg.SecAgg != nil {
		if l.enc.clipped > 0 && l.cfg.DP.Mode == fedavg.DistributedDP {
			j.Stats.Warnings = append(j.Stats.Warnings, fmt.Sprintf("%v coordinates of the clients' noisy inputs fell outside privacy.secure_aggregation.clip and were clipped: the distributed discrete Gaussian's guarantee assumes the noise reaches the sum whole; raise the clip (to C/μ plus a few σ) or the bits", l.enc.clipped))
		}
		j.Stats.Warnings = append(j.Stats.Warnings, encodingWarnings(&l.enc, l.cfg, l.encoder(), l.dim)...)
	}
	l.sizes.finish(j)
	if j.Run != 0 {
		return
	}
	if sa := l.sc.Privacy.SecureAggregation; sa != nil {
		j.Stats.Details["secure_aggregation"] = l.secAggDetails(sa)
	}
}

// secAggDetails describes secure aggregation in the summary: its resolved
// configuration, the closed-form traffic of a round without dropouts, the
// measured traffic per round, the rounds that failed and the range errors.
func (l *privacyLog) secAggDetails(sa *scenarios.SecureAggregation) map[string]any {
	T := float64(l.sc.Iterations)
	n := l.cfg.Draws()
	d := map[string]any{"protocol": sa.Protocol, "clients_per_round": n}
	if l.cfg.Variable() {
		d["clients_per_round"] = "random (participation poisson): see participation"
	}
	var client, server float64
	for it := 1; it <= l.sc.Iterations; it++ {
		c, s := l.roundCosts(it)
		client += c
		server += s
	}
	d["bytes_per_client_per_round"] = client / T
	d["server_bytes_per_round"] = server / T
	if l.cfg.SecAgg == nil {
		d["bytes"] = "the protobuf sizes of the models sent and the replies received in the clear, every draw replying"
		return d
	}
	scfg, _ := l.cfg.SecAggRound(1, n, l.dim) // validated
	d["neighbours"], d["threshold"], d["bits"], d["clip"] = scfg.Neighbours, scfg.Threshold, sa.Bits, sa.Clip
	if l.cfg.Variable() {
		d["at_expected_clients"] = fmt.Sprintf("neighbours, threshold, quantization_step and expected_without_dropouts are those of a round of the expected n = L = %d clients; each round's are those of its own n", n)
	}
	d["quantization_step"] = scfg.Encoder.Step()
	d["rounding"], d["quantization_error"] = encodingDetails(&l.enc, l.cfg, scfg.Encoder, l.dim)
	d["phase_timeout"] = sa.Timeout
	d["bytes"] = "payload sizes of the protocol's messages as Bonawitz et al. count them (32-byte keys, 4-byte ids, sealed share pairs, ⌈bits·m/8⌉-byte masked inputs, 40-byte shares), plus the protobuf size of the model each client receives"
	phases := map[string]any{}
	for p := range secagg.PhaseCount {
		var cm, cb, sm, sbytes float64
		for it := 1; it <= l.sc.Iterations; it++ {
			if v := l.costs[it]; v != nil {
				i := 2 + 4*int(p)
				cm, cb, sm, sbytes = cm+v[i], cb+v[i+1], sm+v[i+2], sbytes+v[i+3]
			}
		}
		phases[p.String()] = map[string]any{
			"client_messages": cm / T, "client_bytes": cb / T, "server_messages": sm / T, "server_bytes": sbytes / T}
	}
	d["per_phase_per_round"] = phases
	e := secagg.ExpectedCosts(scfg)
	closed := map[string]any{}
	for _, p := range secagg.Phases() {
		closed[p.String()] = map[string]any{
			"client_sent": e.Client[p].Sent.Bytes, "client_received": e.Client[p].Received.Bytes,
			"server_sent": e.Server[p].Sent.Bytes, "server_received": e.Server[p].Received.Bytes}
	}
	d["expected_without_dropouts"] = closed
	d["range_errors"] = l.enc.clipped
	if l.rounds > 0 {
		d["mean_included"] = l.incl / float64(l.rounds)
	}
	d["failed_rounds"] = len(l.failed)
	if len(l.failed) > 0 {
		d["failures"] = l.failed
	}
	return d
}

// systemsCause names what makes a run need the systems model: a systems
// field, or a behaviour that makes it eventful.
func systemsCause(sc *scenarios.Scenario, cfg *fedavg.Config) string {
	n := &sc.Network
	for _, f := range []struct {
		field string
		set   bool
	}{
		{scenarios.FieldStepTime, n.StepTime != nil}, {scenarios.FieldClasses, len(n.Classes) > 0},
		{scenarios.FieldLoss, n.Loss != 0}, {scenarios.FieldDuplicate, n.Duplicate != 0},
		{scenarios.FieldDropout, n.Dropout != 0}, {scenarios.FieldAvailability, n.Availability != ""},
		{scenarios.FieldCrashes, n.Crashes != nil}, {scenarios.FieldXAxis, sc.Output.XAxis == "time"},
	} {
		if f.set {
			return f.field
		}
	}
	if cfg.Collection().Early() {
		return fieldCollect + " " + cfg.Collection().String()
	}
	return fieldAdversary
}
