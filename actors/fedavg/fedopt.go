package fedavg

import (
	"math"

	"maple/algorithms/fedavg"
)

// FedAdagrad, FedAdam and FedYogi (Reddi, Charles, Zaheer, Garrett, Rush,
// Konečný, Kumar and McMahan, "Adaptive federated optimization", ICLR 2021,
// Algorithm 2): the server treats the mean displacement of the round's
// replies, Δ = mean(w_k) − w, as a pseudo-gradient and takes a step of an
// adaptive optimizer along it,
//
//	m ← β₁·m + (1 − β₁)·Δ
//	v ← v + Δ²                               (Adagrad)
//	v ← β₂·v + (1 − β₂)·Δ²                   (Adam)
//	v ← v − (1 − β₂)·Δ²·sign(v − Δ²)         (Yogi)
//	w ← w + η·m / (√v + τ)
//
// coordinate-wise, from m = 0 and v = τ² (the paper's v₋₁ ≥ τ²; it has no
// bias correction). Each server keeps its own m and v for the run.

func init() {
	RegisterServer(Server{
		Name:   "fedadagrad",
		Doc:    "FedAdagrad (Reddi et al. 2021): an Adagrad step of server learning rate eta along the mean displacement of the replies",
		Params: fedAdagrad{adaptivity: adaptivity{Eta: 0.1, Beta1: 0.9, Tau: 1e-3}},
	})
	RegisterServer(Server{
		Name:   "fedadam",
		Doc:    "FedAdam (Reddi et al. 2021): an Adam step of server learning rate eta along the mean displacement of the replies",
		Params: fedAdam{adaptivity: adaptivity{Eta: 0.01, Beta1: 0.9, Tau: 1e-3}, Beta2: 0.99},
	})
	RegisterServer(Server{
		Name:   "fedyogi",
		Doc:    "FedYogi (Reddi et al. 2021): a Yogi step of server learning rate eta along the mean displacement of the replies",
		Params: fedYogi{adaptivity: adaptivity{Eta: 0.01, Beta1: 0.9, Tau: 1e-3}, Beta2: 0.99},
	})
}

// adaptivity is the parameters the three optimizers share.
type adaptivity struct {
	Eta   float64 `yaml:"eta" range:"(0, inf)" doc:"server learning rate η"`
	Beta1 float64 `yaml:"beta1" range:"[0, 1)" doc:"decay β₁ of the first moment m (0: no momentum)"`
	Tau   float64 `yaml:"tau" range:"(0, inf)" doc:"adaptivity τ, added to √v; v starts at τ²"`
}

// fedAdagrad is FedAdagrad's parameters.
type fedAdagrad struct {
	adaptivity `yaml:",inline"`
}

// fedAdam is FedAdam's parameters.
type fedAdam struct {
	adaptivity `yaml:",inline"`
	Beta2      float64 `yaml:"beta2" range:"[0, 1)" doc:"decay β₂ of the second moment v"`
}

// fedYogi is FedYogi's parameters, FedAdam's.
type fedYogi fedAdam

// NewRule implements fedavg.StatefulRule.
func (p fedAdagrad) NewRule(_ *fedavg.Config, dim int) fedavg.Rule {
	return newServerOptimizer(adagrad, p.adaptivity, 0, dim)
}

// NewRule implements fedavg.StatefulRule.
func (p fedAdam) NewRule(_ *fedavg.Config, dim int) fedavg.Rule {
	return newServerOptimizer(adam, p.adaptivity, p.Beta2, dim)
}

// NewRule implements fedavg.StatefulRule.
func (p fedYogi) NewRule(_ *fedavg.Config, dim int) fedavg.Rule {
	return newServerOptimizer(yogi, p.adaptivity, p.Beta2, dim)
}

// secondMoment selects the update of v.
type secondMoment int

const (
	adagrad secondMoment = iota
	adam
	yogi
)

// serverOptimizer is the rule of one server: the parameters, and the
// moments m and v.
type serverOptimizer struct {
	variant secondMoment
	adaptivity
	beta2    float64
	m, v, dw []float64 // dw is scratch for Δ
}

func newServerOptimizer(variant secondMoment, a adaptivity, beta2 float64, dim int) *serverOptimizer {
	o := &serverOptimizer{variant: variant, adaptivity: a, beta2: beta2,
		m: make([]float64, dim), v: make([]float64, dim), dw: make([]float64, dim)}
	for j := range o.v {
		o.v[j] = a.Tau * a.Tau
	}
	return o
}

// Combine implements fedavg.Rule: one step of the optimizer along the
// replies' mean displacement (meanDisplacement). Without replies the model
// and the moments are unchanged.
func (o *serverOptimizer) Combine(model []float64, replies [][]float64, share fedavg.Share, mu float64) {
	if len(replies) == 0 {
		return
	}
	meanDisplacement(o.dw, model, replies, share, mu)
	for j, d := range o.dw {
		o.m[j] = o.Beta1*o.m[j] + (1-o.Beta1)*d
		d2 := d * d
		switch o.variant {
		case adagrad:
			o.v[j] += d2
		case adam:
			o.v[j] = o.beta2*o.v[j] + (1-o.beta2)*d2
		case yogi:
			o.v[j] -= (1 - o.beta2) * d2 * sign(o.v[j]-d2)
		}
		model[j] += o.Eta * o.m[j] / (math.Sqrt(o.v[j]) + o.Tau)
	}
}

// sign returns −1, 0 or 1 as x is negative, zero or positive.
func sign(x float64) float64 {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}

// meanDisplacement sets dst to the mean displacement of the replies from
// the model w they were trained from: mean(w_k) − w under model sharing,
// and −μ·mean(ψ_k) under update sharing, whose replies are
// ψ_k = (w − w_k)/μ. It needs at least one reply.
func meanDisplacement(dst, model []float64, replies [][]float64, share fedavg.Share, mu float64) {
	inv := 1 / float64(len(replies))
	for j := range dst {
		var sum float64
		for _, r := range replies {
			sum += r[j]
		}
		if share == fedavg.Updates {
			dst[j] = -mu * sum * inv
		} else {
			dst[j] = sum*inv - model[j]
		}
	}
}
