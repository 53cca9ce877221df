package diffusion

import (
	"fmt"
	"slices"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"google.golang.org/protobuf/proto"

	"maple/actors"
	aaudit "maple/actors/audit"
	adiffusion "maple/actors/diffusion"
	"maple/actors/msg"
	"maple/algorithms/diffusion"
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
// whose value is reconstructed and the estimator.
type auditPlan struct {
	victim int
	links  []int
	stage  int
	est    *audit.Estimator
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
	return plan, nil
}

// spawnEavesdropper adds the eavesdropper to r, tapping the plan's links
// from the agents spawned from first on, and returns the observer that turns
// its estimates into the audit metric.
func (p *auditPlan) spawnEavesdropper(r *actors.Run, first actors.ID, next actors.Observer, t *rundir.Table, col int) *auditObserver {
	links := make([]actors.ID, len(p.links))
	for k, l := range p.links {
		links[k] = first + actors.ID(l)
	}
	e := &aaudit.Eavesdropper{Victim: first + actors.ID(p.victim), Links: links, Estimator: p.est, Extract: stageShare(p.stage)}
	r.Wiretap(r.Spawn(aaudit.Name, e), e.Tap())
	return &auditObserver{next: next, victim: e.Victim, key: adiffusion.SharedKey(p.stage), t: t, col: col,
		truth: map[int][]float64{}, est: map[int][]float64{}}
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
// and its predicted error, to set beside the measured audit_msd.
func (p *auditPlan) describe(dim int) map[string]any {
	predicted := float64(dim) * p.est.Variance()
	return map[string]any{
		"victim":           p.victim,
		"links":            p.links,
		"stage":            p.stage,
		"estimator":        "best linear unbiased (generalized least squares) from one round's messages",
		"weights":          p.est.Weights(),
		"predicted_msd":    predicted,
		"predicted_msd_db": rundir.Number(rundir.Decibel(predicted)),
	}
}

// auditObserver forwards every observation and pairs the eavesdropper's
// estimate of each round with the victim's true shared value.
type auditObserver struct {
	next       actors.Observer
	victim     actors.ID
	key        string
	t          *rundir.Table
	col        int
	truth, est map[int][]float64
}

// Observe implements actors.Observer.
func (o *auditObserver) Observe(from actors.ID, round int, key string, v []float64) {
	switch {
	case key == aaudit.KeyEstimate:
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
