package fedplt

import "context"

// referenceLED is the flat recursion of LED.
func referenceLED(ctx context.Context, cfg *Config, p *Problem, x0 [][]float64, open Streams, rounds int, mon *Monitor) (int, error) {
	n, dim := cfg.Agents, p.Dim()
	locals := NewLocals(cfg, p, open)
	model, b := make([]float64, dim), make([]float64, dim)
	mean(model, x0, nil)
	phi, y := make([][]float64, n), make([][]float64, n)
	for i := range phi {
		phi[i], y[i] = make([]float64, dim), make([]float64, dim)
	}
	ratio := cfg.LEDBeta / cfg.Solvers[0].Step
	for k := 1; k <= rounds; k++ {
		if err := interrupted(ctx, k); err != nil {
			return k - 1, err
		}
		for i := range phi {
			if k > 1 {
				for j := range y[i] {
					y[i][j] += phi[i][j] - model[j]
				}
			}
			copy(phi[i], model)
			for j := range b {
				b[j] = ratio * y[i][j]
			}
			g := locals[i].Run(phi[i], 0, b, cfg.Epochs)
			mon.Charge(i, cfg.Costs.Charge(g, 1))
		}
		mean(model, phi, nil)
		mon.Model(model)
		if mon.EndRound(k) {
			return k, nil
		}
	}
	return rounds, nil
}
