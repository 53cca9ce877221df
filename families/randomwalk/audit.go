package randomwalk

import (
	"math"
	"slices"

	rw "maple/algorithms/randomwalk"
	"maple/privacy/gamma"
	"maple/scenarios/run"
)

// The audit of a private walk (privacy.audit): the local DP of the value a
// node announces, tested on node 0.
const (
	// canaryExtremeInput is the neighbouring pair of the mechanism's local
	// DP (any two inputs of [inf L, sup L], algorithm.randomwalk.mechanism.
	// l_range) at its extremes: node 0 privatizes sup L in the runs with the
	// canary and inf L in the others, the pair at which Lemma 1 and the
	// tight profile are attained. Its gradient weight keeps its true L_0:
	// the canary changes what the node privatizes, not its data.
	canaryExtremeInput = "extreme-input"
	// viewWire is what node 0 sends at set-up: its degree and ln R(L_0), the
	// same value to every neighbour, as the trace records it — all that the
	// paper's guarantee covers (the models travel in the clear, footnote 2,
	// and are not audited).
	viewWire = "wire"
)

// auditBounds returns the mechanism's input range, which privacy.audit
// requires to be set.
func auditBounds(j *run.Job) gamma.Bounds {
	r := randomWalkParams(j.Curve.Scenario).Mechanism.LRange
	return gamma.Bounds{Inf: r.Min, Sup: r.Max}
}

// insertCanary makes node 0 privatize sup L in the runs with the canary and
// inf L in the others (Job.CanaryIn); the other nodes privatize their L_i.
func insertCanary(j *run.Job, cfg *rw.Config, l []float64) {
	b := auditBounds(j)
	in := slices.Clone(l)
	in[0] = b.Inf
	if j.CanaryIn() {
		in[0] = b.Sup
	}
	cfg.Privacy.Inputs = in
}

// recordAudit records the run's audit from node 0's announcement, of log
// weight logW0: its score is the log-likelihood ratio between sup L and
// inf L (rw.Privacy.LogRatio, the Neyman–Pearson statistic), the same on
// every row after iteration 0, the announcement being made at set-up, once
// (the runner's row 0 is "nothing released yet"). The bound beside it is
// the mechanism's tight ε: the Gamma mechanism's privacy profile at the
// scenario's δ (for the truncated Gamma, an upper bound by post-processing,
// not tight), and for the Laplace baseline (sup L − inf L)/b at δ = 0. The
// details add the paper's claim (Lemma 1's ε at δ, or the Laplace scale's
// ε) and the expected score gap, where it has a closed form.
func recordAudit(j *run.Job, cfg *rw.Config, logW0 float64, rows int) {
	m := randomWalkParams(j.Curve.Scenario).Mechanism
	b := auditBounds(j)
	p := &cfg.Privacy
	score := p.LogRatio(logW0, b.Sup, b.Inf)
	up := run.AuditUpper{Relation: "local DP: any two inputs of [inf L, sup L], audited at the extremes on node 0", Sampling: "none"}
	var eps, claimed float64
	var gap any
	switch p.Mechanism {
	case rw.GammaMechanism, rw.TruncatedGamma:
		up.Accountant, up.Delta = "the Gamma mechanism's privacy profile (tight; privacy/gamma.Epsilon)", m.Delta
		if p.Mechanism == rw.TruncatedGamma {
			up.Accountant = "the untruncated Gamma mechanism's privacy profile (an upper bound by post-processing, not tight)"
		}
		eps = gamma.Epsilon(m.Delta, p.Theta, b)
		claimed = gamma.Lemma1Epsilon(m.Delta, p.Theta, b)
		if p.Mechanism == rw.GammaMechanism {
			u, d := gamma.Divergence(p.Theta, b)
			gap = u + d
		}
	case rw.LaplaceMechanism:
		// Outputs floored at inf L: the ratio takes ±D, D = (sup L −
		// inf L)/b, with positive probability, so ε = D is tight at δ = 0,
		// and the expected gap is twice KL = D − 1 + e^{−D}.
		d := (b.Sup - b.Inf) / p.Scale
		up.Accountant, up.Delta = "the Laplace mechanism's pure ε = (sup L − inf L)/b (tight)", 0
		eps, claimed = d, m.Epsilon
		gap = 2 * (d - 1 + math.Exp(-d))
	}
	scores, upper := make([]float64, rows), make([]float64, rows)
	for k := 1; k < rows; k++ {
		scores[k], upper[k] = score, eps
	}
	up.Epsilon = upper
	j.RecordAudit(run.AuditRecord{Scores: scores})
	j.RecordAuditUpper(up)
	input := b.Inf
	if j.CanaryIn() {
		input = b.Sup
	}
	j.Stats.Details["audit"] = map[string]any{
		"node": 0, "input": input, "announced_log_weight": logW0, "score": score,
		"claimed_epsilon": claimed, "epsilon": eps, "delta": up.Delta, "score_gap_theory": gap,
		"note": "claimed_epsilon is the paper's claim at delta (Lemma 1, or the Laplace caption's ε), epsilon the bound the audit is compared with, score_gap_theory the expected score with the canary minus without",
	}
}
