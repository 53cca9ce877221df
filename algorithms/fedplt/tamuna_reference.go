package fedplt

import "context"

// referenceTamuna is the flat recursion of TAMUNA.
func referenceTamuna(ctx context.Context, cfg *Config, p *Problem, x0 [][]float64, open Streams, rounds int, mon *Monitor) (int, error) {
	n, dim := cfg.Agents, p.Dim()
	locals := NewLocals(cfg, p, open)
	sampler := NewCoordinatorSampler(cfg, open)
	epochs := open(CoordinatorName, "epochs")
	model := make([]float64, dim)
	mean(model, x0, nil)
	x, h := make([][]float64, n), make([][]float64, n)
	for i := range x {
		x[i], h[i] = make([]float64, dim), make([]float64, dim)
	}
	negH := make([]float64, dim)
	ratio := cfg.TamunaEta / cfg.Solvers[0].Step
	for k := 1; k <= rounds; k++ {
		if err := interrupted(ctx, k); err != nil {
			return k - 1, err
		}
		cohort := sampler.Draw(n)
		steps := GeometricSteps(cfg.Epochs, epochs)
		for _, i := range cohort {
			copy(x[i], model)
			for j := range negH {
				negH[j] = -h[i][j]
			}
			g := locals[i].Run(x[i], 0, negH, steps)
			mon.Charge(i, cfg.Costs.Charge(g, 1))
		}
		mean(model, x, cohort)
		for _, i := range cohort {
			for j := range h[i] {
				h[i][j] += ratio * (model[j] - x[i][j])
			}
		}
		mon.Model(model)
		if mon.EndRound(k) {
			return k, nil
		}
	}
	return rounds, nil
}
