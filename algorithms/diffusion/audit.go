package diffusion

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/floats"

	"maple/algorithms/data"
	"maple/privacy/audit"
	"maple/privacy/homomorphic"
)

// This file is the differential-privacy auditor of a decentralized run: the
// adversary of paper 001's Definition 1, who knows every dataset but agent
// 0's, both candidates D and D′ for agent 0's (the neighbouring datasets of
// the definition), the topology, the weights, the scheme and σ_g — everything
// but the privacy noise — watches the messages of its view, and scores how
// much likelier they are when agent 0 holds D′ (the canary is in) than when it
// holds D. A many-run audit turns the scores of runs with and without the
// canary into a lower bound on ε.

// Victim is the agent whose dataset the audit's canary replaces: agent 0, the
// agent whose dataset the neighbouring relation of paper 001 replaces (agent
// 1 in its numbering) and the one maple's accountant states its bound for.
const Victim = 0

// The views (audit.View) in this family: audit.WireView is every message on
// agent 0's outgoing links, as the trace records them — the observer of
// Definition 1 (paper 001 eq. 27), who sees agent 0's noisy messages and
// nothing else and predicts agent 0's values under D and D′ by running the
// noise-free recursion on each: the mean of agent 0's value under a
// quadratic loss with the full gradient (the recursion is then linear in the
// zero-mean noise), an approximation otherwise. audit.NetworkView is every
// message on every link: the white-box observer of the ratio chain of paper
// 001 eq. 30, which conditions on the whole history. From the messages agent
// 0 receives it replays agent 0's recursion under D and under D′ — the exact
// conditional means of its messages — and the other agents' (whose messages
// have the same conditional law under both datasets, so that the ratio of
// agent 0's messages is the exact likelihood ratio of the whole view).

// Auditor scores one run of the recursion: after each iteration i, the sum
// over iterations 1…i of the log-likelihood ratio of the view's messages
// from the victim under D′ against D (higher: the canary is in). It is a
// state machine fed with the shares of its view (Observe) in any order; it
// scores an iteration once all of its shares are in, reading them in a fixed
// order, so that both engines give the same scores bit for bit.
type Auditor struct {
	view   audit.View
	cfg    Config
	net    *Network
	dim    int
	links  []int       // the victim's receivers, ascending
	stages []int       // the communicating stages, in the order they run
	model  audit.Model // how the victim's messages of a stage relate to its value
	edge   audit.Links // the links of the view, numbered for a round's buffers

	pending map[int]*auditRound
	tally   audit.Tally     // the scores, and μ₁ − μ₀ per iteration scored and communicating stage
	mu      [2][3][]float64 // the victim's predicted value of each stage under D and D′
	yhat    [3][]float64    // the revealed value of each stage (network replay)
	predict predictor
}

// auditRound holds the shares of one iteration, [stage][edge].
type auditRound struct {
	msgs [3][][]float64
	have int
}

// predictor computes the victim's predicted value of each communicating
// stage of iteration i under D (mu[0]) and D′ (mu[1]) from the iteration's
// shares, and, when it can, the revealed value (yhat).
type predictor interface {
	advance(i int, r *auditRound, mu *[2][3][]float64, yhat *[3][]float64)
}

