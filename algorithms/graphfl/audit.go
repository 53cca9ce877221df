package graphfl

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/floats"

	"maple/algorithms/data"
	"maple/algorithms/fedavg"
	"maple/algorithms/rng"
	"maple/privacy/audit"
	"maple/privacy/homomorphic"
)

// This file is the differential-privacy auditor of a graph federated
// learning run, for the server-level guarantee of seed 002 (Definition 1,
// Theorem 3, thesis eq. 3.58): the neighbouring datasets replace client
// (0, 0)'s data — the first client of server 0 — and the adversary, who knows
// every dataset but that one, both candidates D and D′ for it, the sampling,
// the graph, the weights, the scheme and σ_g — everything but the privacy
// noise —, watches the messages between servers of its view and scores how
// much likelier they are when client (0, 0) holds D′ (the canary is in) than
// when it holds D.

// Victim is the server whose outgoing messages the audit scores: server 0,
// whose client 0 holds the dataset the canary replaces.
const Victim = 0

// The views (audit.View) in this family: audit.WireView is every message on
// server 0's outgoing links to other servers, as the trace records them —
// the observer of Definition 1 —, who does not see what server 0 receives
// and so predicts server 0's aggregates under D and D′ by running the
// noise-free recursion on each (with the run's sampling and batches): their
// means for a quadratic loss, an approximation otherwise.
// audit.NetworkView is every message between servers (the clients' links are
// not in it: the guarantee is about the servers' exchange). From the
// messages each server receives the auditor replays every federated unit —
// its sampling, its clients' local steps, its aggregate and its combination
// —, server 0's under D and under D′: the exact conditional means of server
// 0's messages given the history.

// Auditor scores one run: after each round i, the sum over rounds 1…i of the
// log-likelihood ratio of server 0's messages in the view under D′ against D
// (higher: the canary is in), or, where the view reveals server 0's
// aggregate ŷ, of ½(‖ŷ − μ₀‖² − ‖ŷ − μ₁‖²). It is a state machine fed with
// the messages of its view in any order; it scores a round once all of its
// messages are in, reading them in a fixed order, so that both engines give
// the same scores bit for bit.
type Auditor struct {
	view  audit.View
	cfg   Config
	net   *Network
	dim   int
	links []int       // server 0's receivers, ascending
	model audit.Model // how server 0's messages relate to its aggregate
	edge  audit.Links // the links of the view, numbered for a round's buffer

	pending map[int][][]float64
	have    map[int]int
	tally   audit.Tally // the scores, and μ₁ − μ₀ per round scored
	mu      [2][]float64
	yhat    []float64
	predict func(i int, msgs [][]float64) error
}

// NewAuditor returns the auditor of a run of cfg on prob with the given view:
// prob.Sets are the clients' datasets without the canary (D for client
// (0, 0), Sets[0]), alt is its neighbouring dataset D′, runSeed the run's
// seed and rounds its length. The auditor draws the run's sampling and
// batches from its own copies of the run's streams (they are not privacy
// noise: the guarantee does not rest on them). It refuses client-level
// noise, which the servers' messages do not show, and, under the network
// view, noise on the self term.
func NewAuditor(ctx context.Context, cfg Config, prob Problem, alt *data.Set, view audit.View, runSeed uint64, rounds int) (*Auditor, error) {
	net, err := NewNetwork(prob.A, cfg)
	if err != nil {
		return nil, err
	}
	P, K := net.Servers(), cfg.Clients.Agents
	switch {
	case view != audit.WireView && view != audit.NetworkView:
		return nil, fmt.Errorf("invalid audit view %v", view)
	case P < 2:
		return nil, errors.New("one server exchanges nothing: there is no message to audit")
	case cfg.Clients.NoiseStd > 0:
		return nil, errors.New("the audit is of the servers' exchange; client-level noise, which no server message shows, is not audited")
	case view == audit.NetworkView && cfg.Privacy.SelfNoise:
		return nil, errors.New("the network view's replay needs every server's self term, which self noise hides from every message")
	case len(prob.Sets) != P*K:
		return nil, fmt.Errorf("%d datasets for %d servers of %d clients", len(prob.Sets), P, K)
	case alt == nil || alt.Len() == 0 || prob.Loss.Dim(alt.Dim) != len(prob.W0):
		return nil, errors.New("the neighbouring dataset is empty or of another dimension")
	}
	a := &Auditor{view: view, cfg: cfg, net: net, dim: len(prob.W0), links: slices.Clone(net.receivers[Victim]),
		edge: audit.NewLinks(view, Victim, net.receivers), pending: map[int][][]float64{}, have: map[int]int{}, tally: audit.NewTally(),
		yhat: make([]float64, len(prob.W0))}
	for h := range a.mu {
		a.mu[h] = make([]float64, a.dim)
	}
	a.chooseModel()
	if view == audit.WireView {
		err = a.noiseFree(ctx, prob, alt, runSeed, rounds)
	} else {
		a.replay(prob, alt, runSeed)
	}
	return a, err
}

