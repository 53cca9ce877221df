package fedavg

import "maple/algorithms/fedavg"

// FedNova (Wang, Liu, Liang, Joshi and Poor, "Tackling the objective
// inconsistency problem in heterogeneous federated optimization", NeurIPS
// 2020): when clients run different numbers of local steps τ_i, the plain
// mean of their models weights each client by its τ_i, and FedAvg converges
// to the minimizer of that weighted objective rather than the true one.
// FedNova averages the normalized changes instead, each divided by its own
// τ_i, and rescales their mean by the mean number of steps:
//
//	x ← x − η_g · τ_eff · mean((x − y_i)/τ_i),  τ_eff = mean(τ_i)
//
// (the paper's eq. 7 for local SGD, whose a_i has ‖a_i‖₁ = τ_i, with the
// uniform weights p_i = 1/m of the round's m replies). The client is local
// SGD that reports its τ_i with its reply.

func init() {
	RegisterServer(Server{
		Name:   "fednova",
		Doc:    "FedNova (Wang et al. 2020): the mean of the clients' changes each normalized by its number of local steps τ_i, rescaled by the mean τ",
		Params: fedNova{ServerStep: 1},
		Client: "fednova",
	})
	Clients.Register("fednova", "FedNova's client (Wang et al. 2020): local SGD that reports its number of local steps τ_i with its reply", fedNovaClient{})
}

// fedNova is the server's parameters and its rule (it keeps no state).
type fedNova struct {
	ServerStep float64 `yaml:"server_step" range:"(0, inf)" doc:"global step η_g (1: the paper's FedNova)"`
}

// Combine implements fedavg.Rule: without the clients' step counts every
// reply counts one step, which is the mean of the changes.
func (p fedNova) Combine(model []float64, replies [][]float64, share fedavg.Share, mu float64) {
	p.CombineSides(model, replies, make([][]float64, len(replies)), share, mu)
}

// CombineSides implements fedavg.SideRule: sides[i] is [τ_i]. A reply
// without one (a missing client's stand-in, an adversary that did not
// train) counts one step.
func (p fedNova) CombineSides(model []float64, replies, sides [][]float64, share fedavg.Share, mu float64) {
	n := len(replies)
	if n == 0 {
		return
	}
	steps := make([]float64, n)
	var total float64
	for i, s := range sides {
		steps[i] = 1
		if len(s) == 1 && s[0] >= 1 {
			steps[i] = s[0]
		}
		total += steps[i]
	}
	scale := p.ServerStep * total / float64(n) / float64(n) // η_g·τ_eff/m
	for j := range model {
		var sum float64 // Σ (x − y_i)/τ_i
		for i, r := range replies {
			d := r[j] * mu // update sharing: ψ_i = (x − y_i)/μ
			if share == fedavg.Models {
				d = model[j] - r[j]
			}
			sum += d / steps[i]
		}
		model[j] -= scale * sum
	}
}

// fedNovaClient is the client: local SGD that reports its τ_i.
type fedNovaClient struct{}

// Train implements fedavg.Client.
func (fedNovaClient) Train(t *fedavg.Local) error {
	if err := (fedavg.SGD{}).Train(t); err != nil {
		return err
	}
	t.ToServer = []float64{float64(t.Epochs)}
	return nil
}
