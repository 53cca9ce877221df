package fedavg

import "maple/algorithms/fedavg"

// FedAvgM (Hsu, Qi and Brown, "Measuring the effects of non-identical data
// distribution for federated visual classification", 2019): the server
// treats the change the round's mean would make, Δ = w − mean, as a
// gradient and descends along its momentum v ← βv + Δ, w ← w − η·v. With
// β = 0 and η = 1 it is FedAvg.

func init() {
	RegisterServer(Server{
		Name:   "fedavgm",
		Doc:    "FedAvgM (Hsu et al. 2019): server momentum on the round's change, v ← βv + (w − mean), w ← w − η·v",
		Params: fedAvgM{Beta: 0.9, ServerStep: 1},
	})
}

// fedAvgM is the server's parameters. Its state, the velocity, is each
// server's own: NewRule makes it.
type fedAvgM struct {
	Beta       float64 `yaml:"beta" range:"[0, 1)" doc:"momentum β of the server's velocity (0: FedAvg with a server step)"`
	ServerStep float64 `yaml:"server_step" range:"(0, inf)" doc:"server step η applied to the velocity (1: the round's mean when β = 0)"`
}

// NewRule implements fedavg.StatefulRule: a server whose velocity starts at
// zero.
func (p fedAvgM) NewRule(_ *fedavg.Config, dim int) fedavg.Rule {
	return &fedAvgMServer{fedAvgM: p, velocity: make([]float64, dim), mean: make([]float64, dim)}
}

// fedAvgMServer is one server's rule and its state.
type fedAvgMServer struct {
	fedAvgM
	velocity []float64 // v, kept from round to round
	mean     []float64 // scratch: the model the round's mean would give
}

// Combine implements fedavg.Rule. A round without replies changes neither
// the model nor the velocity.
func (s *fedAvgMServer) Combine(model []float64, replies [][]float64, share fedavg.Share, mu float64) {
	if len(replies) == 0 {
		return
	}
	copy(s.mean, model)
	fedavg.Mean(s.mean, replies, share, mu) // what FedAvg would make of the model
	for j, v := range s.velocity {
		v = s.Beta*v + (model[j] - s.mean[j])
		s.velocity[j] = v
		model[j] -= s.ServerStep * v
	}
}
