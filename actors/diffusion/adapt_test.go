package diffusion

import (
	"math"
	"slices"
	"testing"

	"maple/actors"
	"maple/algorithms/diffusion"
	"maple/algorithms/systems"
	"maple/topology"
)

// The heavy ball by hand, μ = ½, β = ½: a first gradient (1, 2) gives the
// velocity (1, 2) and moves z by −½ of it; a second gradient (2, 0) finds
// the velocity kept, ½(1, 2) + (2, 0) = (2.5, 1), and moves z by −½ of
// that. Another agent's state starts at zero: its first step is the plain
// one. Every number is exact in binary.
func TestMomentumByHand(t *testing.T) {
	m := momentum{Beta: 0.5}
	s, other := diffusion.NewAdaptState(2), diffusion.NewAdaptState(2)
	z := []float64{0, 0}
	m.Adapt(z, []float64{1, 2}, 0.5, &s)
	if want := []float64{-0.5, -1}; !slices.Equal(z, want) {
		t.Fatalf("first step: %v, want %v", z, want)
	}
	m.Adapt(z, []float64{2, 0}, 0.5, &s)
	if want := []float64{-1.75, -1.5}; !slices.Equal(z, want) {
		t.Errorf("second step: %v, want %v", z, want)
	}
	y := []float64{0, 0}
	m.Adapt(y, []float64{2, 0}, 0.5, &other)
	if want := []float64{-1, 0}; !slices.Equal(y, want) {
		t.Errorf("another agent's first step: %v, want %v", y, want)
	}
}

// converged runs noise-free full-batch diffusion of cfg from 0 until two
// successive iterates agree to 1e-14 in every coordinate, and returns the
// last.
func converged(t *testing.T, cfg diffusion.Config, s Setup) [][]float64 {
	t.Helper()
	const iterations = 4000
	var last, prev [][]float64
	err := diffusion.Reference(cfg, diffusion.Problem{A: s.A, Sets: s.Sets, Loss: s.Loss, W0: s.W0}, seed, iterations,
		diffusion.Hooks{Models: func(i int, W [][]float64) {
			if i >= iterations-1 {
				prev, last = last, clone(W)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if d := maxDiff([][][]float64{last}, [][][]float64{prev}); !(d < 1e-14) {
		t.Fatalf("%+v: successive iterates still differ by %g after %d iterations", cfg.Adapt, d, iterations)
	}
	return last
}

// With full gradients the heavy ball's fixed point is the plain step's with
// μ/(1 − β): there v_p = ∇J_p(φ_p)/(1 − β), so ψ_p = z − μ/(1 − β)·∇J_p(φ_p),
// the same equations. ATC, CTA and consensus with (μ, β) = (0.05, 0.5) must
// therefore converge to the limit of the plain step 0.1 — once both runs
// have stopped moving (successive iterates within 1e-14) they agree to
// 1e-16 here, and 1e-10 leaves room for a slower contraction — and away
// from the plain step 0.05's, whose limit differs at first order in μ (the
// agents' O(μ) disagreement): by 1e-2 here, 1e-4 asserted. The velocity is
// each agent's own: one velocity shared by the agents, or one reset every
// iteration, has another fixed point.
func TestMomentumFixedPointIsThePlainStepsWithMuOverOneMinusBeta(t *testing.T) {
	s := setup(t, diffusion.Config{}, topology.Metropolis(network(t)))
	for _, strategy := range []diffusion.Strategy{diffusion.ATC, diffusion.CTA, diffusion.Consensus} {
		heavy := converged(t, diffusion.Config{Strategy: strategy, StepSize: 0.05, Adapt: momentum{Beta: 0.5}}, s)
		plain := converged(t, diffusion.Config{Strategy: strategy, StepSize: 0.1}, s)
		small := converged(t, diffusion.Config{Strategy: strategy, StepSize: 0.05}, s)
		if d := maxDiff([][][]float64{heavy}, [][][]float64{plain}); d > 1e-10 {
			t.Errorf("%v: the heavy ball (μ = 0.05, β = 0.5) ends %g from the plain step 0.1's fixed point", strategy, d)
		}
		if d := maxDiff([][][]float64{heavy}, [][][]float64{small}); !(d > 1e-4) {
			t.Errorf("%v: the heavy ball ends %g from the plain step 0.05's fixed point: the test cannot tell the steps apart", strategy, d)
		}
	}
}

// With β = 0 the heavy ball is the papers' step, bit for bit, on a run with
// sampled gradients and random noise.
func TestMomentumWithoutMomentumIsSGD(t *testing.T) {
	cfg := diffusion.Config{Strategy: diffusion.CTA, StepSize: 0.1, Gradient: diffusion.Sample, Privacy: privacy(diffusion.Random)}
	s := setup(t, cfg, topology.Metropolis(network(t)))
	sgd := reference(t, s)
	s.Config.Adapt = momentum{}
	if d := maxDiff(reference(t, s), sgd); d != 0 {
		t.Errorf("β = 0 differs from SGD by %g", d)
	}
}

// Every agent of both engines keeps its own velocity, fresh in each run:
// synchronous runs on a time-varying graph (whose agents that are down skip
// their step, dropouts and a crash included) and asynchronous runs under
// faults give the reference's iterates bit for bit, and a second run is the
// first again.
func TestMomentumRunsAlikeOnBothEngines(t *testing.T) {
	A := topology.Metropolis(network(t))
	cfg := diffusion.Config{Strategy: diffusion.CTA, StepSize: 0.05, Gradient: diffusion.Sample, Privacy: privacy(diffusion.Random)}
	varying := func(cfg diffusion.Config) [][][]float64 {
		var out [][][]float64
		s := setup(t, cfg, A)
		err := diffusion.Reference(cfg, diffusion.Problem{A: A, Sets: s.Sets, Loss: s.Loss, W0: s.W0, Dynamics: dynamics(0.3, true)}, seed, s.Iterations,
			diffusion.Hooks{Models: func(_ int, W [][]float64) { out = append(out, clone(W)) }})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	plain := varying(cfg)
	cfg.Adapt = momentum{Beta: 0.7}
	want := varying(cfg)
	s := setup(t, cfg, A)
	s.Dynamics = dynamics(0.3, true)
	got, _, _ := run(t, s, actors.Options{RunSeed: seed})
	if d := maxDiff(got, want); d != 0 {
		t.Errorf("synchronous: the actors differ from the reference by %g", d)
	}
	if d := maxDiff(varying(cfg), want); d != 0 {
		t.Errorf("a second reference run differs from the first by %g", d)
	}
	if d := maxDiff(plain, want); !(d > 0) || math.IsNaN(d) {
		t.Errorf("the heavy ball's run is the plain step's (difference %g)", d)
	}
	m := &systems.Model{Latency: 0.05, Jitter: 0.03,
		Compute: systems.Compute{Kind: systems.Uniform, Min: 0.5, Max: 1.5, PerStep: true},
		Loss:    0.1, Duplicate: 0.1, Dropout: 0.05, Crashes: map[int]int{3: 12}}
	s = setup(t, diffusion.Config{Strategy: diffusion.ATC, StepSize: 0.05, Privacy: privacy(diffusion.Random), Adapt: momentum{Beta: 0.7}}, A)
	s.Async = &Async{Wait: 0.02}
	ga, gt := asyncRun(t, s, m)
	wa, wt := asyncReference(t, s, m)
	if d := maxDiff(ga, wa); d != 0 || !slices.Equal(gt, wt) {
		t.Errorf("asynchronous: iterates differ by %g; times %v and %v", d, gt[:3], wt[:3])
	}
}