// NewAuditor returns the auditor of a run of cfg on prob with the given view:
// prob.Sets are the datasets without the canary (D for the victim), alt is
// the victim's neighbouring dataset D′, and streams the run's streams, from
// which the auditor opens its own copies of the gradient oracles' sampling
// streams (the sampling is not privacy noise: the guarantee does not rest
// on it, and the auditor knows it). It refuses what it cannot replay: a
// combination step other than the linear one, a time-varying graph, and,
// under the network view, noise on the self term, which no message shows.
func NewAuditor(cfg Config, prob Problem, alt *data.Set, view audit.View, streams Streams) (*Auditor, error) {
	net, err := NewNetwork(prob.A, cfg)
	if err != nil {
		return nil, err
	}
	P := net.Agents()
	switch {
	case view != audit.WireView && view != audit.NetworkView:
		return nil, fmt.Errorf("invalid audit view %v", view)
	case !cfg.linear():
		return nil, fmt.Errorf("the audit replays the linear combination, not %T", cfg.Combine)
	case prob.Dynamics != nil:
		return nil, errors.New("the audit replays a fixed graph, not a time-varying one")
	case view == audit.NetworkView && cfg.Privacy.SelfNoise:
		return nil, errors.New("the network view's replay needs every agent's self term, which self noise hides from every message")
	case !net.Communicates():
		return nil, errors.New("no stage communicates: there is no message to audit")
	case len(net.receivers[Victim]) == 0:
		return nil, fmt.Errorf("agent %d sends to nobody", Victim)
	case len(prob.Sets) != P:
		return nil, fmt.Errorf("%d datasets for %d agents", len(prob.Sets), P)
	}
	if err := checkAgent(net, Victim, alt, prob.Loss, prob.W0); err != nil {
		return nil, fmt.Errorf("the neighbouring dataset: %w", err)
	}
	a := &Auditor{view: view, cfg: cfg, net: net, dim: len(prob.W0), links: slices.Clone(net.receivers[Victim]),
		edge: audit.NewLinks(view, Victim, net.receivers), pending: map[int]*auditRound{}, tally: audit.NewTally()}
	for _, j := range stageOrder {
		if net.uses[j] {
			a.stages = append(a.stages, j)
		}
	}
	for h := range a.mu {
		for _, j := range a.stages {
			a.mu[h][j] = make([]float64, a.dim)
		}
	}
	for _, j := range a.stages {
		a.yhat[j] = make([]float64, a.dim)
	}
	a.chooseModel()
	if view == audit.WireView {
		a.predict, err = newNoiseFree(cfg, prob, alt, streams)
	} else {
		a.predict = newReplay(a, prob, alt, streams)
	}
	return a, err
}

// chooseModel decides how the victim's messages of the view relate to its
// value (audit.GraphModel): graph-homomorphic noise is multiples of one draw
// (two different multiples reveal the value: ŷ = (c_b·x_a − c_a·x_b)/(c_b −
// c_a), spec §3.2, privacy caveat of the ratio form), and local
// graph-homomorphic masks weigh a_0k on the link to k.
func (a *Auditor) chooseModel() {
	pr := &a.cfg.Privacy
	e := audit.GraphExchange{View: a.view, Receivers: a.links}
	switch pr.Scheme {
	case Random:
		e.Noise, e.Law = audit.PerLink, audit.MechanismNoise(pr.Mechanism, pr.Std)
	case GraphHomomorphic:
		e.Noise, e.Law = audit.Multiples, audit.MechanismNoise(pr.Mechanism, pr.Std)
		e.Coefficient = func(r int) float64 { return homomorphic.EdgeCoefficient(a.net.a, pr.Form, Victim, r) }
	case LocalGraphHomomorphic:
		e.Noise, e.Maskable = audit.PairMasks, a.net.plan.Maskable
		e.Mask = func(r int) audit.Noise {
			as, _ := a.net.plan.Assignment(Victim, r)
			return audit.LaplaceSumNoise(len(as.Partners), pr.Std, 1/a.net.Weight(Victim, r))
		}
	}
	a.model = audit.GraphModel(e)
}

// Expected returns the number of shares the view holds in one iteration.
func (a *Auditor) Expected() int { return a.edge.Len() * len(a.stages) }

// InView reports whether the link from → to is in the auditor's view.
func (a *Auditor) InView(from, to int) bool { return a.edge.Index(from, to) >= 0 }

// Observe hands the auditor the share of stage j that agent from sent agent
// to in iteration i. Shares of links out of its view are ignored; it keeps a
// copy of v. Once every share of the next iteration is in, it scores that
// iteration (and any later one already complete).
func (a *Auditor) Observe(i, j, from, to int, v []float64) error {
	if !a.InView(from, to) {
		return nil
	}
	switch {
	case i <= a.Scored():
		return fmt.Errorf("audit: share %d → %d of iteration %d, which is already scored", from, to, i)
	case j < 0 || j > 2 || !a.net.uses[j]:
		return fmt.Errorf("audit: share of stage %d, which does not communicate", j)
	case len(v) != a.dim:
		return fmt.Errorf("audit: share of dimension %d, model has %d", len(v), a.dim)
	}
	r := a.pending[i]
	if r == nil {
		r = &auditRound{}
		for _, s := range a.stages {
			r.msgs[s] = make([][]float64, a.edge.Len())
		}
		a.pending[i] = r
	}
	e := a.edge.Index(from, to)
	if r.msgs[j][e] != nil {
		return fmt.Errorf("audit: second share of stage %d from %d to %d in iteration %d", j, from, to, i)
	}
	r.msgs[j][e] = slices.Clone(v)
	r.have++
	for {
		next := a.Scored() + 1
		r := a.pending[next]
		if r == nil || r.have < a.Expected() {
			return nil
		}
		delete(a.pending, next)
		a.score(next, r)
	}
}

