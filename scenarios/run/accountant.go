package run

import (
	"fmt"
	"math"

	"maple/algorithms/data"
	"maple/privacy/accountant"
	"maple/scenarios/inputs"
)

// Neighbouring states the neighbouring relation every report uses.
const Neighbouring = "agent-level replace-one: agent 0's whole local dataset replaced by one drawn afresh (another seed of the same generator); w′^o is the optimum of the neighbouring problem"

// Exposure is how a family's messages expose agent 0 to the accountant's
// adversary.
type Exposure struct {
	// Agents is P, the number of agents whose network-stacked iterates the
	// sensitivity bound B + B′ + √P‖w^o − w′^o‖ covers (1 for one server).
	Agents int
	// Federated selects thesis eq. 2.69 (one server) instead of paper 001
	// eq. 31 for Laplace noise.
	Federated bool
	// Messages is the number of noisy messages of agent 0 an observer of its
	// links sees per iteration, each of sensitivity Δ: P for decentralized
	// learning (the paper's ratio chain, eq. 30, bounds |N_p| by P), 1 for
	// federated learning (worst case: agent 0 takes part in every round).
	Messages int
	// Fraction and Average, if Fraction > 0, describe a server that averages
	// the noisy replies of Average agents drawn without replacement, a
	// fraction q of all: then an observer of the released global models
	// alone, who does not learn who took part, gets the guarantee amplified
	// by subsampling.
	Fraction float64
	Average  int
	// NoSampling, if set, says why there is no amplified report.
	NoSampling string
}

// adversary describes who the guarantee is against.
func (e Exposure) adversary() string {
	if e.Federated {
		return "observes every message agent 0 sends the server; worst case: agent 0 takes part in every round"
	}
	return fmt.Sprintf("observes every message agent 0 sends its neighbours: at most P = %d noisy copies per iteration (paper 001 eq. 30)", e.Messages)
}

// Account reports, for run 0 of a curve with privacy noise, the papers' ε(i)
// bound under Laplace noise, or an (ε, δ) guarantee under Gaussian noise; see
// accountFor. agents is P and federated selects the single-server formulas.
func (j *Job) Account(p *inputs.Problem, agents int, federated bool) error {
	e := Exposure{Agents: agents, Federated: federated, Messages: agents}
	if federated {
		e.Agents, e.Messages = 1, 1
	}
	return j.AccountFor(p, e)
}

// AccountFor reports the privacy guarantee of a curve in the summary (run 0
// only), naming the mechanism, the neighbouring relation, the adversary and
// the bound:
//
//   - no scheme: no privacy;
//   - Laplace noise: the papers' pure ε(i) bound, (√2·P/σ_g)(B + B′ +
//     √P‖w^o − w′^o‖)·i for decentralized learning (paper 001 eq. 31) and
//     (√2/σ_g)(B + B′ + ‖w^o − w′^o‖)·i for federated learning (thesis eq.
//     2.69), times √M under the ℓ1 norm convention; it grows linearly in i,
//     so the report gives its slope and final value;
//   - Gaussian noise, which has no pure ε: the exact (ε, δ) of the composed
//     Gaussian mechanism at the final iteration, with the same sensitivity
//     Δ = B + B′ + √P‖w^o − w′^o‖, and for a server averaging a sample of
//     agents the Rényi-DP guarantee amplified by that sampling.
//
// w′^o is the minimizer when agent 0's dataset is replaced by one drawn
// afresh, the neighbouring dataset of the definitions. With
// privacy.accountant.epsilon, the report also gives the σ_g that reaches that
// target at the last iteration. The sensitivity bound holds with high
// probability only (Markov's inequality), so every guarantee does too.
func (j *Job) AccountFor(p *inputs.Problem, e Exposure) error {
	sc := j.Curve.Scenario
	if j.Run != 0 {
		return nil
	}
	if sc.Privacy.Scheme == "none" {
		j.Stats.Details["privacy"] = map[string]any{
			"mechanism": "none",
			"guarantee": "no privacy: the messages carry no privacy noise",
		}
		return nil
	}
	if p.WOpt == nil {
		return nil // no optimum to state the bound with (loss.optimum none)
	}
	_, dist, err := j.NeighbourOptimum(p)
	if err != nil {
		return err
	}
	a := sc.Privacy.Accountant
	report := map[string]any{
		"mechanism":        sc.Privacy.Mechanism,
		"neighbouring":     Neighbouring,
		"sigma":            math.Sqrt(sc.Privacy.Variance),
		"b":                a.B,
		"b_prime":          a.BPrime,
		"optimum_distance": dist,
		"adversary":        e.adversary(),
	}
	if sc.Privacy.Mechanism == "gaussian" {
		j.gaussianReport(report, e, dist)
	} else if err := j.laplaceReport(report, e, dist, len(p.WOpt)); err != nil {
		return err
	}
	j.Stats.Details["privacy"] = report
	return nil
}

