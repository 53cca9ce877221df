package fedavg

import (
	"fmt"

	"maple/algorithms/fedavg"
)

// FedDyn (Acar, Zhao, Matas, Mattina, Whatmough and Saligrama, "Federated
// learning based on dynamic regularization", ICLR 2021, Algorithm 1): each
// client k minimizes its loss with a linear and a proximal term,
//
//	θ_k ← argmin L_k(θ) − ⟨∇L_k(θ_k'), θ⟩ + (α/2)·‖θ − θ^{t−1}‖²,
//
// where ∇L_k(θ_k') is the gradient at its previous local model, which it
// keeps as ∇L_k(θ_k') ← ∇L_k(θ_k') − α·(θ_k − θ^{t−1}) (the first-order
// condition of the problem it solved; 0 before its first round). The server
// keeps h ← h − (α/K)·Σ_{k∈P}(θ_k − θ^{t−1}) over the round's participants P
// among the K agents, and sets θ^t = mean_{k∈P}(θ_k) − h/α. The linear
// terms make the clients' stationary points agree with the global one, so
// that long local runs on heterogeneous data do not drift. α is the
// client's parameter; the server reads the same α from the configuration
// (one α for both, as in the paper).

func init() {
	RegisterServer(Server{
		Name:   "feddyn",
		Doc:    "FedDyn (Acar et al. 2021): the mean of the replies minus h/α, h accumulating the clients' displacements (α: the feddyn client's alpha)",
		Params: fedDynServer{},
		Client: "feddyn",
	})
	Clients.Register("feddyn", "FedDyn (Acar et al. 2021): local SGD on the loss minus ⟨∇L_k at the previous local model, w⟩ plus (alpha/2)·‖w − w_global‖²", fedDyn{Alpha: 0.01})
}

// fedDyn is the client's parameters.
type fedDyn struct {
	Alpha float64 `yaml:"alpha" range:"(0, inf)" doc:"weight α of the dynamic regularizer, which the feddyn server uses too"`
}

// NewClient implements fedavg.StatefulClient.
func (p fedDyn) NewClient(_ *fedavg.Config, dim int) fedavg.Client {
	return &fedDynClient{alpha: p.Alpha, grad: make([]float64, dim)}
}

// fedDynClient is the client of one agent: α, and ∇L_k at its previous
// local model.
type fedDynClient struct {
	alpha float64
	grad  []float64
}

// Train implements fedavg.Client: local SGD whose every gradient gains the
// regularizer's, α·(w − w_global) − ∇L_k(θ_k'), then the update of
// ∇L_k(θ_k').
func (c *fedDynClient) Train(t *fedavg.Local) error {
	for range t.Epochs {
		idx, weights, err := t.Batch()
		if err != nil {
			return err
		}
		g := t.Gradient(idx, weights)
		for j := range g {
			g[j] += c.alpha*(t.W[j]-t.W0[j]) - c.grad[j]
		}
		t.Descend(g)
	}
	for j := range c.grad {
		c.grad[j] -= c.alpha * (t.W[j] - t.W0[j])
	}
	return nil
}

// fedDynServer is the server's parameters: none, α being the client's.
type fedDynServer struct{}

// Validate refuses a configuration whose agents do not run the feddyn
// client, whose α the server needs.
func (fedDynServer) Validate(cfg *fedavg.Config) error {
	switch c := cfg.ClientBehaviour().(type) {
	case fedDyn:
		return nil
	case nil:
		return fmt.Errorf("the feddyn server needs the feddyn client, whose alpha it uses; the agents run local SGD")
	default:
		return fmt.Errorf("the feddyn server needs the feddyn client, whose alpha it uses; the agents run %T", c)
	}
}

// NewRule implements fedavg.StatefulRule. It panics if cfg fails Validate:
// both engines validate the configuration before building its servers.
func (s fedDynServer) NewRule(cfg *fedavg.Config, dim int) fedavg.Rule {
	if err := s.Validate(cfg); err != nil {
		panic("fedavg: " + err.Error())
	}
	return &fedDynRule{alpha: cfg.ClientBehaviour().(fedDyn).Alpha, agents: cfg.Agents, h: make([]float64, dim), dw: make([]float64, dim)}
}

// fedDynRule is the rule of one server: α, K and h.
type fedDynRule struct {
	alpha  float64
	agents int
	h, dw  []float64 // dw is scratch for the mean displacement
}

// Combine implements fedavg.Rule: with n replies of mean displacement Δ
// (meanDisplacement), h ← h − α·(n/K)·Δ and w ← w + Δ − h/α. Without
// replies the model and h are unchanged.
func (r *fedDynRule) Combine(model []float64, replies [][]float64, share fedavg.Share, mu float64) {
	if len(replies) == 0 {
		return
	}
	meanDisplacement(r.dw, model, replies, share, mu)
	scale := r.alpha * float64(len(replies)) / float64(r.agents)
	for j, d := range r.dw {
		r.h[j] -= scale * d
		model[j] += d - r.h[j]/r.alpha
	}
}
