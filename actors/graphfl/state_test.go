package graphfl

import (
	"slices"
	"sync"
	"testing"

	"maple/actors"
	afedavg "maple/actors/fedavg"
	"maple/algorithms/fedavg"
	"maple/algorithms/graphfl"
)

// countingRule is a stateful server rule that records every server it makes
// and how many rounds each combined: the mean, plus a count.
type countingRule struct {
	mu   *sync.Mutex
	made *[]*countingServer
}

// NewRule implements fedavg.StatefulRule.
func (r countingRule) NewRule(_ *fedavg.Config, _ int) fedavg.Rule {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := &countingServer{}
	*r.made = append(*r.made, s)
	return s
}

// countingServer is one server's rule: the mean, counting its rounds.
type countingServer struct{ rounds int }

// Combine implements fedavg.Rule.
func (s *countingServer) Combine(model []float64, replies [][]float64, share fedavg.Share, mu float64) {
	s.rounds++
	fedavg.Mean(model, replies, share, mu)
}

// Graph FL's P servers share one configuration, but a stateful rule gives
// each its own state: on both engines the rule makes exactly P servers per
// run, each of which combines once per round. A rule shared by the servers
// would be made once and combine P times a round; one made per round, or per
// client, would be made more often and combine fewer times. And the state
// is the servers' own in arithmetic too: FedAvgM's velocity, kept per server,
// gives the same models on both engines, which differ from the mean's.
func TestGraphFLServersKeepTheirOwnState(t *testing.T) {
	s := setup(t, network(t))
	prob := graphfl.Problem{A: s.A, Sets: s.Sets, Loss: s.Loss, W0: s.W0}
	var mu sync.Mutex
	for _, engine := range []string{"actors", "reference"} {
		var made []*countingServer
		s.Config.Clients.StatefulRule = countingRule{mu: &mu, made: &made}
		if engine == "actors" {
			run(t, s, actors.Options{RunSeed: seed})
		} else if err := graphfl.Reference(s.Config, prob, seed, s.Rounds, graphfl.Hooks{}); err != nil {
			t.Fatal(err)
		}
		if len(made) != servers {
			t.Errorf("%s: the rule made %d servers for %d servers", engine, len(made), servers)
		}
		for p, srv := range made {
			if srv.rounds != s.Rounds {
				t.Errorf("%s: server %d combined %d rounds of %d", engine, p, srv.rounds, s.Rounds)
			}
		}
	}
	if _, err := afedavg.ConfigureServer(&s.Config.Clients, "fedavgm", nil); err != nil {
		t.Fatal(err)
	}
	momentum, _ := run(t, s, actors.Options{RunSeed: seed})
	var ref [][][]float64
	if err := graphfl.Reference(s.Config, prob, seed, s.Rounds, graphfl.Hooks{Models: func(_ int, W [][]float64) {
		rows := make([][]float64, len(W))
		for p, w := range W {
			rows[p] = slices.Clone(w)
		}
		ref = append(ref, rows)
	}}); err != nil {
		t.Fatal(err)
	}
	s.Config.Clients.StatefulRule = nil
	plain, _ := run(t, s, actors.Options{RunSeed: seed})
	last := len(momentum) - 1
	for p := range servers {
		if !slices.Equal(momentum[last][p], ref[last][p]) {
			t.Errorf("server %d: momentum models differ between the engines: %v and %v", p, momentum[last][p], ref[last][p])
		}
		if slices.Equal(momentum[last][p], plain[last][p]) {
			t.Errorf("server %d: the momentum rule gives the mean's model %v", p, plain[last][p])
		}
	}
}
