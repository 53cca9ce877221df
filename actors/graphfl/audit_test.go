package graphfl

import (
	"context"
	"slices"
	"testing"

	"maple/actors"
	"maple/actors/msg"
	"maple/algorithms/data"
	"maple/algorithms/graphfl"
	"maple/privacy/audit"
	"maple/privacy/pairmask"
)

// The tap scores on the actor engine exactly what the auditor scores on the
// reference's messages, bit for bit, for every server scheme and view, with
// random link delays that reorder the messages between links: it scores a
// round from its messages in a fixed order, whatever the order of delivery.
func TestAuditTapScoresAsTheReference(t *testing.T) {
	alts, _ := data.Regression(data.RegressionConfig{Agents: 1, SamplesMin: 10, SamplesMax: 20, Dim: 3, CovScale: 0.6, NoiseVarMin: 0.1, NoiseVarMax: 0.5}, 6)
	for _, sc := range []graphfl.Privacy{
		{}, {Scheme: graphfl.Random, Std: 0.1}, {Scheme: graphfl.RandomBroadcast, Std: 0.1},
		{Scheme: graphfl.GraphHomomorphic, Std: 0.1}, {Scheme: graphfl.LocalGraphHomomorphic, Std: 0.1, Keys: pairmask.Secure},
	} {
		for _, view := range []audit.View{audit.WireView, audit.NetworkView} {
			t.Run(sc.Scheme.String()+"/"+view.String(), func(t *testing.T) {
				s := setup(t, network(t))
				s.Config.Privacy = sc
				prob := graphfl.Problem{A: s.A, Sets: s.Sets, Loss: s.Loss, W0: s.W0}
				a, err := graphfl.NewAuditor(context.Background(), s.Config, prob, alts[0], view, seed, s.Rounds)
				if err != nil {
					t.Fatal(err)
				}
				c := NewCollector(servers, len(s.W0))
				r := actors.NewRun(actors.Options{RunSeed: seed, Observer: c, Timing: actors.Timing{Latency: 1, Jitter: 0.5}})
				defer r.Close()
				sched, err := Spawn(r, s)
				if err != nil {
					t.Fatal(err)
				}
				NewAuditTap(a, sched+1).Spawn(r)
				if err := r.Execute(sched, &msg.Start{}); err != nil {
					t.Fatal(err)
				}
				ref, err := graphfl.NewAuditor(context.Background(), s.Config, prob, alts[0], view, seed, s.Rounds)
				if err != nil {
					t.Fatal(err)
				}
				err = graphfl.Reference(s.Config, prob, seed, s.Rounds, graphfl.Hooks{Share: func(i, from, to int, v []float64) {
					if err := ref.Observe(i, from, to, v); err != nil {
						t.Fatal(err)
					}
				}})
				if err != nil {
					t.Fatal(err)
				}
				var got, want []float64
				for i := 0; i <= s.Rounds; i++ {
					got, want = append(got, a.Score(i)), append(want, ref.Score(i))
				}
				if !slices.Equal(got, want) {
					t.Errorf("actor scores %v\nreference   %v", got, want)
				}
			})
		}
	}
}
