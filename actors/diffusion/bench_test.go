package diffusion

import (
	"testing"
	"time"

	"maple/actors"
	"maple/actors/msg"
	"maple/algorithms/data"
	"maple/algorithms/diffusion"
	"maple/algorithms/loss"
	"maple/algorithms/rng"
	"maple/internal/cputime"
	"maple/topology"
)

// BenchmarkATC runs full-batch ATC diffusion at the scale of paper 001 Fig. 4
// (P = 30 agents on a random geometric graph, M = 2, N = 100, 200 iterations)
// per privacy scheme, on the actor engine and on the flat reference kernel in
// the same benchmark, and reports the time per iteration of each and their
// ratio (actor/ref; actor/ref-cpu for CPU time). Both times cover a whole run;
// the actor engine reuses one actor system across runs, as the runner's workers
// do.
func BenchmarkATC(b *testing.B) {
	const P, iterations = 30, 200
	g, _, err := topology.Geometric(P, 0.3, 2, rng.New(4, "bench", "graph"), 1000)
	if err != nil {
		b.Fatal(err)
	}
	A := topology.Metropolis(g)
	sets, _ := data.Regression(data.RegressionConfig{Agents: P, SamplesMin: 100, SamplesMax: 100, Dim: 2,
		CovScale: 0.3, SharedCovariance: true, NoiseVarMin: 0.1, NoiseVarMax: 1.1}, 1)
	l := loss.Loss{Kind: loss.LeastSquares, Rho: 0.01}
	for _, scheme := range []diffusion.Scheme{diffusion.None, diffusion.Random, diffusion.GraphHomomorphic, diffusion.LocalGraphHomomorphic} {
		b.Run(scheme.String(), func(b *testing.B) {
			p := diffusion.Privacy{Scheme: scheme}
			if scheme != diffusion.None {
				p.Std = 0.1
			}
			s := Setup{Config: diffusion.Config{Strategy: diffusion.ATC, StepSize: 0.4, Privacy: p},
				A: A, Sets: sets, Loss: l, W0: make([]float64, 2), Iterations: iterations}
			prob := diffusion.Problem{A: A, Sets: sets, Loss: l, W0: s.W0}
			system := actors.NewSystem(nil)
			defer system.Close()
			var actor, ref cputime.Total
			for i := 0; b.Loop(); i++ {
				start := cputime.Now()
				r := actors.NewRun(actors.Options{RunSeed: uint64(i), System: system})
				sched, err := Spawn(r, s)
				if err == nil {
					err = r.Execute(sched, &msg.Start{})
				}
				r.Close()
				if err != nil {
					b.Fatal(err)
				}
				actor.Since(start)

				start = cputime.Now()
				if err := diffusion.Reference(s.Config, prob, uint64(i), iterations, diffusion.Hooks{}); err != nil {
					b.Fatal(err)
				}
				ref.Since(start)
			}
			perIteration := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(b.N*iterations) }
			b.ReportMetric(perIteration(actor.Wall), "actor-ns/iter")
			b.ReportMetric(perIteration(ref.Wall), "ref-ns/iter")
			cputime.ReportRatio(b, actor, ref, "actor/ref")
		})
	}
}
