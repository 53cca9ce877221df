package fedavg

import (
	"math"

	"maple/algorithms/fedavg"
)

// q-FedAvg (Li, Sanjabi, Beirami and Smith, "Fair resource allocation in
// federated learning", ICLR 2020, Algorithm 2): the server minimizes
// Σ_k F_k^{q+1}/(q + 1), which for q > 0 weighs the clients whose loss F_k
// is high more than the mean does, so that the model serves its worst
// clients better. Each client reports its loss F_k(w) at the model w it
// received, then trains like local SGD to w_k; the server, from every reply
// with its loss, forms Δw_k = L·(w − w_k), Δ_k = F_k^q·Δw_k and
// h_k = q·F_k^{q−1}·‖Δw_k‖² + L·F_k^q, and steps w ← w − Σ_k Δ_k / Σ_k h_k.
// L estimates the Lipschitz constant of ∇F_k; the paper takes 1/η, η the
// local step size. With q = 0 it is FedAvg: w ← mean(w_k).

func init() {
	RegisterServer(Server{
		Name:   "qfedavg",
		Doc:    "q-FedAvg (Li et al. 2020): a step along the replies weighted by their clients' loss to the power q, for a fairer spread of losses",
		Params: qFedAvg{Q: 1},
		Client: "qfedavg",
	})
	Clients.Register("qfedavg", "q-FedAvg's client (Li et al. 2020): reports its loss F_k at the received model, then trains as local SGD", qFedAvgClient{})
}

// qFedAvg is the server's parameters, and its combination rule.
type qFedAvg struct {
	Q         float64 `yaml:"q" range:"[0, inf)" doc:"fairness exponent q: 0 is FedAvg, larger weighs high-loss clients more"`
	Lipschitz float64 `yaml:"lipschitz" range:"[0, inf)" doc:"L, the estimate of the Lipschitz constant of the clients' gradients; 0 takes the paper's 1/μ"`
}

// Combine implements fedavg.Rule for a caller without side vectors: no
// reply then carries its client's loss, none can be weighed, and the model
// is unchanged. The servers call CombineSides.
func (r qFedAvg) Combine(model []float64, replies [][]float64, share fedavg.Share, mu float64) {
	r.CombineSides(model, replies, make([][]float64, len(replies)), share, mu)
}

// CombineSides implements fedavg.SideRule: sides[i] is the loss F_k of
// replies[i]'s client at the model, a reply without one (the stand-in of a
// missing reply, an adversary that did not train) is left out, and without
// any the model is unchanged. Under update sharing the reply is
// ψ_k = (w − w_k)/μ, so Δw_k = L·μ·ψ_k.
func (r qFedAvg) CombineSides(model []float64, replies, sides [][]float64, share fedavg.Share, mu float64) {
	L := r.Lipschitz
	if L == 0 {
		L = 1 / mu
	}
	var sum []float64 // Σ_k Δ_k
	var h float64     // Σ_k h_k
	dw := make([]float64, len(model))
	for i, reply := range replies {
		if len(sides[i]) != 1 {
			continue
		}
		F := sides[i][0]
		var norm2 float64
		for j, v := range reply {
			if share == fedavg.Updates {
				dw[j] = L * mu * v
			} else {
				dw[j] = L * (model[j] - v)
			}
			norm2 += dw[j] * dw[j]
		}
		fq := math.Pow(F, r.Q)
		if sum == nil {
			sum = make([]float64, len(model))
		}
		for j, d := range dw {
			sum[j] += fq * d
		}
		h += L * fq
		if r.Q != 0 && norm2 != 0 {
			h += r.Q * math.Pow(F, r.Q-1) * norm2
		}
	}
	if sum == nil {
		return
	}
	for j, s := range sum {
		model[j] -= s / h
	}
}

// qFedAvgClient is the client's parameters (none), and its local solver.
type qFedAvgClient struct{}

// Train implements fedavg.Client: it sets Local.ToServer to the agent's
// loss F_k at the received model — its regularized empirical risk over its
// whole data set, charged as one evaluation per sample — and trains as
// local SGD.
func (qFedAvgClient) Train(t *fedavg.Local) error {
	t.ToServer = []float64{t.Loss.Risk(t.W0, t.Set)}
	t.Charge(t.Set.Len())
	return fedavg.SGD{}.Train(t)
}
