package fedavg

import "maple/algorithms/fedavg"

// FedProx (Li, Sahu, Zaheer, Sanjabi, Talwalkar and Smith, "Federated
// optimization in heterogeneous networks", MLSys 2020): each client
// minimizes its local loss plus the proximal term (μ/2)·‖w − w_global‖²,
// which keeps long local runs from drifting toward the client's own
// minimizer.

func init() {
	Clients.Register("fedprox", "FedProx (Li et al. 2020): local SGD on the loss plus (mu/2)·‖w − w_global‖²", fedProx{Mu: 0.1})
}

// fedProx is the client's parameters, and its local solver.
type fedProx struct {
	Mu float64 `yaml:"mu" range:"[0, inf)" doc:"weight μ of the proximal term (0: plain local SGD)"`
}

// Train implements fedavg.Client: local SGD whose every gradient gains the
// proximal term's, μ·(w − w_global).
func (p fedProx) Train(t *fedavg.Local) error {
	for range t.Epochs {
		idx, weights, err := t.Batch()
		if err != nil {
			return err
		}
		g := t.Gradient(idx, weights)
		for j := range g {
			g[j] += p.Mu * (t.W[j] - t.W0[j])
		}
		t.Descend(g)
	}
	return nil
}
