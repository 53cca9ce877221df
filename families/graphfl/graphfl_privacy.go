package graphfl

import (
	"context"
	"math"
	"slices"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"maple/algorithms/data"
	"maple/algorithms/graphfl"
	"maple/privacy/accountant"
	"maple/scenarios"
	"maple/scenarios/inputs"
	"maple/scenarios/run"
)

// accountGraphFL reports, for run 0 of a curve with privacy noise, the
// papers' ε(i) bounds beside what two paired runs realise. The neighbouring
// dataset replaces client 0's data (client 0 of server 0) by a fresh draw, as
// the other families' accountant does; the paired runs are two reference runs
// with the same run seed (common random numbers: the same sampling, batches and
// noise), one on each dataset, which give the sensitivities of the actual
// messages.
//
// Server level (thesis eq. 3.58, for graph-homomorphic perturbations):
// ε(i) = (√2/σ_g)(B + B′ + √P‖w^o − w′^o‖)(i + 1), its inverse for a target ε,
// and the realised (√2/σ_g)·r·Σ_j ‖ψ_{0,j} − ψ′_{0,j}‖ of server 0's r
// releases per round (one message for all neighbours under graph-homomorphic
// and broadcast noise, one per neighbour under random and local
// graph-homomorphic noise), in ℓ2 (the paper's norm) and ℓ1 (exact for
// per-coordinate Laplace noise); also (√2/σ_g)Σ_j Δ(j) with Δ(j) the distance
// of the server-stacked models, the middle of the paper's chain, and how often
// Δ(j) stayed within the bound B + B′ + √P‖w^o − w′^o‖.
//
// Client level (thesis eq. 2.69, federated learning):
// ε(i) = (√2/σ_g)(B + B′ + ‖w^o − w′^o‖)·i, and the realised ε of every upload
// server 0 received, each a release with its own noise.
func accountGraphFL(j *run.Job, p *inputs.Problem, net *inputs.Network, cfg graphfl.Config) error {
	sc := j.Curve.Scenario
	server, client := cfg.Privacy.Scheme != graphfl.None, cfg.Clients.NoiseStd > 0
	if j.Run != 0 || (!server && !client) {
		return nil
	}
	sets, dist, err := j.NeighbourOptimum(p)
	if err != nil {
		return err
	}
	w0 := make([]float64, len(p.WOpt))
	T := sc.Iterations
	orig, err := recordTrajectory(j.Context(), cfg, net.A, p, p.Sets, w0, j.RunSeed, T)
	if err != nil {
		return err
	}
	pair, err := recordTrajectory(j.Context(), cfg, net.A, p, sets, w0, j.RunSeed, T)
	if err != nil {
		return err
	}
	a := sc.Privacy.Accountant
	if a == nil { // client noise from algorithm.graphfl.client_noise under privacy.scheme none
		a = &scenarios.Accountant{B: 1, BPrime: 1, Norm: accountant.L2.String()}
	}
	norm, err := accountant.ParseNorm(a.Norm)
	if err != nil {
		return j.Curve.Errorf("privacy.accountant.norm", "%v", err)
	}
	factor := accountant.NormFactor(norm, len(p.WOpt))
	sigma := math.Sqrt(sc.Privacy.Variance)
	base := func(formula string, bound float64) map[string]any {
		return map[string]any{"formula": formula, "sigma": sigma, "b": a.B, "b_prime": a.BPrime, "norm": a.Norm,
			"optimum_distance": dist, "sensitivity_bound": bound,
			"mechanism": sc.Privacy.Mechanism, "neighbouring": run.Neighbouring}
	}
	gaussian, delta := sc.Privacy.Mechanism == "gaussian", a.Delta
	if gaussian && delta == 0 { // the accountant made up above for client noise
		delta = scenarios.DefaultDelta
	}
	P := cfg.Servers
	if server {
		msg2, msg1, stacked := make([]float64, T), make([]float64, T), make([]float64, T)
		for i := range T {
			msg2[i] = floats.Distance(orig.psi[i], pair.psi[i], 2)
			msg1[i] = floats.Distance(orig.psi[i], pair.psi[i], 1)
			stacked[i] = floats.Distance(orig.w[i], pair.w[i], 2)
		}
		releases := 1.0
		if s := cfg.Privacy.Scheme; s == graphfl.Random || s == graphfl.LocalGraphHomomorphic {
			releases = float64(net.Degree[0])
		}
		bound := accountant.SensitivityBound(P, a.B, a.BPrime, dist)
		r := base("thesis eq. 3.58", bound)
		r["server"], r["releases_per_round"] = 0, releases
		// Eq. 3.58 bounds one release of a server's aggregate. Under random
		// and local graph-homomorphic noise a server releases a differently
		// perturbed copy to each neighbour, so the bound composes over those
		// releases, as the empirical ε below does: both columns then speak
		// of the same mechanism.
		r["epsilon_bound_per_round"] = releases * factor * accountant.GraphFLEpsilon(P, sigma, a.B, a.BPrime, dist, 0)
		r["epsilon_bound_final"] = releases * factor * accountant.GraphFLEpsilon(P, sigma, a.B, a.BPrime, dist, T-1)
		if releases > 1 {
			r["composition"] = "basic composition over the releases_per_round perturbed copies of the aggregate"
		}
		if a.Epsilon > 0 {
			r["sigma_for_target"] = releases * factor * accountant.GraphFLSigma(P, a.Epsilon, a.B, a.BPrime, dist, T-1)
		}
		r["epsilon_empirical_final"] = releases * accountant.LaplaceEpsilon(sigma, msg2)
		r["epsilon_empirical_l1_final"] = releases * accountant.LaplaceEpsilon(sigma, msg1)
		r["epsilon_sensitivity_final"] = accountant.LaplaceEpsilon(sigma, stacked)
		r["sensitivity_max"], r["sensitivity_final"] = slices.Max(stacked), stacked[T-1]
		r["within_bound"] = fractionWithin(stacked, bound)
		if gaussian {
			gaussianGraphFL(r, sigma, delta, a.Epsilon, bound, int(releases)*T, releases, msg2, stacked)
		}
		j.Stats.Details["privacy"] = r
	}
	if client {
		up2, up1, model := make([]float64, T), make([]float64, T), make([]float64, T)
		for i := range T {
			for k := range orig.up[i] {
				up2[i] += floats.Distance(orig.up[i][k], pair.up[i][k], 2)
				up1[i] += floats.Distance(orig.up[i][k], pair.up[i][k], 1)
			}
			M := len(w0)
			model[i] = floats.Distance(orig.w[i][:M], pair.w[i][:M], 2)
		}
		bound := accountant.SensitivityBound(1, a.B, a.BPrime, dist)
		r := base("thesis eq. 2.69", bound)
		r["server"], r["uploads_per_round"] = 0, len(orig.up[0])
		r["epsilon_bound_per_round"] = factor * accountant.FederatedEpsilon(sigma, a.B, a.BPrime, dist, 1)
		r["epsilon_bound_final"] = factor * accountant.FederatedEpsilon(sigma, a.B, a.BPrime, dist, T)
		if a.Epsilon > 0 {
			r["sigma_for_target"] = factor * accountant.FederatedSigma(a.Epsilon, a.B, a.BPrime, dist, T)
		}
		r["epsilon_empirical_final"] = accountant.LaplaceEpsilon(sigma, up2)
		r["epsilon_empirical_l1_final"] = accountant.LaplaceEpsilon(sigma, up1)
		r["epsilon_sensitivity_final"] = accountant.LaplaceEpsilon(sigma, model)
		r["sensitivity_max"], r["sensitivity_final"] = slices.Max(model), model[T-1]
		r["within_bound"] = fractionWithin(model, bound)
		if gaussian {
			gaussianGraphFL(r, sigma, delta, a.Epsilon, bound, T, 1, up2, model)
		}
		j.Stats.Details["client_privacy"] = r
	}
	return nil
}

