package diffusion

import (
	"math"
	"slices"
	"testing"

	"maple/actors"
	"maple/actors/audittap"
	"maple/actors/msg"
	"maple/algorithms/data"
	"maple/algorithms/diffusion"
	"maple/privacy/audit"
	"maple/privacy/pairmask"
	"maple/topology"
)

// scoreObserver keeps the tap's scores and forwards everything else.
type scoreObserver struct {
	next   actors.Observer
	tap    actors.ID
	scores []float64
}

func (o *scoreObserver) Observe(from actors.ID, round int, key string, v []float64) {
	if from == o.tap && key == audittap.Key {
		if int(v[0]) != len(o.scores)+1 {
			panic("scores out of order")
		}
		o.scores = append(o.scores, v[1])
		return
	}
	o.next.Observe(from, round, key, v)
}

// auditedScores runs s with an auditor of view on the actor engine and
// returns its score after every iteration.
func auditedScores(t *testing.T, s Setup, alt *data.Set, view audit.View) []float64 {
	t.Helper()
	a, err := diffusion.NewAuditor(s.Config, diffusion.Problem{A: s.A, Sets: s.Sets, Loss: s.Loss, W0: s.W0}, alt, view, diffusion.SeedStreams(seed))
	if err != nil {
		t.Fatal(err)
	}
	obs := &scoreObserver{next: NewCollector(len(s.Sets), len(s.W0))}
	r := actors.NewRun(actors.Options{RunSeed: seed, Observer: obs})
	defer r.Close()
	sched, err := Spawn(r, s)
	if err != nil {
		t.Fatal(err)
	}
	obs.tap = NewAuditTap(a, sched+1).Spawn(r)
	if err := r.Execute(sched, &msg.Start{}); err != nil {
		t.Fatal(err)
	}
	return obs.scores
}

// The tap scores on the actor engine exactly what the auditor scores on the
// reference's shares, bit for bit, for every scheme and view: it reads the
// same messages and scores an iteration from them in a fixed order, whatever
// the order of delivery.
func TestAuditTapScoresAsTheReference(t *testing.T) {
	g := network(t)
	alts, _ := data.Regression(data.RegressionConfig{Agents: agents, SamplesMin: 20, SamplesMax: 30, Dim: dim, CovScale: 0.5, NoiseVarMin: 0.1, NoiseVarMax: 1}, 7)
	for _, sc := range []diffusion.Scheme{diffusion.None, diffusion.Random, diffusion.GraphHomomorphic, diffusion.LocalGraphHomomorphic} {
		for _, view := range []audit.View{audit.WireView, audit.NetworkView} {
			t.Run(sc.String()+"/"+view.String(), func(t *testing.T) {
				cfg := diffusion.Config{Strategy: diffusion.CTA, StepSize: 0.1, Privacy: privacy(sc)}
				if sc == diffusion.LocalGraphHomomorphic {
					cfg.Privacy.Keys = pairmask.Secure
				}
				s := setup(t, cfg, topology.Metropolis(g))
				got := auditedScores(t, s, alts[0], view)
				a, err := diffusion.NewAuditor(cfg, diffusion.Problem{A: s.A, Sets: s.Sets, Loss: s.Loss, W0: s.W0}, alts[0], view, diffusion.SeedStreams(seed))
				if err != nil {
					t.Fatal(err)
				}
				err = diffusion.Reference(cfg, diffusion.Problem{A: s.A, Sets: s.Sets, Loss: s.Loss, W0: s.W0}, seed, s.Iterations,
					diffusion.Hooks{Share: func(i, j, from, to int, v []float64) {
						if err := a.Observe(i, j, from, to, v); err != nil {
							t.Fatal(err)
						}
					}})
				if err != nil {
					t.Fatal(err)
				}
				want := make([]float64, s.Iterations)
				for i := range want {
					want[i] = a.Score(i + 1)
				}
				if !slices.Equal(got, want) || len(got) != s.Iterations || math.IsNaN(got[len(got)-1]) {
					t.Errorf("actor scores %v\nreference   %v", got, want)
				}
			})
		}
	}
}
