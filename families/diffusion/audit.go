package diffusion

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"google.golang.org/protobuf/proto"

	"maple/actors"
	aaudit "maple/actors/audit"
	adiffusion "maple/actors/diffusion"
	"maple/actors/msg"
	"maple/algorithms/diffusion"
	"maple/algorithms/rng"
	"maple/privacy/audit"
	"maple/privacy/homomorphic"
	"maple/privacy/pairmask"
	"maple/rundir"
	"maple/scenarios"
)

// Audit places an honest-but-curious eavesdropper on links of a
// decentralized run: the section algorithm.diffusion.audit.
type Audit struct {
	// Victim is the agent whose shared values the eavesdropper
	// reconstructs.
	Victim int `yaml:"victim"`
	// Links lists the receivers of the victim's links it taps; empty means
	// every agent that listens to the victim. A set of colluding
	// neighbours pooling what they receive from the victim is the same
	// observation: list them here.
	Links []int `yaml:"links,omitempty"`
}

// auditColumn is the metric the eavesdropper adds.
var auditColumn = rundir.Column{Name: "audit_msd", Decibel: true, Label: "eavesdropper's error ‖ŷ_v,i − y_v,i‖² (dB)"}

// auditSeededColumn is the metric of the second eavesdropper, who also holds
// the run seed summary.json publishes (seededAudit).
var auditSeededColumn = rundir.Column{Name: "audit_seeded_msd", Decibel: true, Label: "seed holder's error ‖ŷ_v,i − y_v,i‖² (dB)"}

// seededAudit reports whether an audited curve also has the eavesdropper
// who holds the published run seed: under local graph-homomorphic masks on
// secure keys it recomputes every X25519 key pair from the seed's key
// streams, as anyone reading summary.json can, and strips the victim's masks
// before combining. With privacy.key_randomness seeded it recovers the
// victim's values exactly; with os keys the masks it subtracts are unrelated
// to the agents' and it recovers nothing.
func seededAudit(sc *scenarios.Scenario) bool {
	return sc.Privacy.Scheme == "local-graph-homomorphic" && sc.Privacy.Keys == "secure"
}

// validateAudit checks the fields that do not need the network.
func validateAudit(v *scenarios.Validator, sc *scenarios.Scenario, a *Audit) {
	const f = "algorithm.diffusion.audit"
	P := sc.Data.Agents
	if a.Victim < 0 || a.Victim >= P {
		v.Fail(f+".victim", "agent %d does not exist (data.agents = %d)", a.Victim, P)
	}
	for i, k := range a.Links {
		field := fmt.Sprintf("%s.links[%d]", f, i)
		switch {
		case k < 0 || k >= P:
			v.Fail(field, "agent %d does not exist (data.agents = %d)", k, P)
		case k == a.Victim:
			v.Fail(field, "the victim's message to itself is its self term, never sent")
		case slices.Contains(a.Links[:i], k):
			v.Fail(field, "agent %d is listed twice", k)
		}
	}
}

// auditPlan is what an audited run needs: the tapped receivers, the stage
// whose value is reconstructed and the estimator; for the seed-holding
// eavesdropper (seededAudit) the masked links and the std of the masks.
type auditPlan struct {
	victim int
	links  []int
	stage  int
	est    *audit.Estimator
	masked []audit.MaskedLink // nil without the seed-holding eavesdropper
	std    float64
}