// Scored returns the last iteration scored (0 before the first).
func (a *Auditor) Scored() int { return a.tally.Scored() }

// Score returns the score after iteration i (0 at iteration 0): the sum over
// iterations 1…i of the log-likelihood ratio of the victim's messages in the
// view under D′ against D, or, where the view reveals the victim's value,
// of ½(‖ŷ − μ₀‖² − ‖ŷ − μ₁‖²). It panics if i is not scored yet.
func (a *Auditor) Score(i int) float64 { return a.tally.Score(i, "iteration") }

// Divergence returns, summed over the iterations scored, the
// Kullback–Leibler divergence of the view's law of the victim's messages
// under D′ from that under D, given the predicted values: the expected score
// of a run with the canary, and minus that of a run without it (the laws are
// symmetric), when the predictions are exact (Exact). Where the view reveals
// the victim's value it is +Inf if the predictions are exact (the laws are
// singular), NaN otherwise (the law of the revealed value is not modelled).
func (a *Auditor) Divergence() float64 { return a.model.Divergence(&a.tally, a.Exact()) }

// Sensitivity returns the largest ‖μ₁ − μ₀‖₂ over the iterations and
// stages scored: how far agent 0's predicted values under D and D′ moved
// apart — under the network view, the conditional sensitivity of agent 0's
// messages that the chain of eq. 30 bounds by B + B′ + ‖w^o − w′^o‖ (its own
// error) on its high-probability event.
func (a *Auditor) Sensitivity() float64 { return a.tally.Sensitivity() }

// Draws returns the number of independent draws of agent 0's value its
// messages in the view carry per iteration, each weighted by how much it
// reveals next to one draw of the scheme's noise: Σ over the stages and the
// links of b/b_k for Laplace noise (the ratio of the laws' ε for one shift,
// b_k the scale of link k's noise: 1 per link under random noise, 1 per
// stage for the one graph-homomorphic draw of coefficient ±1, a_0k per link
// for local graph-homomorphic masks, whose density is (a_0k/b)-log-Lipschitz),
// and of (σ/σ_k)² for Gaussian noise (the ratio of the laws' μ²). It is +Inf
// where the view reveals the value.
func (a *Auditor) Draws() float64 {
	return a.model.Draws(a.cfg.Privacy.Std) * float64(len(a.stages)) // +Inf stays +Inf: a run communicates
}

// Exact reports whether the auditor's predictions of agent 0's values under
// D and D′ are the exact conditional means given the view, so that the score
// is the exact likelihood ratio of the view (or, where the view reveals the
// value, the sign of an infinite one): under the network view, and under the
// wire view when agent 0's values do not depend on the noise (local
// graph-homomorphic masks, which cancel, or no noise). Otherwise the score
// uses the noise-free predictions: a valid statistic, not the optimal one.
func (a *Auditor) Exact() bool {
	s := a.cfg.Privacy.Scheme
	return a.view == audit.NetworkView || s == LocalGraphHomomorphic || s == None
}

// Statistic describes the score in words, for the run's summary.
func (a *Auditor) Statistic() string {
	switch {
	case a.model.Revealed() && a.Exact():
		return "the view reveals agent 0's value ŷ exactly (" + a.revealedBy() + "), whose conditional law under either dataset is a point: the likelihood ratio is infinite, and the score ½(‖ŷ − μ(D)‖² − ‖ŷ − μ(D′)‖²), summed over the iterations, has its sign"
	case a.model.Revealed():
		return "the view reveals agent 0's value ŷ exactly (" + a.revealedBy() + "), but not the noise agent 0 received, on which ŷ depends: the score is ½(‖ŷ − μ(D)‖² − ‖ŷ − μ(D′)‖²) with the noise-free predictions μ, summed over the iterations"
	case a.model.Shared():
		return fmt.Sprintf("log-likelihood ratio of agent 0's one %v draw per stage, which every link carries (summed over the iterations)", a.model.Laws()[0])
	}
	return "log-likelihood ratio of the independent noise on each of agent 0's links (summed over the links and the iterations)"
}

