package fedplt

import "context"

// referencePLT is the flat recursion of Algorithm 1.
func referencePLT(ctx context.Context, cfg *Config, p *Problem, x0 [][]float64, open Streams, rounds int, mon *Monitor) (int, error) {
	n, dim := cfg.Agents, p.Dim()
	sampler := NewCoordinatorSampler(cfg, open)
	locals := NewLocals(cfg, p, open)
	x, z := clone(x0), clone(x0)
	y, avg, b := make([]float64, dim), make([]float64, dim), make([]float64, dim)
	for k := 1; k <= rounds; k++ {
		if err := interrupted(ctx, k); err != nil {
			return k - 1, err
		}
		mean(avg, z, nil)
		cfg.Prox.Apply(y, avg, cfg.Rho/float64(n))
		for _, i := range sampler.Draw(n) {
			for j := range b {
				b[j] = -(2*y[j] - z[i][j]) / cfg.Rho
			}
			g := locals[i].Run(x[i], 1/cfg.Rho, b, cfg.Epochs)
			for j := range z[i] {
				z[i][j] += 2 * (x[i][j] - y[j])
			}
			mon.Local(i, x[i])
			mon.Dual(i, z[i])
			mon.Charge(i, cfg.Costs.Charge(g, 1))
		}
		mon.Model(y)
		if mon.EndRound(k) {
			return k, nil
		}
	}
	return rounds, nil
}