// chooseModel decides how server 0's messages relate to its aggregate
// (audit.GraphModel): broadcast noise is one draw on every link, and local
// graph-homomorphic masks weigh a_0k on the link to k.
func (a *Auditor) chooseModel() {
	pr := &a.cfg.Privacy
	e := audit.GraphExchange{View: a.view, Receivers: a.links}
	switch pr.Scheme {
	case Random:
		e.Noise, e.Law = audit.PerLink, audit.MechanismNoise(pr.Mechanism, pr.Std)
	case RandomBroadcast:
		e.Noise, e.Law = audit.Broadcast, audit.MechanismNoise(pr.Mechanism, pr.Std)
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

// Expected returns the number of messages the view holds in one round.
func (a *Auditor) Expected() int { return a.edge.Len() }

// InView reports whether the link from → to between servers is in the view.
func (a *Auditor) InView(from, to int) bool { return a.edge.Index(from, to) >= 0 }

// Observe hands the auditor the message server from sent server to in round
// i. Messages of links out of its view are ignored; it keeps a copy of v.
// Once every message of the next round is in, it scores that round (and
// any later one already complete).
func (a *Auditor) Observe(i, from, to int, v []float64) error {
	if !a.InView(from, to) {
		return nil
	}
	switch {
	case i <= a.Scored():
		return fmt.Errorf("audit: message %d → %d of round %d, which is already scored", from, to, i)
	case len(v) != a.dim:
		return fmt.Errorf("audit: message of dimension %d, models have %d", len(v), a.dim)
	}
	msgs := a.pending[i]
	if msgs == nil {
		msgs = make([][]float64, a.edge.Len())
		a.pending[i] = msgs
	}
	e := a.edge.Index(from, to)
	if msgs[e] != nil {
		return fmt.Errorf("audit: second message from %d to %d in round %d", from, to, i)
	}
	msgs[e] = slices.Clone(v)
	a.have[i]++
	for next := a.Scored() + 1; a.have[next] == a.edge.Len(); next = a.Scored() + 1 {
		msgs := a.pending[next]
		delete(a.pending, next)
		delete(a.have, next)
		if err := a.score(next, msgs); err != nil {
			return err
		}
	}
	return nil
}

// Scored returns the last round scored (0 before the first).
func (a *Auditor) Scored() int { return a.tally.Scored() }

// Score returns the score after round i (0 at round 0). It panics if round i
// is not scored yet.
func (a *Auditor) Score(i int) float64 { return a.tally.Score(i, "round") }

// Exact reports whether the predictions of server 0's aggregates are the
// exact conditional means given the view, so that the score is the exact
// likelihood ratio (or, where the view reveals the aggregate, the sign of an
// infinite one): under the network view, and under the wire view when the
// aggregates do not depend on the noise (local graph-homomorphic masks, no
// noise).
func (a *Auditor) Exact() bool {
	s := a.cfg.Privacy.Scheme
	return a.view == audit.NetworkView || s == LocalGraphHomomorphic || s == None
}

// Divergence returns, summed over the rounds scored, the Kullback–Leibler
// divergence of the view's law of server 0's messages under D′ from that
// under D given the predictions: the expected score with the canary, and
// minus that without, when the predictions are exact. It is +Inf where the
// view reveals the aggregate and the predictions are exact, NaN where it
// reveals it and they are not.
func (a *Auditor) Divergence() float64 { return a.model.Divergence(&a.tally, a.Exact()) }

// Draws returns the number of independent draws of server 0's aggregate its
// messages in the view carry per round, each weighted by what it reveals
// next to one draw of the scheme's noise (audit.Draws): K links under random
// noise, one under broadcast and graph-homomorphic noise, Σ_k a_0k under
// local graph-homomorphic masks. It is +Inf where the view reveals the
// aggregate.
func (a *Auditor) Draws() float64 {
	return a.model.Draws(a.cfg.Privacy.Std)
}

// Sensitivity returns the largest ‖μ₁ − μ₀‖₂ over the rounds scored: how far
// server 0's predicted aggregates under D and D′ moved apart (under the
// network view, the conditional sensitivity of its messages).
func (a *Auditor) Sensitivity() float64 { return a.tally.Sensitivity() }

// Statistic describes the score in words, for the run's summary.
func (a *Auditor) Statistic() string {
	switch {
	case a.model.Revealed() && a.Exact():
		return "the view reveals server 0's aggregate ŷ exactly (" + a.revealedBy() + "), whose conditional law under either dataset is a point: the likelihood ratio is infinite, and the score ½(‖ŷ − μ(D)‖² − ‖ŷ − μ(D′)‖²), summed over the rounds, has its sign"
	case a.model.Revealed():
		return "the view reveals server 0's aggregate ŷ exactly (" + a.revealedBy() + "), but not the noise server 0 received, on which ŷ depends: the score is ½(‖ŷ − μ(D)‖² − ‖ŷ − μ(D′)‖²) with the noise-free predictions μ, summed over the rounds"
	case len(a.model.Laws()) == 1 && len(a.links) > 1:
		return fmt.Sprintf("log-likelihood ratio of server 0's one %v draw per round, which every link carries (summed over the rounds)", a.model.Laws()[0])
	}
	return "log-likelihood ratio of the independent noise on each of server 0's links (summed over the links and the rounds)"
}

func (a *Auditor) revealedBy() string {
	switch {
	case a.cfg.Privacy.Scheme == None:
		return "its messages carry no noise"
	case a.model.Plain() >= 0:
		return fmt.Sprintf("server %d cannot mask, so server 0 sends it its plain aggregate", a.links[a.model.Plain()])
	case a.cfg.Privacy.Scheme == GraphHomomorphic:
		pair, coef := a.model.Pair()
		return fmt.Sprintf("its messages to servers %d and %d carry one draw times %g and %g", a.links[pair[0]], a.links[pair[1]], coef[0], coef[1])
	}
	return fmt.Sprintf("server %d's incoming messages: its partners' masks cancel server 0's in Σ_ℓ a_ℓk x_ℓ, and the other servers' aggregates are replayed", a.links[0])
}

// score scores round i from its messages.
func (a *Auditor) score(i int, msgs [][]float64) error {
	if err := a.predict(i, msgs); err != nil {
		return err
	}
	obs := func(k int) []float64 { return msgs[a.edge.Index(Victim, a.links[k])] }
	mu0, mu1 := a.mu[0], a.mu[1]
	s := a.model.Score(obs, a.yhat, mu0, mu1)
	a.tally.Shift(mu0, mu1)
	a.tally.Add(s)
	return nil
}

// noiseFree runs the recursion without server noise on D and on D′ for the
// whole run, keeping server 0's aggregates, and predicts from them (the wire
// view).
func (a *Auditor) noiseFree(ctx context.Context, prob Problem, alt *data.Set, runSeed uint64, rounds int) error {
	plain := a.cfg
	plain.Privacy = Privacy{}
	var psi [2][][]float64
	for h := range psi {
		p := prob
		if h == 1 {
			p.Sets = slices.Clone(prob.Sets)
			p.Sets[0] = alt
		}
		err := ReferenceContext(ctx, plain, p, runSeed, rounds, Hooks{Aggregates: func(_ int, Psi [][]float64) {
			psi[h] = append(psi[h], slices.Clone(Psi[Victim]))
		}})
		if err != nil {
			return err
		}
	}
	a.predict = func(i int, _ [][]float64) error {
		if i > len(psi[0]) {
			return fmt.Errorf("audit: round %d of a run of %d", i, len(psi[0]))
		}
		copy(a.mu[0], psi[0][i-1])
		copy(a.mu[1], psi[1][i-1])
		return nil
	}
	return nil
}

// replay predicts from the network view: it runs every federated unit —
// server 0's twice, on D and on D′ (unit P) — with the run's sampling and
// batches, and combines each server's model from the messages it received
// and its own term (with its graph-homomorphic offset, recovered from its
// message to its first receiver), so that every server's trajectory is the
// run's.
func (a *Auditor) replay(prob Problem, alt *data.Set, runSeed uint64) {
	P, K := a.net.Servers(), a.cfg.Clients.Agents
	fed := a.cfg.Clients
	streams := func(owner, purpose string) *rand.Rand { return rng.New(runSeed, owner, purpose) }
	servers := make([]*fedavg.Server, P+1)
	clients := make([][]*fedavg.Agent, P+1)
	for u := range servers {
		p := u
		if u == P {
			p = Victim
		}
		servers[u] = fedavg.NewServer(&fed, prob.W0, streams(ServerName(p, P), StreamParticipation))
		for k := range K {
			set := prob.Sets[p*K+k]
			if u == P && k == 0 {
				set = alt
			}
			clients[u] = append(clients[u], fedavg.NewAgent(&fed, set, prob.Loss, ClientStreams(&fed, ClientName(p, k, K), streams)))
		}
	}
	psi := matrix(P+1, a.dim)
	replies := matrix(fed.Draws(), a.dim)
	self, w := make([]float64, a.dim), make([]float64, a.dim)
	pr := &a.cfg.Privacy
	a.predict = func(i int, msgs [][]float64) error {
		msg := func(m, p int) []float64 { return msgs[a.edge.Index(m, p)] }
		for u, srv := range servers {
			for slot, k := range srv.Begin() {
				clients[u][k].Respond(replies[slot], srv.Model())
				if _, err := srv.Accept(slot, k, replies[slot]); err != nil {
					return fmt.Errorf("audit: replaying server %d: %w", u, err)
				}
			}
			srv.Combine()
			copy(psi[u], srv.Model())
		}
		copy(a.mu[0], psi[Victim])
		copy(a.mu[1], psi[P])
		if pr.Scheme == LocalGraphHomomorphic && a.model.Revealed() && a.model.Plain() < 0 {
			// Σ_ℓ a_ℓk x_ℓ = Σ_ℓ a_ℓk ψ_ℓ at a masked receiver k: server 0's
			// aggregate is x_0k + (1/a_0k) Σ_{ℓ≠0} a_ℓk (x_ℓk − ψ_ℓ).
			k := a.links[0]
			copy(a.yhat, msg(Victim, k))
			w0 := a.net.Weight(Victim, k)
			for _, l := range a.net.senders[k] {
				if l != Victim {
					wl := a.net.Weight(l, k) / w0
					floats.AddScaled(a.yhat, wl, msg(l, k))
					floats.AddScaled(a.yhat, -wl, psi[l])
				}
			}
		}
		for u, srv := range servers {
			q := u
			if u == P {
				q = Victim
			}
			copy(self, psi[u])
			if pr.Scheme == GraphHomomorphic {
				// x = ψ + c·g on the link to the first receiver r. When
				// server 0's links carry different multiples, its aggregate,
				// hence its draw, is revealed whatever the dataset: both
				// units use that draw, so that the unit of the dataset
				// client (0, 0) does not hold does not feed its error back
				// through the self term.
				r := a.net.receivers[q][0]
				c := homomorphic.EdgeCoefficient(a.net.a, pr.Form, q, r)
				cs := homomorphic.SelfCoefficient(a.net.a, q)
				x, y := msg(q, r), psi[u]
				if q == Victim && a.model.Revealed() {
					pair, coef := a.model.Pair()
					c, x, y = coef[0], msg(q, a.links[pair[0]]), a.yhat
					audit.SolveMultiples(y, x, msg(q, a.links[pair[1]]), coef[0], coef[1])
				}
				for j := range self {
					self[j] += cs * (x[j] - y[j]) / c
				}
			}
			clear(w)
			for m := range P {
				switch wt := a.net.Weight(m, q); {
				case m == q:
					floats.AddScaled(w, wt, self)
				case wt != 0:
					floats.AddScaled(w, wt, msg(m, q))
				}
			}
			copy(srv.Model(), w)
		}
		return nil
	}
}
