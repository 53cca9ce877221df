package randomwalk

import (
	"testing"

	"maple/actors"
	"maple/actors/msg"
	"maple/algorithms/data"
	"maple/algorithms/loss"
	rw "maple/algorithms/randomwalk"
	"maple/algorithms/rng"
	"maple/internal/cputime"
	"maple/topology"
)

// BenchmarkWalk runs T steps of one walk over N = 100 nodes holding one
// 10-dimensional sample each (paper 003's Fig. 2 scale) on the actor engine and
// on the reference in the same benchmark, and reports the token steps per
// second of each and their ratio (actor/ref, in wall time; actor/ref-cpu in CPU
// time). "ring" is the uniform walk on a ring, where every proposal is accepted
// (all degrees are equal) and the set-up is only 2N announcements: one message
// per step, the engine's latency-bound case; "er" is the importance walk on
// G(100, 0.3) of Fig. 2, where rejections let a node take several steps per
// message and the set-up sends 2|E| ≈ 3000 announcements. Neither records
// metrics (no observer), so both measure the protocol alone; the actor engine
// reuses one actor system across runs, as the runner's workers do.
func BenchmarkWalk(b *testing.B) {
	const N, T = 100, 20000
	sets, _ := data.Mixture(data.MixtureConfig{Agents: N, SamplesMin: 1, SamplesMax: 1, Dim: 10, Mean: 1, Variance: 10, Positive: 0.5}, 1)
	l := loss.Loss{Kind: loss.Logistic, Rho: 1 / (2.0 * N)}
	ring, err := topology.Ring(N)
	if err != nil {
		b.Fatal(err)
	}
	er, err := topology.ErdosRenyi(N, 0.3, 1, rng.New(1, "bench", "graph"), 100)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		g      *topology.Graph
		target rw.Target
	}{{"ring", ring, rw.Uniform}, {"er", er, rw.Importance}} {
		b.Run(c.name, func(b *testing.B) {
			cfg := rw.Config{Protocol: rw.Walk, Target: c.target, Walks: 1, StepSize: 1e-3, Exponent: 0.75, Radius: 10}
			s := Setup{Config: cfg, Problem: rw.Problem{Graph: c.g, Sets: sets, Loss: l}, Iterations: T}
			system := actors.NewSystem(nil)
			defer system.Close()
			var actor, ref cputime.Total
			var messages uint64
			for i := 0; b.Loop(); i++ {
				start := cputime.Now()
				r := actors.NewRun(actors.Options{RunSeed: uint64(i), System: system})
				sched, _, err := Spawn(r, s)
				if err == nil {
					err = r.Execute(sched, &msg.Start{})
				}
				messages += r.Messages()
				r.Close()
				if err != nil {
					b.Fatal(err)
				}
				actor.Since(start)

				start = cputime.Now()
				if err := rw.Reference(cfg, s.Problem, uint64(i), T, nil, nil); err != nil {
					b.Fatal(err)
				}
				ref.Since(start)
			}
			steps := float64(b.N * T)
			b.ReportMetric(steps/actor.Wall.Seconds(), "actor-steps/s")
			b.ReportMetric(steps/ref.Wall.Seconds(), "ref-steps/s")
			b.ReportMetric(float64(messages)/float64(b.N), "msgs/run")
			cputime.ReportRatio(b, actor, ref, "actor/ref")
		})
	}
}