// revealedBy says how the view reveals the victim's value.
func (a *Auditor) revealedBy() string {
	switch {
	case a.cfg.Privacy.Scheme == None:
		return "its messages carry no noise"
	case a.model.Plain() >= 0:
		return fmt.Sprintf("agent %d cannot mask, so agent 0 sends it its plain value", a.links[a.model.Plain()])
	case a.cfg.Privacy.Scheme == GraphHomomorphic:
		pair, coef := a.model.Pair()
		return fmt.Sprintf("its messages to agents %d and %d carry one draw times %g and %g: ŷ = (c₂x₁ − c₁x₂)/(c₂ − c₁)", a.links[pair[0]], a.links[pair[1]], coef[0], coef[1])
	}
	return fmt.Sprintf("agent %d's incoming messages: its partners' masks cancel agent 0's in Σ_ℓ a_ℓk x_ℓ, and the other agents' values are replayed from their own incoming messages", a.links[0])
}

// score scores iteration i from its shares.
func (a *Auditor) score(i int, r *auditRound) {
	a.predict.advance(i, r, &a.mu, &a.yhat)
	var s float64
	for _, j := range a.stages {
		mu0, mu1 := a.mu[0][j], a.mu[1][j]
		obs := func(k int) []float64 { return r.msgs[j][a.edge.Index(Victim, a.links[k])] }
		s += a.model.Score(obs, a.yhat[j], mu0, mu1)
		a.tally.Shift(mu0, mu1)
	}
	a.tally.Add(s)
}

// noiseFree predicts the victim's values by running the recursion without
// noise on D and on D′ (the wire view).
type noiseFree struct {
	runs [2]*reference
}

func newNoiseFree(cfg Config, prob Problem, alt *data.Set, streams Streams) (*noiseFree, error) {
	plain := cfg
	plain.Privacy = Privacy{}
	nf := &noiseFree{}
	for h := range nf.runs {
		p := prob
		if h == 1 {
			p.Sets = slices.Clone(prob.Sets)
			p.Sets[Victim] = alt
		}
		r, err := newReference(plain, p, streams)
		if err != nil {
			return nil, err
		}
		nf.runs[h] = r
	}
	return nf, nil
}

func (nf *noiseFree) advance(i int, _ *auditRound, mu *[2][3][]float64, _ *[3][]float64) {
	for h, r := range nf.runs {
		copy(mu[h][Stage1], r.state[Stage1][Victim]) // w_{i−1}, before the iteration overwrites it
		r.iterate(i, Hooks{})
		if mu[h][Stage0] != nil {
			copy(mu[h][Stage0], r.state[Stage0][Victim])
		}
		if mu[h][Stage2] != nil {
			copy(mu[h][Stage2], r.state[Stage2][Victim])
		}
	}
}

// replay runs the recursion of every agent on the messages of the network
// view, the victim twice: row P is the victim on D′. Each agent's self term
// is its own value (with its graph-homomorphic offset, recovered from its
// message to its first receiver) and every other term the message received,
// so that every agent's trajectory is the run's.
type replay struct {
	a     *Auditor
	sets  []*data.Set
	prob  Problem
	state [3][][]float64 // rows 0…P−1 the agents, row P the victim on D′; by stage, its input
	batch []*rand.Rand   // each row's copy of its agent's StreamBatch
	adapt []AdaptState   // each row's adaptation step's memory
	self  []float64
	grad  []float64
	idx   []int
}

func newReplay(a *Auditor, prob Problem, alt *data.Set, streams Streams) *replay {
	P := a.net.Agents()
	rp := &replay{a: a, prob: prob, sets: append(slices.Clone(prob.Sets), alt),
		self: make([]float64, a.dim), grad: make([]float64, a.dim), idx: make([]int, max(a.cfg.Batch, 1))}
	for j := range rp.state {
		rp.state[j] = make([][]float64, P+1)
		for p := range rp.state[j] {
			rp.state[j][p] = make([]float64, a.dim)
		}
	}
	for p := range P + 1 {
		copy(rp.state[Stage1][p], prob.W0)
		rp.batch = append(rp.batch, streams(AgentName(rp.agent(p)), StreamBatch))
		rp.adapt = append(rp.adapt, NewAdaptState(a.dim))
	}
	return rp
}

