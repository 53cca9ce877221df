package diffusion

import (
	"testing"

	"maple/actors"
	"maple/actors/msg"
	"maple/algorithms/diffusion"
	"maple/topology"
)

// Shares are passed to their one receiver, which reuses them for its own
// (Context.Reuse): in a run without faults or taps, an iteration allocates
// no share. Under the random scheme every share carries its own payload, so
// that without the reuse each would allocate its message and its payload.
func TestSharesAreReused(t *testing.T) {
	g := network(t)
	A := topology.Metropolis(g)
	shares := 0 // per iteration: one per directed edge
	for p := range agents {
		shares += g.Degree(p)
	}
	system := actors.NewSystem(nil)
	defer system.Close()
	allocs := func(iterations int) float64 {
		s := setup(t, diffusion.Config{Strategy: diffusion.ATC, StepSize: 0.1, Privacy: privacy(diffusion.Random)}, A)
		s.Iterations = iterations
		return testing.AllocsPerRun(3, func() {
			r := actors.NewRun(actors.Options{RunSeed: seed, System: system})
			defer r.Close()
			sched, err := Spawn(r, s)
			if err == nil {
				err = r.Execute(sched, &msg.Start{})
			}
			if err != nil {
				t.Fatal(err)
			}
		})
	}
	perIteration := (allocs(60) - allocs(20)) / 40
	if perIteration > float64(shares)/10 {
		t.Errorf("%.1f allocations per iteration of %d shares, want at most %.1f", perIteration, shares, float64(shares)/10)
	}
	t.Logf("%.2f allocations per iteration of %d shares", perIteration, shares)
}
