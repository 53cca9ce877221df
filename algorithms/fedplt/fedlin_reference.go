package fedplt

import "context"

// referenceFedLin is the flat recursion of FedLin.
func referenceFedLin(ctx context.Context, cfg *Config, p *Problem, x0 [][]float64, open Streams, rounds int, mon *Monitor) (int, error) {
	n, dim := cfg.Agents, p.Dim()
	locals := NewLocals(cfg, p, open)
	model, g, b := make([]float64, dim), make([]float64, dim), make([]float64, dim)
	mean(model, x0, nil)
	grads, models := make([][]float64, n), make([][]float64, n)
	for i := range grads {
		grads[i], models[i] = make([]float64, dim), make([]float64, dim)
	}
	for k := 1; k <= rounds; k++ {
		if err := interrupted(ctx, k); err != nil {
			return k - 1, err
		}
		for i := range grads {
			p.Obj.Grad(grads[i], model, p.Sets[i])
		}
		mean(g, grads, nil)
		for i := range models {
			for j := range b {
				b[j] = g[j] - grads[i][j]
			}
			copy(models[i], model)
			steps := locals[i].Run(models[i], 0, b, cfg.Epochs)
			mon.Charge(i, cfg.Costs.Charge(1, 1))
			mon.Charge(i, cfg.Costs.Charge(steps, 1))
		}
		mean(model, models, nil)
		mon.Model(model)
		if mon.EndRound(k) {
			return k, nil
		}
	}
	return rounds, nil
}
