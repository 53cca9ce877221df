package diffusion

import (
	"testing"

	"maple/actors"
	"maple/actors/msg"
	"maple/algorithms/diffusion"
	"maple/topology"
)

// BenchmarkATC measures one 25-iteration ATC run on the actor engine and with
// the flat reference kernel, per privacy scheme; the ratio of the two is the
// engine's overhead (DESIGN rule 6).
func BenchmarkATC(b *testing.B) {
	A := topology.Averaging(network(b))
	for _, sc := range []diffusion.Scheme{diffusion.None, diffusion.GraphHomomorphic, diffusion.LocalGraphHomomorphic} {
		s := setup(b, diffusion.Config{Strategy: diffusion.ATC, StepSize: 0.1, Privacy: privacy(sc)}, A)
		b.Run(sc.String()+"/actors", func(b *testing.B) {
			for b.Loop() {
				r := actors.NewRun(actors.Options{RunSeed: seed})
				sched, err := Spawn(r, s)
				if err == nil {
					err = r.Execute(sched, &msg.Start{})
				}
				r.Close()
				if err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(sc.String()+"/reference", func(b *testing.B) {
			prob := diffusion.Problem{A: s.A, Sets: s.Sets, Loss: s.Loss, W0: s.W0}
			for b.Loop() {
				if err := diffusion.Reference(s.Config, prob, seed, s.Iterations, diffusion.Hooks{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
