package fedavg

import (
	"maple/algorithms/fedavg"
	"maple/scenarios/run"
)

// roundSizes keeps what a run of poisson participation observes of its
// rounds' sizes (fedavg.ObsDraws), which the bytes of a round depend on,
// and reports them in the summary: the sampling, the sizes drawn, and the
// rounds that drew no agent or too few for secure aggregation.
type roundSizes struct {
	cfg     *fedavg.Config
	n       []int // per round, the agents drawn; −1 before the round
	skipped int   // rounds secure aggregation skipped (fewer than 2 clients)
}

func newRoundSizes(cfg *fedavg.Config, iterations int) *roundSizes {
	r := &roundSizes{cfg: cfg, n: make([]int, iterations+1)}
	for i := range r.n {
		r.n[i] = -1
	}
	return r
}

// observe records a round's size; it reports whether the key was one of
// its own.
func (r *roundSizes) observe(round int, key string, v []float64) bool {
	switch key {
	case fedavg.ObsDraws:
		if round >= 0 && round < len(r.n) {
			r.n[round] = int(v[0])
		}
	case fedavg.ObsSecAggSkipped:
		r.skipped++
	default:
		return false
	}
	return true
}

// draws returns the number of agents drawn in round: the configuration's
// under fixed-size participation, the observed one under Poisson (0 for a
// round not observed).
func (r *roundSizes) draws(round int) int {
	if !r.cfg.Variable() {
		return r.cfg.Draws()
	}
	return max(r.n[round], 0)
}

// finish writes, under poisson participation, a warning for the rounds
// that drew nobody and, for run 0, the details.
func (r *roundSizes) finish(j *run.Job) {
	if !r.cfg.Variable() {
		return
	}
	empty, lo, hi, total, rounds := 0, -1, 0, 0, 0
	for _, n := range r.n[1:] {
		if n < 0 {
			continue
		}
		rounds++
		total += n
		hi = max(hi, n)
		if lo < 0 || n < lo {
			lo = n
		}
		if n == 0 {
			empty++
		}
	}
	if empty > 0 {
		what := "the model was not updated in them"
		if r.cfg.DP.Mode != fedavg.NoDP {
			what = "the server released its noise alone in them, and the ledger accounts for them"
		}
		j.Stats.Warnings = append(j.Stats.Warnings, "some rounds of poisson participation drew no agent: "+what+"; the summary counts them under participation.empty_rounds")
	}
	if r.skipped > 0 {
		j.Stats.Warnings = append(j.Stats.Warnings, "some rounds of poisson participation drew fewer than 2 agents, too few for secure aggregation: nobody trained in them and the model was not updated; the summary counts them under participation.secure_aggregation_skipped")
	}
	if j.Run != 0 {
		return
	}
	d := map[string]any{
		"kind":         fedavg.Poisson.String(),
		"rate":         r.cfg.Rate(),
		"expected":     r.cfg.Draws(),
		"sampling":     "each agent takes part in each round independently with probability q = L/K, drawn as geometric gaps between the agents taken from the server's participation stream",
		"empty_rounds": empty,
	}
	if r.cfg.DP.Mode != fedavg.NoDP {
		d["denominator"] = "DP-FedAvg divides the noisy sum by L = qK whatever the round's size (McMahan et al. 2018's fixed-denominator estimator)"
	}
	if rounds > 0 {
		d["min_draws"], d["max_draws"], d["mean_draws"] = lo, hi, float64(total)/float64(rounds)
	}
	if r.cfg.SecAgg != nil {
		d["secure_aggregation_skipped"] = r.skipped
	}
	j.Stats.Details["participation"] = d
}
