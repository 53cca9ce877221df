package gammamechanism

import (
	"math"

	"maple/algorithms/rng"
	"maple/privacy/gamma"
	"maple/scenarios"
	"maple/scenarios/run"
)

// The audit of the Gamma mechanism (privacy.audit). Row i of a θ(ε) curve
// is the mechanism whose θ_i Lemma 1 calibrates to (ε_i, δ); the auditor
// tests, row by row, whether a release came from sup L or from inf L.
const (
	// canaryExtremeInput is the neighbouring pair of the mechanism's local
	// DP (any two inputs of [inf L, sup L]) at its extremes: the input is
	// sup L with the canary and inf L without, the pair at which both
	// Lemma 1 and the tight profile are attained (privacy/gamma).
	canaryExtremeInput = "extreme-input"
	// viewRelease is the mechanism's output R, one per row: what a node
	// publishes, and all that the guarantee is about.
	viewRelease = "release"
)

// auditGamma records the run's audit: for a many-run audit one release per
// row on the canary's input (sup L in the runs with the canary, inf L in
// the others), for a one-run audit one release per canary and row, each
// canary in (sup L) or out (inf L) with probability ½ for the whole run.
// The score of a release R is the log-likelihood ratio
//
//	ln p(R | sup L) − ln p(R | inf L) = ln Γ(inf L/θ) − ln Γ(sup L/θ) + ((sup L − inf L)/θ)·ln(R/θ),
//
// the Neyman–Pearson statistic. Rows where no θ reaches δ release nothing
// and score 0. The rows are mechanisms, not moments of a run: row 0 (ε = 0)
// releases like the others when some θ reaches δ there (only for a δ
// above Lemma 1's tails at ε = 0, 0.73 or more at sup L/inf L = 2), and
// its bound is then that θ's tight ε. The draws come from the run's own streams ("audit",
// "canary") and ("audit", "inclusion"), apart from the Monte-Carlo
// column's. The bound beside the audit is the tight ε of each row's θ at
// δ (gamma.Epsilon); the run's details add Lemma 1's ε, the paper's claim,
// and the expected score gap KL(P_sup ‖ P_inf) + KL(P_inf ‖ P_sup).
func auditGamma(j *run.Job, g *GammaMechanism, b gamma.Bounds, thetas []float64) {
	a := j.Audit()
	rows := len(thetas)
	draws := rng.New(j.RunSeed, "audit", "canary")
	score := func(in bool, theta float64) float64 {
		l := b.Inf
		if in {
			l = b.Sup
		}
		return gamma.LossUp(gamma.LogSample(draws, l, theta), theta, b)
	}
	switch a.Method {
	case scenarios.AuditManyRun:
		s := make([]float64, rows)
		for k, theta := range thetas {
			if theta > 0 {
				s[k] = score(j.CanaryIn(), theta)
			}
		}
		j.RecordAudit(run.AuditRecord{Scores: s})
	case scenarios.AuditOneRun:
		inclusion := rng.New(j.RunSeed, "audit", "inclusion")
		in := make([]bool, a.Canaries)
		for c := range in {
			in[c] = inclusion.Float64() < 0.5
		}
		cs := make([][]float64, rows)
		for k, theta := range thetas {
			cs[k] = make([]float64, len(in))
			if theta > 0 {
				for c := range in {
					cs[k][c] = score(in[c], theta)
				}
			}
		}
		j.RecordAudit(run.AuditRecord{Included: in, CanaryScores: cs})
	}
	tight := make([]float64, rows)
	claimed := make([]any, rows)
	gap := make([]any, rows)
	for k, theta := range thetas {
		tight[k] = math.NaN() // no mechanism on this row
		if theta > 0 {
			tight[k] = gamma.Epsilon(g.Delta, theta, b)
			claimed[k] = gamma.Lemma1Epsilon(g.Delta, theta, b)
			up, down := gamma.Divergence(theta, b)
			gap[k] = up + down
		}
	}
	j.RecordAuditUpper(run.AuditUpper{
		Accountant: "the Gamma mechanism's privacy profile (tight; privacy/gamma.Epsilon)",
		Relation:   "local DP: any two inputs of [inf L, sup L], audited at the extremes",
		Sampling:   "none", Delta: g.Delta, Epsilon: tight,
	})
	j.Stats.Details["audit"] = map[string]any{
		"lemma1_epsilon":   claimed,
		"tight_epsilon":    nullable(tight),
		"score_gap_theory": gap,
		"note":             "one release per row, from the mechanism with the row's θ; lemma1_epsilon is the paper's claim at δ, tight_epsilon the bound the audit is compared with, score_gap_theory the expected score with the canary minus without",
	}
}

// nullable returns x with its NaNs as nil, which summary.json writes as
// null.
func nullable(x []float64) []any {
	out := make([]any, len(x))
	for k, v := range x {
		if !math.IsNaN(v) {
			out[k] = v
		}
	}
	return out
}
