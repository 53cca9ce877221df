package fedavg

import "maple/algorithms/fedavg"

// SCAFFOLD (Karimireddy, Kale, Mohri, Reddi, Stich and Suresh, "SCAFFOLD:
// Stochastic controlled averaging for federated learning", ICML 2020,
// Algorithm 1 with option II): the server keeps a control variate c, the
// estimate of the global gradient, and every client its own c_i, the
// estimate of its local gradient. A client corrects every local gradient by
// c − c_i, which cancels its drift toward its own minimizer, and the
// protocol carries the variates: c goes out with the model, and each client
// returns the change Δc_i of its own with its reply.
//
// Round, for a participant i with K local steps of size η_l from x:
//
//	y ← y − η_l·(g_i(y) − c_i + c)               (K times, from y = x)
//	c_i⁺ = c_i − c + (x − y)/(K·η_l),  Δc_i = c_i⁺ − c_i
//	x ← x + η_g·mean(y − x),  c ← c + (1/N)·ΣΔc_i
//
// with N the number of agents, so that c stays the mean of every c_i.

func init() {
	RegisterServer(Server{
		Name:   "scaffold",
		Doc:    "SCAFFOLD (Karimireddy et al. 2020): control variates c (server) and c_i (clients) correct every local gradient for client drift",
		Params: scaffold{ServerStep: 1},
		Client: "scaffold",
	})
	Clients.Register("scaffold", "SCAFFOLD's client (Karimireddy et al. 2020): local SGD on g_i(y) − c_i + c, keeping its control variate c_i between its rounds", scaffoldClient{})
}

// scaffold is the server's parameters; NewRule makes a server's state.
type scaffold struct {
	ServerStep float64 `yaml:"server_step" range:"(0, inf)" doc:"global step η_g applied to the mean change of the model (1: the mean of the replies)"`
}

// NewRule implements fedavg.StatefulRule: a server whose control variate c
// starts at zero, for a run of cfg.Agents agents.
func (p scaffold) NewRule(cfg *fedavg.Config, dim int) fedavg.Rule {
	return &scaffoldServer{scaffold: p, agents: cfg.Agents, c: make([]float64, dim), mean: make([]float64, dim)}
}

// scaffoldServer is one server's rule and its state.
type scaffoldServer struct {
	scaffold
	agents int
	c      []float64 // the server's control variate, sent every round
	mean   []float64 // scratch: the model the round's mean would give
}

// Broadcast implements fedavg.Broadcaster: c goes out with the model.
func (s *scaffoldServer) Broadcast() []float64 { return s.c }

// Combine implements fedavg.Rule; the server combines through CombineSides.
func (s *scaffoldServer) Combine(model []float64, replies [][]float64, share fedavg.Share, mu float64) {
	s.CombineSides(model, replies, make([][]float64, len(replies)), share, mu)
}

// CombineSides implements fedavg.SideRule: the model moves by η_g times the
// mean change of the replies, and c by the sum of the clients' Δc_i over N
// (a reply without one — a missing client's stand-in, an adversary that did
// not train — changes c by nothing).
func (s *scaffoldServer) CombineSides(model []float64, replies, sides [][]float64, share fedavg.Share, mu float64) {
	if len(replies) == 0 {
		return
	}
	copy(s.mean, model)
	fedavg.Mean(s.mean, replies, share, mu)
	for j := range model {
		model[j] += s.ServerStep * (s.mean[j] - model[j])
	}
	inv := 1 / float64(s.agents)
	for _, dc := range sides {
		for j, v := range dc {
			s.c[j] += v * inv
		}
	}
}

// scaffoldClient is the client's parameters (none); NewClient makes an
// agent's state.
type scaffoldClient struct{}

// NewClient implements fedavg.StatefulClient: an agent whose control
// variate c_i starts at zero.
func (scaffoldClient) NewClient(_ *fedavg.Config, dim int) fedavg.Client {
	return &scaffoldAgent{ci: make([]float64, dim)}
}

// scaffoldAgent is one agent's client and its state.
type scaffoldAgent struct {
	ci []float64 // c_i, kept between the agent's rounds
}

// Train implements fedavg.Client: local SGD on the corrected gradients,
// then c_i⁺ and the Δc_i sent back (Local.ToServer). Without a c from the
// server (a server that sends none) c counts as zero.
func (a *scaffoldAgent) Train(t *fedavg.Local) error {
	c := t.FromServer
	for range t.Epochs {
		idx, weights, err := t.Batch()
		if err != nil {
			return err
		}
		g := t.Gradient(idx, weights)
		for j := range g {
			g[j] -= a.ci[j]
			if c != nil {
				g[j] += c[j]
			}
		}
		t.Descend(g)
	}
	dc := make([]float64, len(a.ci))
	scale := 1 / (float64(t.Epochs) * t.Step)
	for j := range dc {
		next := a.ci[j] + (t.W0[j]-t.W[j])*scale
		if c != nil {
			next -= c[j]
		}
		dc[j] = next - a.ci[j]
		a.ci[j] = next
	}
	t.ToServer = dc
	return nil
}
