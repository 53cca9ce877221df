package fedplt

import "context"

// referenceFiveGCS is the flat recursion of 5GCS.
func referenceFiveGCS(ctx context.Context, cfg *Config, p *Problem, x0 [][]float64, open Streams, rounds int, mon *Monitor) (int, error) {
	n, dim := cfg.Agents, p.Dim()
	locals := NewLocals(cfg, p, open)
	sampler := NewCoordinatorSampler(cfg, open)
	par := cfg.FiveGCS
	muN := par.Mu / float64(n)
	x, v, hat := make([]float64, dim), make([]float64, dim), make([]float64, dim)
	mean(x, x0, nil)
	u := make([][]float64, n)
	for i := range u {
		u[i] = make([]float64, dim)
	}
	y, b, g := make([]float64, dim), make([]float64, dim), make([]float64, dim)
	for k := 1; k <= rounds; k++ {
		if err := interrupted(ctx, k); err != nil {
			return k - 1, err
		}
		for j := range hat {
			hat[j] = (x[j] - par.Gamma*v[j]) / (1 + par.Gamma*par.Mu)
		}
		cohort := sampler.Draw(n)
		copy(x, hat)
		scale := par.Gamma * float64(n) / float64(len(cohort))
		for _, i := range cohort {
			for j := range b {
				b[j] = -par.Tau*hat[j] - u[i][j]
			}
			copy(y, hat)
			steps := locals[i].Run(y, par.Tau-muN, b, cfg.Epochs)
			p.Obj.Grad(g, y, p.Sets[i])
			for j := range g {
				g[j] -= muN * y[j]
				inc := g[j] - u[i][j]
				x[j] -= scale * inc
				v[j] += inc
				u[i][j] = g[j]
			}
			mon.Charge(i, cfg.Costs.Charge(steps+1, 1))
		}
		mon.Model(x)
		if mon.EndRound(k) {
			return k, nil
		}
	}
	return rounds, nil
}