// trajectory is what the accountant needs of one run, round by round:
// server 0's aggregate ψ_{0,i}, the server-stacked models 𝒲_i (server 0
// first) and the uploads server 0 received.
type trajectory struct {
	psi, w [][]float64
	up     [][][]float64
}

// recordTrajectory runs the reference on sets and records its trajectory,
// until ctx is done.
func recordTrajectory(ctx context.Context, cfg graphfl.Config, A *mat.Dense, p *inputs.Problem, sets []*data.Set, w0 []float64, seed uint64, rounds int) (*trajectory, error) {
	t := &trajectory{}
	prob := graphfl.Problem{A: A, Sets: sets, Loss: p.Loss, W0: w0}
	err := graphfl.ReferenceContext(ctx, cfg, prob, seed, rounds, graphfl.Hooks{
		Uploads: func(_, server int, _ []int, replies [][]float64) {
			if server == 0 {
				up := make([][]float64, len(replies))
				for k, r := range replies {
					up[k] = slices.Clone(r)
				}
				t.up = append(t.up, up)
			}
		},
		Aggregates: func(_ int, Psi [][]float64) { t.psi = append(t.psi, slices.Clone(Psi[0])) },
		Models:     func(_ int, W [][]float64) { t.w = append(t.w, slices.Concat(W...)) },
	})
	return t, err
}

// fractionWithin returns the fraction of xs at most bound.
func fractionWithin(xs []float64, bound float64) float64 {
	n := 0
	for _, x := range xs {
		if x <= bound {
			n++
		}
	}
	return float64(n) / float64(len(xs))
}

// gaussianGraphFL replaces the Laplace ε of a graph FL report r by the
// (ε, δ) of Gaussian noise, which has no pure ε: the papers' sensitivity
// bound for the given number of released messages, composed exactly as one
// Gaussian mechanism of sensitivity √messages·bound (see accountFor), and
// the realised ε of the paired runs, from their message distances (each
// released copies times) and from the stacked models' distances: n Gaussian
// releases of sensitivities Δ_j compose into one of sensitivity √(Σ Δ_j²).
func gaussianGraphFL(r map[string]any, sigma, delta, target, bound float64, messages int, copies float64, released, stacked []float64) {
	for _, k := range []string{"formula", "norm", "composition", "epsilon_bound_per_round", "epsilon_empirical_l1_final", "sigma_for_target"} {
		delete(r, k)
	}
	mu := accountant.GaussianComposedMu(bound, sigma, messages)
	r["delta"] = delta
	r["bound"] = "analytic Gaussian mechanism (Balle & Wang 2018, Thm 8) of the composed messages (Gaussian DP, Dong, Roth & Su 2022): the papers' Laplace formulas do not apply to Gaussian noise"
	r["epsilon_bound_final"] = accountant.GaussianEpsilon(mu, delta)
	if target > 0 {
		r["sigma_for_target"] = math.Sqrt(float64(messages)) * bound / accountant.GaussianMu(target, delta)
	}
	realised := func(d []float64, copies float64) float64 {
		if mu := math.Sqrt(copies*floats.Dot(d, d)) / sigma; mu > 0 {
			return accountant.GaussianEpsilon(mu, delta)
		}
		return 0 // the paired runs never differed
	}
	r["epsilon_empirical_final"] = realised(released, copies)
	r["epsilon_sensitivity_final"] = realised(stacked, 1)
}
