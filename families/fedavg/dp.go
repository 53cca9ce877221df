package fedavg

import (
	"fmt"
	"math"

	"maple/algorithms/fedavg"
	"maple/privacy/accountant"
	"maple/privacy/ledger"
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
		rd := cfg.Round(l.dim, cfg.Draws())
		m := rd.Mechanism
		r := map[string]any{
			"mechanism":        "DP-FedAvg (McMahan et al. 2018), " + d.Mode.String() + " noise",
			"level":            "client",
			"relation":         m.Relation.String(),
			"sensitivity":      m.Relation.Sensitivity(d.Clip),
			"sampling":         m.Sampling.String(),
			"sampling_rate":    m.Rate,
			"neighbouring":     relationWords(m.Relation),
			"adversary":        "sees the models the server releases, not which agents took part in a round",
			"participation":    participationWords(cfg, m.Rate),
			"accountant":       d.Accountant.String(),
			"bound":            ledger.Bound(d.Accountant, rd),
			"clip":             d.Clip,
			"noise_multiplier": d.NoiseMultiplier,
			"delta":            d.Delta,
			"epsilon_by_round": byRound(0),
			"epsilon_final":    l.eps[len(l.eps)-1][0],
		}
		if d.Accountant == ledger.PLD {
			r["discretization_interval"] = ledger.RunOptions.Interval
			if d.Mode == fedavg.CentralDP {
				noteFallback(j, r, "privacy.dp", cfg.NewClientLedger(), rd, j.Curve.Scenario.Iterations, d.Delta)
			}
		}
		if d.Mode == fedavg.DistributedDP {
			r["grid_step"], r["client_noise"], r["tau"] = rd.DDG.Gamma, rd.DDG.Sigma, rd.DDG.Tau()
			r["beta"] = d.Beta
		} else if d.Adaptive != nil {
			z, _ := d.Adaptive.UpdateNoiseMultiplier(d.NoiseMultiplier) // validated
			r["adaptive_clip"] = map[string]any{"quantile": d.Adaptive.Quantile, "learning_rate": d.Adaptive.LearningRate,
				"count_noise": d.Adaptive.CountNoise, "update_noise_multiplier": z}
		}
		j.Stats.Details["privacy"] = r
	}
	if p, ok := cfg.Client.(fedavg.PrivateClient); ok {
		step := p.Step(l.minSamples, cfg.Batch.Max)
		sp := map[string]any{
			"mechanism":        p.Mechanism(),
			"level":            "sample",
			"adversary":        "sees every update the agent with the largest sampling rate sends, as if it took part in every round",
			"steps_per_round":  cfg.Epochs.Max,
			"sampling_rate":    step.Mechanism.Rate,
			"sampling":         step.Mechanism.Sampling.String(),
			"relation":         step.Mechanism.Relation.String(),
			"accountant":       p.SampleAccountant().String(),
			"delta":            p.SampleDelta(),
			"bound":            ledger.Bound(p.SampleAccountant(), step),
			"epsilon_by_round": byRound(1),
			"epsilon_final":    l.eps[len(l.eps)-1][1],
		}
		if p.SampleAccountant() == ledger.PLD {
			sp["discretization_interval"] = ledger.RunOptions.Interval
			noteFallback(j, sp, "algorithm.fedavg.client", ledger.New(ledger.PLD, ledger.RunOptions), step, j.Curve.Scenario.Iterations*cfg.Epochs.Max, p.SampleDelta())
		}
		j.Stats.Details["sample_privacy"] = sp
	}
}

// noteFallback says, in a guarantee's details r and in the run's warnings,
// when the PLD ledger l of rounds rounds of rd gave its final ε by Rényi
// DP (the PLD accountant counted the losses beyond its grid as infinite)
// or could bound nothing: field names the section that chose the
// accountant.
func noteFallback(j *run.Job, r map[string]any, field string, l *ledger.Ledger, rd ledger.Round, rounds int, delta float64) {
	for range rounds {
		if l.Compose(rd) != nil {
			return // validated: cannot happen
		}
	}
	g, err := l.Guarantee(delta)
	switch {
	case err != nil:
		return
	case math.IsInf(g.Epsilon, 1):
		j.Stats.Warnings = append(j.Stats.Warnings, fmt.Sprintf("%s: no accountant bounds ε after %d rounds: the privacy losses lie beyond the PLD accountant's grid and Rényi DP gives no finite bound either; the guarantee is vacuous (ε = +Inf)", field, rounds))
	case g.By != ledger.PLD:
		r["epsilon_final_by"] = g.By.String()
		j.Stats.Warnings = append(j.Stats.Warnings, fmt.Sprintf("%s: the PLD accountant counts privacy losses beyond its grid as infinite and gave ε = +Inf after %d rounds; the ε reported there is Rényi DP's (%.4g), the smaller valid bound", field, rounds, g.Epsilon))
	}
}

// relationWords says what the neighbouring relation r means for DP-FedAvg.
func relationWords(r accountant.Relation) string {
	if r == accountant.AddRemove {
		return "add-remove: one agent added or removed, so the sum of updates clipped to C moves by up to C"
	}
	return "replace-one: one agent's whole local dataset replaced, so the sum of updates clipped to C moves by up to 2C"
}

// participationWords says how the agents of a round were drawn, as the
// accountant takes it.
func participationWords(cfg *fedavg.Config, rate float64) string {
	switch cfg.Participation {
	case fedavg.Poisson:
		return fmt.Sprintf("each of %d agents independently with probability q = %g per round (Poisson sampling; %d expected, the estimator's fixed denominator)", cfg.Agents, rate, cfg.Draws())
	case fedavg.Full:
		return fmt.Sprintf("all %d agents in every round (q = 1)", cfg.Agents)
	}
	return fmt.Sprintf("%d of %d agents per round without replacement (fixed-size sampling), q = %g", cfg.Draws(), cfg.Agents, rate)
}