// agent returns the agent of row p.
func (rp *replay) agent(p int) int {
	if p == rp.a.net.Agents() {
		return Victim
	}
	return p
}

func (rp *replay) advance(i int, r *auditRound, mu *[2][3][]float64, yhat *[3][]float64) {
	w, phi, psi := rp.state[Stage1], rp.state[Stage0], rp.state[Stage2]
	rp.stage(Stage1, r, w, phi, mu, yhat)
	rp.stage(Stage0, r, phi, psi, mu, yhat)
	for p := range psi {
		gradient(rp.grad, phi[p], rp.sets[p], rp.prob.Loss, &rp.a.cfg, rp.idx, rp.batch[p])
		rp.a.cfg.adapter().Adapt(psi[p], rp.grad, rp.a.cfg.StepSize, &rp.adapt[p])
	}
	rp.stage(Stage2, r, psi, w, mu, yhat)
}

// stage runs stage j from Y to Z for every row, recording the victim's
// inputs of a communicating stage and, under local graph-homomorphic masks,
// the value its receiver's aggregate reveals.
func (rp *replay) stage(j int, r *auditRound, Y, Z [][]float64, mu *[2][3][]float64, yhat *[3][]float64) {
	a := rp.a
	if !a.net.uses[j] {
		for p := range Y {
			copy(Z[p], Y[p])
		}
		return
	}
	P := a.net.Agents()
	copy(mu[0][j], Y[Victim])
	copy(mu[1][j], Y[P])
	msg := func(m, p int) []float64 { return r.msgs[j][a.edge.Index(m, p)] }
	pr := &a.cfg.Privacy
	if pr.Scheme == LocalGraphHomomorphic {
		// Σ_ℓ a_ℓk x_ℓ = Σ_ℓ a_ℓk y_ℓ at a masked receiver k: the victim's
		// value is x_0k + (1/a_0k) Σ_{ℓ≠0} a_ℓk (x_ℓk − y_ℓ).
		k := a.links[0]
		y := yhat[j]
		copy(y, msg(Victim, k))
		if a.net.plan.Maskable(k) {
			w0 := a.net.Weight(Victim, k)
			for _, l := range a.net.senders[k] {
				if l == Victim {
					continue
				}
				wl := a.net.Weight(l, k) / w0
				floats.AddScaled(y, wl, msg(l, k))
				floats.AddScaled(y, -wl, Y[l])
			}
		}
	}
	for p := range Z {
		q := rp.agent(p)
		copy(rp.self, Y[p])
		if pr.Scheme == GraphHomomorphic {
			// x = y + c·g on the link to the first receiver r: g = (x − y)/c.
			// When agent 0's links carry different multiples, its value ŷ,
			// hence its draw, is revealed whatever the dataset: both rows
			// use that draw, so that the row of the dataset agent 0 does
			// not hold does not feed its error back through the self term
			// (by a_00(1 + |c_self|/c) per iteration, which can exceed 1).
			rcv := a.net.receivers[q][0]
			c := homomorphic.EdgeCoefficient(a.net.a, pr.Form, q, rcv)
			cs := homomorphic.SelfCoefficient(a.net.a, q)
			x, y := msg(q, rcv), Y[p]
			if q == Victim && a.model.Revealed() {
				pair, coef := a.model.Pair()
				rcv = a.links[pair[0]]
				c, x, y = coef[0], msg(q, rcv), yhat[j]
				audit.SolveMultiples(y, x, msg(q, a.links[pair[1]]), coef[0], coef[1])
			}
			for k := range rp.self {
				rp.self[k] += cs * (x[k] - y[k]) / c
			}
		}
		z := Z[p]
		clear(z)
		for m := range P {
			wt := a.net.Weight(m, q)
			switch {
			case m == q:
				floats.AddScaled(z, wt, rp.self)
			case wt != 0:
				floats.AddScaled(z, wt, msg(m, q))
			}
		}
	}
}
