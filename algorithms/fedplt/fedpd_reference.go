package fedplt

import "context"

// referenceFedPD is the flat recursion of FedPD.
func referenceFedPD(ctx context.Context, cfg *Config, p *Problem, x0 [][]float64, open Streams, rounds int, mon *Monitor) (int, error) {
	n, dim := cfg.Agents, p.Dim()
	locals := NewLocals(cfg, p, open)
	centre := make([]float64, dim)
	mean(centre, x0, nil)
	x := make([][]float64, n)
	lam, cand := make([][]float64, n), make([][]float64, n)
	for i := range x {
		x[i] = append([]float64(nil), centre...)
		lam[i], cand[i] = make([]float64, dim), make([]float64, dim)
	}
	b := make([]float64, dim)
	eta := cfg.FedPDEta
	for k := 1; k <= rounds; k++ {
		if err := interrupted(ctx, k); err != nil {
			return k - 1, err
		}
		for i := range x {
			for j := range b {
				b[j] = lam[i][j] - centre[j]/eta
			}
			g := locals[i].Run(x[i], 1/eta, b, cfg.Epochs)
			for j := range b {
				lam[i][j] += (x[i][j] - centre[j]) / eta
				cand[i][j] = x[i][j] + eta*lam[i][j]
			}
			mon.Charge(i, cfg.Costs.Charge(g, 1))
		}
		mean(centre, cand, nil)
		mon.Model(centre)
		if mon.EndRound(k) {
			return k, nil
		}
	}
	return rounds, nil
}
