package diffusion

import (
	"io"
	"testing"
	"time"

	"maple/actors"
	"maple/actors/msg"
	"maple/actors/trace"
	"maple/algorithms/data"
	"maple/algorithms/diffusion"
	"maple/algorithms/loss"
	"maple/algorithms/rng"
	"maple/internal/cputime"
	"maple/topology"
)

// benchIterations is the length of the benchmarks' runs.
const benchIterations = 200

// benchSetup is the network of the benchmarks, at the scale of paper 001
// Fig. 4 (P = 30 agents on a random geometric graph, M = 2, N = 100): ATC
// with the given privacy, and the reference's problem of the same inputs.
func benchSetup(b *testing.B, p diffusion.Privacy) (Setup, diffusion.Problem) {
	const P = 30
	g, _, err := topology.Geometric(P, 0.3, 2, rng.New(4, "bench", "graph"), 1000)
	if err != nil {
		b.Fatal(err)
	}
	A := topology.Metropolis(g)
	sets, _ := data.Regression(data.RegressionConfig{Agents: P, SamplesMin: 100, SamplesMax: 100, Dim: 2,
		CovScale: 0.3, SharedCovariance: true, NoiseVarMin: 0.1, NoiseVarMax: 1.1}, 1)
	l := loss.Loss{Kind: loss.LeastSquares, Rho: 0.01}
	s := Setup{Config: diffusion.Config{Strategy: diffusion.ATC, StepSize: 0.4, Privacy: p},
		A: A, Sets: sets, Loss: l, W0: make([]float64, 2), Iterations: benchIterations}
	return s, diffusion.Problem{A: A, Sets: sets, Loss: l, W0: s.W0}
}

// runActors runs s on the actor engine in system, traced as trace says.
func runActors(b *testing.B, system *actors.System, s Setup, seed uint64, trace actors.TraceOptions) {
	r := actors.NewRun(actors.Options{RunSeed: seed, System: system, Trace: trace})
	sched, err := Spawn(r, s)
	if err == nil {
		err = r.Execute(sched, &msg.Start{})
	}
	r.Close()
	if err != nil {
		b.Fatal(err)
	}
}

// BenchmarkATC runs full-batch ATC diffusion at the scale of paper 001 Fig. 4
// (benchSetup, 200 iterations) per privacy scheme, on the actor engine and on
// the flat reference kernel in the same benchmark, and reports the time per
// iteration of each and their ratio (actor/ref; actor/ref-cpu for CPU time).
// Both times cover a whole run; the actor engine reuses one actor system
// across runs, as the runner's workers do.
func BenchmarkATC(b *testing.B) {
	for _, scheme := range []diffusion.Scheme{diffusion.None, diffusion.Random, diffusion.GraphHomomorphic, diffusion.LocalGraphHomomorphic} {
		b.Run(scheme.String(), func(b *testing.B) {
			p := diffusion.Privacy{Scheme: scheme}
			if scheme != diffusion.None {
				p.Std = 0.1
			}
			s, prob := benchSetup(b, p)
			system := actors.NewSystem(nil)
			defer system.Close()
			var actor, ref cputime.Total
			for i := 0; b.Loop(); i++ {
				start := cputime.Now()
				runActors(b, system, s, uint64(i), actors.TraceOptions{})
				actor.Since(start)

				start = cputime.Now()
				if err := diffusion.Reference(s.Config, prob, uint64(i), benchIterations, diffusion.Hooks{}); err != nil {
					b.Fatal(err)
				}
				ref.Since(start)
			}
			perIteration := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(b.N*benchIterations) }
			b.ReportMetric(perIteration(actor.Wall), "actor-ns/iter")
			b.ReportMetric(perIteration(ref.Wall), "ref-ns/iter")
			cputime.ReportRatio(b, actor, ref, "actor/ref")
		})
	}
}

// BenchmarkTracedATC runs ATC without privacy as BenchmarkATC does, untraced
// and traced into a trace store (written to io.Discard, so the disk is not
// measured) alternately, and reports the traced run's wall and CPU time over
// the untraced run's (traced/untraced, traced/untraced-cpu) and the wall
// time tracing adds per record. The protocol's own work per message is
// small here, so on two processors the store's goroutines (encoding,
// compression) and the run share both, and the wall ratio follows the CPU
// that tracing adds: the cheap curves of Fig. 4's traced-run goal of issue
// 32 (design.md, "Tracing").
func BenchmarkTracedATC(b *testing.B) {
	s, _ := benchSetup(b, diffusion.Privacy{})
	system := actors.NewSystem(nil)
	defer system.Close()
	var untraced, traced cputime.Total
	records := 0
	for i := 0; b.Loop(); i++ {
		start := cputime.Now()
		runActors(b, system, s, uint64(i), actors.TraceOptions{})
		untraced.Since(start)

		start = cputime.Now()
		w := trace.NewStoreWriter(io.Discard)
		runActors(b, system, s, uint64(i), actors.TraceOptions{Encoded: true, Sink: func(rec *trace.Record) error {
			records++
			return w.Write(rec)
		}})
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
		traced.Since(start)
	}
	b.ReportMetric(float64((traced.Wall-untraced.Wall).Nanoseconds())/float64(records), "added-ns/record")
	cputime.ReportRatio(b, traced, untraced, "traced/untraced")
}
