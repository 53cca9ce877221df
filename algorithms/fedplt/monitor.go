package fedplt

import (
	"math"

	"gonum.org/v1/gonum/floats"

	"maple/algorithms/data"
)

// divergence is the factor by which the stationarity must exceed its initial
// value (or 1) for a run to count as diverged: far beyond any transient of a
// converging run, and reached long before the iterates overflow.
const divergence = 1e30

// Record holds the metrics of one round.
type Record struct {
	// Round is k (0 for the initial state).
	Round int
	// Stationarity is ‖G(x̄_k)‖² with G(x) = x − prox_h(x − Σ_i ∇f_i(x)), which
	// is ‖Σ_i ∇f_i(x̄_k)‖², the paper's stopping metric, when h = 0.
	Stationarity float64
	// Distance is ‖x̄_k − x⋆‖² to the reference solution.
	Distance float64
	// Cost is the ledger: the cumulative charge of every active agent.
	Cost float64
	// Stacked is ‖[x_k − x̄; z_k − z̄]‖ over all agents (Fed-PLT only, else 0),
	// the quantity Propositions 1–2 bound.
	Stacked float64
	// X is x̄_k: the mean of the local models for Fed-PLT, the coordinator's
	// model for the baselines.
	X []float64
}

// Monitor computes the metrics of a run from what the parties report: the
// agents' local models and (Fed-PLT) auxiliary variables, the coordinator's
// model, and the ledger charges. It stands outside the protocol, with a
// read-only global view, and decides when the run stops: at the first round
// whose stationarity is at most the tolerance, or when it is no longer
// finite or exceeds 10³⁰ times its initial value (divergence). Both engines feed the same Monitor.
type Monitor struct {
	obj     Objective
	sets    []*data.Set
	prox    Prox
	opt     []float64
	zOpt    [][]float64
	tol     float64
	local   bool
	x, z    [][]float64
	model   []float64
	cost    float64
	charges []float64
	initial float64 // the stationarity of round 0
	g, s, w []float64

	// Records are the metrics of rounds 0, 1, … up to the last one run.
	Records []Record
	// Converged is the first round that met the tolerance and Diverged the
	// round at which the metric stopped being finite; −1 until it happens.
	Converged, Diverged int
	// OnRound, if set, is told the local models x_{i,k} at the end of every
	// round k ≥ 1 (read-only, valid during the call): what a privacy
	// audit of the final models sees.
	OnRound func(k int, x [][]float64)
}

// NewMonitor returns the monitor of a run of method m on sets, measured
// against the reference solution opt, with the initial local models x0 and
// auxiliary variables z0 (z0 is used by Fed-PLT only). It records round 0.
// rho is Fed-PLT's ρ (for the fixed point z̄_i = x⋆ − ρ∇f_i(x⋆)); tol ≤ 0
// never stops.
func NewMonitor(m Method, obj Objective, sets []*data.Set, prox Prox, opt []float64, rho, tol float64, x0, z0 [][]float64) *Monitor {
	dim := len(opt)
	mon := &Monitor{obj: obj, sets: sets, prox: prox, opt: opt, tol: tol, local: m == PLT,
		model: make([]float64, dim), g: make([]float64, dim), s: make([]float64, dim), w: make([]float64, dim),
		charges: make([]float64, len(sets)), Converged: -1, Diverged: -1}
	mon.x = clone(x0)
	if m == PLT {
		mon.z = clone(z0)
		mon.zOpt = make([][]float64, len(sets))
		for i, set := range sets {
			mon.zOpt[i] = make([]float64, dim)
			obj.Grad(mon.g, opt, set)
			floats.AddScaledTo(mon.zOpt[i], opt, -rho, mon.g)
		}
	}
	meanOf(mon.model, mon.x)
	mon.EndRound(0)
	return mon
}

func clone(v [][]float64) [][]float64 {
	out := make([][]float64, len(v))
	for i := range v {
		out[i] = append([]float64(nil), v[i]...)
	}
	return out
}

func meanOf(dst []float64, v [][]float64) {
	clear(dst)
	for _, x := range v {
		floats.Add(dst, x)
	}
	floats.Scale(1/float64(len(v)), dst)
}

// Local records agent i's new local model.
func (m *Monitor) Local(i int, x []float64) { copy(m.x[i], x) }

// Dual records agent i's new auxiliary variable z_i (Fed-PLT).
func (m *Monitor) Dual(i int, z []float64) { copy(m.z[i], z) }

// Model records the coordinator's model (the baselines' x̄).
func (m *Monitor) Model(x []float64) { copy(m.model, x) }

// Charge adds a charge of agent i to the ledger. The round's charges are
// summed in agent order at EndRound, whatever order they arrive in.
func (m *Monitor) Charge(i int, c float64) { m.charges[i] += c }

// Stationarity returns ‖x − prox_h(x − Σ_i ∇f_i(x))‖².
func (m *Monitor) Stationarity(x []float64) float64 {
	clear(m.s)
	for _, set := range m.sets {
		m.obj.Grad(m.g, x, set)
		floats.Add(m.s, m.g)
	}
	if m.prox.Kind == Zero {
		return floats.Dot(m.s, m.s)
	}
	floats.SubTo(m.w, x, m.s)
	m.prox.Apply(m.w, m.w, 1)
	floats.Sub(m.w, x)
	return floats.Dot(m.w, m.w)
}

// EndRound computes the metrics of round k from what has been reported and
// returns whether the run should stop.
func (m *Monitor) EndRound(k int) (stop bool) {
	if m.local {
		meanOf(m.model, m.x)
	}
	for i, c := range m.charges {
		m.cost += c
		m.charges[i] = 0
	}
	r := Record{Round: k, Cost: m.cost, Stationarity: m.Stationarity(m.model), X: append([]float64(nil), m.model...)}
	d := floats.Distance(m.model, m.opt, 2)
	r.Distance = d * d
	if m.local {
		var s float64
		for i := range m.x {
			a := floats.Distance(m.x[i], m.opt, 2)
			b := floats.Distance(m.z[i], m.zOpt[i], 2)
			s += a*a + b*b
		}
		r.Stacked = math.Sqrt(s)
	}
	m.Records = append(m.Records, r)
	if m.OnRound != nil && k > 0 {
		m.OnRound(k, m.x)
	}
	if k == 0 {
		m.initial = r.Stationarity
	}
	switch {
	case math.IsNaN(r.Stationarity) || r.Stationarity > divergence*math.Max(1, m.initial):
		m.Diverged = k
		return true
	case m.tol > 0 && r.Stationarity <= m.tol:
		if m.Converged < 0 {
			m.Converged = k
		}
		return true
	}
	return false
}

// Done reports whether the run has converged or diverged.
func (m *Monitor) Done() bool { return m.Diverged >= 0 || m.Converged >= 0 }