// planAudit builds the eavesdropper's estimator from what the threat model
// makes public: the scheme, the weights, the roles and σ_g².
func planAudit(c *scenarios.CurveSpec, cfg diffusion.Config, A *mat.Dense) (*auditPlan, error) {
	a := diffusionParams(c.Scenario).Audit
	const f = "algorithm.diffusion.audit"
	stages := cfg.Uses()
	plan := &auditPlan{victim: a.Victim, stage: -1}
	for j, used := range stages {
		if used {
			if plan.stage >= 0 {
				return nil, c.Errorf(f, "the eavesdropper reconstructs the value of one communicating stage; strategy %s communicates in several", diffusionParams(c.Scenario).Strategy)
			}
			plan.stage = j
		}
	}
	if plan.stage < 0 {
		return nil, c.Errorf(f, "no stage communicates, so there is nothing to eavesdrop on")
	}
	net, err := diffusion.NewNetwork(A, cfg)
	if err != nil {
		return nil, c.Errorf("topology", "%v", err)
	}
	receivers := net.Receivers(a.Victim)
	plan.links = a.Links
	if len(plan.links) == 0 {
		plan.links = receivers
	}
	for i, k := range plan.links {
		if !slices.Contains(receivers, k) {
			return nil, c.Errorf(fmt.Sprintf("%s.links[%d]", f, i), "agent %d does not listen to the victim %d (it listens to %v)", k, a.Victim, receivers)
		}
	}
	if len(plan.links) == 0 {
		return nil, c.Errorf(f+".victim", "agent %d sends to nobody", a.Victim)
	}
	sigma2 := cfg.Privacy.Std * cfg.Privacy.Std
	variances := make([]float64, len(plan.links))
	var cov *mat.SymDense
	switch cfg.Privacy.Scheme {
	case diffusion.None:
		cov = audit.Independent(variances)
	case diffusion.Random:
		for k := range variances {
			variances[k] = sigma2
		}
		cov = audit.Independent(variances)
	case diffusion.GraphHomomorphic:
		coef := make([]float64, len(plan.links))
		for k, r := range plan.links {
			coef[k] = homomorphic.EdgeCoefficient(A, cfg.Privacy.Form, a.Victim, r)
		}
		cov = audit.Shared(coef, sigma2)
	case diffusion.LocalGraphHomomorphic:
		for k, r := range plan.links {
			plus, minus, ok := pairmask.SplitRoles(cfg.Privacy.Roles, r, net.Senders(r))
			if !ok {
				continue // the receiver cannot mask: the message is plain
			}
			partners := minus
			if slices.Contains(minus, a.Victim) {
				partners = plus
			}
			w := A.At(a.Victim, r)
			variances[k] = float64(len(partners)) * sigma2 / (w * w)
		}
		cov = audit.Independent(variances)
	default:
		return nil, c.Errorf("privacy.scheme", "the eavesdropper does not know scheme %v", cfg.Privacy.Scheme)
	}
	if plan.est, err = audit.NewEstimator(cov); err != nil {
		return nil, c.Errorf(f, "%v", err)
	}
	if seededAudit(c.Scenario) {
		senders, receivers := make([][]int, net.Agents()), make([][]int, net.Agents())
		for p := range senders {
			senders[p], receivers[p] = net.Senders(p), net.Receivers(p)
		}
		roles := pairmask.NewPlan(cfg.Privacy.Roles, senders, receivers)
		for _, r := range plan.links {
			as, _ := roles.Assignment(a.Victim, r) // the links were checked above
			plan.masked = append(plan.masked, audit.MaskedLink{Receiver: r, Role: as.Role, Weight: A.At(a.Victim, r), Partners: as.Partners})
		}
		plan.std = cfg.Privacy.Std
	}
	return plan, nil
}

