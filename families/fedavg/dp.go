package fedavg

import (
	"cmp"
	"fmt"
	"slices"

	"gonum.org/v1/gonum/floats"

	"maple/algorithms/fedavg"
	"maple/algorithms/rng"
	"maple/privacy/onerun"
	"maple/scenarios/run"
)

// dpReport writes the guarantees of a DP run into the summary (run 0):
// under "privacy" the client-level guarantee of DP-FedAvg, under
// "sample_privacy" the sample-level one of a DP-SGD client, each with its
// ε after every round.
func dpReport(j *run.Job, cfg *fedavg.Config, l *privacyLog) {
	if j.Run != 0 {
		return
	}
	byRound := func(level int) []float64 {
		eps := make([]float64, 0, len(l.eps)-1)
		for _, e := range l.eps[1:] {
			eps = append(eps, e[level])
		}
		return eps
	}
	if d := &cfg.DP; d.Mode != fedavg.NoDP {
		m := cfg.RoundMechanism(l.dim, cfg.Draws())
		r := map[string]any{
			"mechanism":        "DP-FedAvg (McMahan et al. 2018), " + d.Mode.String() + " noise",
			"level":            "client",
			"relation":         m.Relation.String(),
			"sampling":         m.Sampling.String(),
			"sampling_rate":    m.Rate,
			"neighbouring":     relationWords(m.Relation),
			"adversary":        "sees the models the server releases, not which agents took part in a round",
			"participation":    participationWords(cfg, m),
			"bound":            cfg.RoundAccountant().Bound(m),
			"clip":             d.Clip,
			"noise_multiplier": d.NoiseMultiplier,
			"delta":            d.Delta,
			"epsilon_by_round": byRound(0),
			"epsilon_final":    l.eps[len(l.eps)-1][0],
		}
		if d.Mode == fedavg.DistributedDP {
			r["grid_step"], r["client_noise"], r["tau"] = m.DDG.Gamma, m.DDG.Sigma, m.DDG.Tau()
			r["beta"] = d.Beta
		} else if d.Adaptive != nil {
			z, _ := d.Adaptive.UpdateNoiseMultiplier(d.NoiseMultiplier) // validated
			r["adaptive_clip"] = map[string]any{"quantile": d.Adaptive.Quantile, "learning_rate": d.Adaptive.LearningRate,
				"count_noise": d.Adaptive.CountNoise, "update_noise_multiplier": z}
		}
		j.Stats.Details["privacy"] = r
	}
	if p, ok := cfg.Client.(fedavg.PrivateClient); ok {
		j.Stats.Details["sample_privacy"] = map[string]any{
			"mechanism":        p.Mechanism(),
			"level":            "sample",
			"adversary":        "sees every update the agent with the largest sampling rate sends, as if it took part in every round",
			"steps_per_round":  cfg.Epochs.Max,
			"sampling_rate":    float64(cfg.Batch.Max) / float64(l.minSamples),
			"delta":            p.SampleDelta(),
			"conversion":       "Rényi DP to (ε, δ) by Balle et al. 2020, Thm 21, over the orders of accountant.DefaultOrders",
			"epsilon_by_round": byRound(1),
			"epsilon_final":    l.eps[len(l.eps)-1][1],
		}
	}
}

// relationWords says what the neighbouring relation r means for DP-FedAvg.
func relationWords(r fedavg.Relation) string {
	if r == fedavg.AddRemove {
		return "add-remove: one agent added or removed, so the sum of updates clipped to C moves by up to C"
	}
	return "replace-one: one agent's whole local dataset replaced, so the sum of updates clipped to C moves by up to 2C"
}

// participationWords says how the agents of a round were drawn, as the
// accountant takes it.
func participationWords(cfg *fedavg.Config, m fedavg.RoundMechanism) string {
	switch cfg.Participation {
	case fedavg.Poisson:
		return fmt.Sprintf("each of %d agents independently with probability q = %g per round (Poisson sampling; %d expected, the estimator's fixed denominator)", cfg.Agents, m.Rate, cfg.Draws())
	case fedavg.Full:
		return fmt.Sprintf("all %d agents in every round (q = 1)", cfg.Agents)
	}
	return fmt.Sprintf("%d of %d agents per round without replacement (fixed-size sampling), q = %g", cfg.Draws(), cfg.Agents, m.Rate)
}

// auditor is the one-run audit of DP-FedAvg (algorithms/fedavg/audit.go):
// it knows the canaries from their streams, scores each by how far the
// released models moved along its direction, and guesses.
type auditor struct {
	canaries []fedavg.Canary
	scores   []float64
	prev     []float64
	delta    []float64
}

// newAuditor opens every agent's StreamCanary stream, as the agents do.
func newAuditor(cfg *fedavg.Config, runSeed uint64, w0 []float64) *auditor {
	a := &auditor{prev: append([]float64(nil), w0...), delta: make([]float64, len(w0))}
	for k := range cfg.Agents {
		if c := cfg.CanaryOf(rng.New(runSeed, fedavg.AgentName(k), fedavg.StreamCanary), len(w0)); c.Canary {
			a.canaries = append(a.canaries, c)
		}
	}
	a.scores = make([]float64, len(a.canaries))
	return a
}

// release scores the canaries on a released model: the step w_{i−1} − w_i
// along each direction (an included canary pushes the model by −C·u/L when
// drawn).
func (a *auditor) release(w []float64) {
	floats.SubTo(a.delta, a.prev, w)
	for i, c := range a.canaries {
		a.scores[i] += floats.Dot(a.delta, c.Direction)
	}
	copy(a.prev, w)
}

// report guesses "in" for the guesses/2 best scores and "out" for as many
// of the worst (guesses 0: every canary, split at the median), counts the
// right guesses, and writes the lower bound on ε beside the accountant's.
func (a *auditor) report(j *run.Job, cfg *fedavg.Config, guesses int, confidence, upper float64) error {
	m := len(a.canaries)
	d := map[string]any{"canaries": m, "confidence": confidence, "delta": cfg.DP.Delta, "epsilon_upper_bound": upper,
		"method": "one-run audit (Steinke, Nasr & Jagielski 2023, Thm 3.1 with δ): canaries ranked by the released models' steps along their directions"}
	if m == 0 {
		d["epsilon_lower_bound"] = 0.0
		j.Stats.Details["audit"] = d
		return nil
	}
	if guesses == 0 || guesses > m {
		guesses = m
	}
	order := make([]int, m)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(x, y int) int { return cmp.Compare(a.scores[y], a.scores[x]) })
	in, out := (guesses+1)/2, guesses/2
	correct, included := 0, 0
	for rank, i := range order {
		c := a.canaries[i]
		if c.Included {
			included++
		}
		switch {
		case rank < in && c.Included, rank >= m-out && !c.Included:
			correct++
		}
	}
	o := onerun.Outcome{Canaries: m, Guesses: in + out, Correct: correct}
	lower, err := onerun.LowerBound(o, cfg.DP.Delta, confidence)
	if err != nil {
		return err
	}
	d["included"], d["guesses"], d["correct"], d["epsilon_lower_bound"] = included, o.Guesses, correct, lower
	j.Stats.Details["audit"] = d
	return nil
}