// laplaceReport adds the papers' pure ε(i) bound to report.
func (j *Job) laplaceReport(report map[string]any, e Exposure, dist float64, dim int) error {
	sc := j.Curve.Scenario
	a := sc.Privacy.Accountant
	sigma := math.Sqrt(sc.Privacy.Variance)
	T := sc.Iterations
	norm, err := accountant.ParseNorm(a.Norm)
	if err != nil {
		return j.Curve.Errorf("privacy.accountant.norm", "%v", err)
	}
	factor := accountant.NormFactor(norm, dim)
	epsilon := func(i int) float64 {
		if e.Federated {
			return factor * accountant.FederatedEpsilon(sigma, a.B, a.BPrime, dist, i)
		}
		return factor * accountant.DecentralizedEpsilon(e.Agents, sigma, a.B, a.BPrime, dist, i)
	}
	report["formula"] = "paper 001 eq. 31"
	if e.Federated {
		report["formula"] = "thesis eq. 2.69"
	}
	report["bound"] = report["formula"].(string) + ": pure ε(i) of the Laplace mechanism, linear in i, with high probability"
	report["norm"] = a.Norm
	report["delta"] = 0.0
	report["epsilon_per_iteration"] = epsilon(1)
	report["epsilon_final"] = epsilon(T)
	if a.Epsilon > 0 {
		if e.Federated {
			report["sigma_for_target"] = factor * accountant.FederatedSigma(a.Epsilon, a.B, a.BPrime, dist, T)
		} else {
			report["sigma_for_target"] = factor * accountant.DecentralizedSigma(e.Agents, a.Epsilon, a.B, a.BPrime, dist, T)
		}
	}
	return nil
}

// gaussianReport adds the (ε, δ) guarantees of Gaussian noise to report.
func (j *Job) gaussianReport(report map[string]any, e Exposure, dist float64) {
	sc := j.Curve.Scenario
	a := sc.Privacy.Accountant
	sigma := math.Sqrt(sc.Privacy.Variance)
	T := sc.Iterations
	delta := accountant.SensitivityBound(e.Agents, a.B, a.BPrime, dist)
	n := e.Messages * T
	report["sensitivity"] = delta
	report["messages_per_iteration"] = e.Messages
	report["delta"] = a.Delta
	report["bound"] = fmt.Sprintf("analytic Gaussian mechanism (Balle & Wang 2018, Thm 8), exact for the %d messages composed as one Gaussian mechanism of sensitivity √%d·Δ (Gaussian DP, Dong, Roth & Su 2022); Δ = B + B′ + √P‖w^o − w′^o‖ holds with high probability", n, n)
	report["epsilon_final"] = accountant.GaussianEpsilon(accountant.GaussianComposedMu(delta, sigma, n), a.Delta)
	if a.Epsilon > 0 {
		report["sigma_for_target"] = math.Sqrt(float64(n)) * delta / accountant.GaussianMu(a.Epsilon, a.Delta)
	}
	switch {
	case e.Fraction > 0:
		// The server releases w_i from the mean of L noisy replies: agent 0
		// moves it by Δ/L, under noise σ/√L per coordinate.
		z := sigma * math.Sqrt(float64(e.Average)) / delta
		eps, order := accountant.RDPToDP(func(alpha int) float64 {
			return float64(T) * accountant.SubsampledGaussianRDP(alpha, e.Fraction, z)
		}, a.Delta)
		report["sampled"] = map[string]any{
			"adversary":          "observes only the global models the server releases, and does not learn which agents took part in a round",
			"participation_rate": e.Fraction,
			"noise_multiplier":   z,
			"bound":              fmt.Sprintf("Rényi DP of the Gaussian mechanism on a sample of %d agents drawn without replacement, rate q = %g (Wang, Balle & Kasiviswanathan 2019, Thm 9), composed over %d rounds and converted to (ε, δ) (Mironov 2017, Prop. 3)", e.Average, e.Fraction, T),
			"epsilon_final":      eps,
			"order":              order,
		}
	case e.NoSampling != "":
		report["sampled"] = "not reported: " + e.NoSampling
	}
}

// NeighbourOptimum returns the neighbouring datasets, p's with agent 0's
// replaced by one drawn afresh, and ‖w^o − w′^o‖, the distance between p's
// minimizer and theirs. The datasets are nil when p holds its data lazily
// (Problem.Sets nil): the neighbouring problem is then solved over p.Data
// with agent 0's replaced, without holding it (inputs.NeighbourOptimum).
func (j *Job) NeighbourOptimum(p *inputs.Problem) ([]*data.Set, float64, error) {
	return inputs.NeighbourOptimum(j.Context(), j.Curve, j.Dir, j.RunSeed, p)
}