// spawnEavesdropper adds the eavesdropper to r, tapping the plan's links
// from the agents spawned from first on, and returns the observer that turns
// its estimates into the audit metric, column col of t. With the
// seed-holding eavesdropper (p.masked), it adds that one too, recomputing
// the keys from the streams of runSeed, and its metric goes to column
// col+1.
func (p *auditPlan) spawnEavesdropper(r *actors.Run, first actors.ID, next actors.Observer, t *rundir.Table, col int, runSeed uint64) (actors.Observer, error) {
	links := make([]actors.ID, len(p.links))
	for k, l := range p.links {
		links[k] = first + actors.ID(l)
	}
	victim := first + actors.ID(p.victim)
	observe := func(name string, e *aaudit.Eavesdropper, next actors.Observer, col int) *auditObserver {
		id := r.Spawn(name, e)
		r.Wiretap(id, e.Tap())
		return &auditObserver{next: next, eavesdropper: id, victim: victim, key: adiffusion.SharedKey(p.stage), t: t, col: col,
			truth: map[int][]float64{}, est: map[int][]float64{}}
	}
	plain := &aaudit.Eavesdropper{Victim: victim, Links: links, Estimator: p.est, Extract: stageShare(p.stage)}
	obs := observe(aaudit.Name, plain, next, col)
	if p.masked == nil {
		return obs, nil
	}
	keyStream := func(node int) *rand.Rand { return rng.New(runSeed, diffusion.AgentName(node), diffusion.StreamKey) }
	u, err := audit.NewUnmasker(p.masked, p.std, audit.SeededSecrets(p.victim, keyStream))
	if err != nil {
		return nil, err
	}
	seeded := &aaudit.Eavesdropper{Victim: victim, Links: links, Estimator: p.est, Extract: stageShare(p.stage),
		Unmask: func(x []float64, link, round int, m proto.Message) {
			u.Unmask(x, link, round, int(m.(*msg.StageShare).GetStage()))
		}}
	return observe(aaudit.Name+"-with-seed", seeded, obs, col+1), nil
}

// stageShare returns the payload of a share of stage j.
func stageShare(j int) func(proto.Message) ([]float64, bool) {
	return func(m proto.Message) ([]float64, bool) {
		s, ok := m.(*msg.StageShare)
		if !ok || int(s.GetStage()) != j {
			return nil, false
		}
		return s.GetPayload(), true
	}
}

// describe reports the audit in the run's summary: the links, the estimator
// and its predicted error, to set beside the measured audit_msd, and what
// the seed-holding eavesdropper holds.
func (p *auditPlan) describe(dim int, keyRandomness string) map[string]any {
	predicted := float64(dim) * p.est.Variance()
	d := map[string]any{
		"victim":           p.victim,
		"links":            p.links,
		"stage":            p.stage,
		"estimator":        "best linear unbiased (generalized least squares) from one round's messages",
		"weights":          p.est.Weights(),
		"predicted_msd":    predicted,
		"predicted_msd_db": rundir.Number(rundir.Decibel(predicted)),
	}
	if p.masked != nil {
		what := "exact recovery: the keys are drawn from the run seed's key streams (privacy.key_randomness seeded), so it recomputes every pair secret and mask"
		if keyRandomness == "os" {
			what = "nothing: the keys come from the operating system (privacy.key_randomness os), so the masks it subtracts are unrelated to the agents' and its error is about twice audit_msd"
		}
		d["seeded"] = map[string]any{
			"holds":    "the run seed published in summary.json, from which it recomputes every X25519 key pair and strips the victim's masks before combining",
			"expected": what,
		}
	}
	return d
}

// auditObserver forwards every observation and pairs the eavesdropper's
// estimate of each round with the victim's true shared value.
type auditObserver struct {
	next         actors.Observer
	eavesdropper actors.ID // whose estimates this observer scores
	victim       actors.ID
	key          string
	t            *rundir.Table
	col          int
	truth, est   map[int][]float64
}

// Observe implements actors.Observer.
func (o *auditObserver) Observe(from actors.ID, round int, key string, v []float64) {
	switch {
	case key == aaudit.KeyEstimate && from == o.eavesdropper:
		o.est[round] = slices.Clone(v)
		o.score(round)
	case key == o.key && from == o.victim:
		o.truth[round] = slices.Clone(v)
		o.score(round)
	}
	o.next.Observe(from, round, key, v)
}

// score records ‖ŷ − y‖² once both are known for round.
func (o *auditObserver) score(round int) {
	y, yHat := o.truth[round], o.est[round]
	if y == nil || yHat == nil {
		return
	}
	d := floats.Distance(y, yHat, 2)
	if row := o.t.Row(round); row >= 0 {
		o.t.Set(row, o.col, d*d)
	}
	delete(o.truth, round)
	delete(o.est, round)
}

// relay is an observer that forwards to another, which can be replaced after
// the run is built (the eavesdropper's observer needs the agents' IDs).
type relay struct{ actors.Observer }
