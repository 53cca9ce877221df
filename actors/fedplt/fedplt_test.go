package fedplt

import (
	"fmt"
	"math"
	"testing"

	"go.uber.org/goleak"

	"maple/actors"
	"maple/actors/msg"
	"maple/actors/trace"
	"maple/algorithms/data"
	"maple/algorithms/fedplt"
	"maple/algorithms/loss"
)

// TestMain fails the package if any test leaves a goroutine behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// problem returns a small logistic-regression problem with the paper's
// convex regularizer (ε = 0.5, maple's ρ = 0.25).
func problem(t testing.TB, agents, q, dim int) (*fedplt.Problem, []float64) {
	t.Helper()
	sets, _, _ := data.Logistic(data.LogisticConfig{Agents: agents, SamplesMin: q, SamplesMax: q, Dim: dim,
		CovScale: 1, SharedCovariance: true, ScoreSD: 2, MeanShift: 0.3, TestSamples: 1}, 11)
	p := fedplt.NewProblem(fedplt.Objective{Loss: loss.Loss{Kind: loss.Logistic, Rho: 0.25}}, sets)
	sol, err := fedplt.Solve(p, fedplt.Prox{}, 1e-11, 10000)
	if err != nil {
		t.Fatal(err)
	}
	return p, sol.X
}

// config returns a resolved configuration of method m on p, adjusted by edit.
func config(t testing.TB, m fedplt.Method, p *fedplt.Problem, edit func(*fedplt.Config)) *fedplt.Config {
	t.Helper()
	n := len(p.Sets)
	cfg := &fedplt.Config{Method: m, Agents: n, Epochs: 5, Rho: 1, Solvers: same(n, "gd", fedplt.GD{}),
		Costs: fedplt.Costs{Gradient: 1, Communication: 10}, FedPDEta: 1, TamunaEta: 0.2, LEDBeta: 0.1,
		FiveGCS: fedplt.FiveGCSParams{Tau: 1, Gamma: 1 / float64(n), Mu: float64(n) * p.Moduli.Low}}
	if edit != nil {
		edit(cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	r, err := cfg.Resolve(p.Moduli, p.Sizes())
	if err != nil {
		t.Fatal(err)
	}
	return &r
}

func monitor(t testing.TB, cfg *fedplt.Config, p *fedplt.Problem, opt []float64, seed uint64) (*fedplt.Monitor, [][]float64) {
	t.Helper()
	x0, err := fedplt.InitialModels(cfg, p, fedplt.SeededStreams(seed))
	if err != nil {
		t.Fatal(err)
	}
	return fedplt.NewMonitor(cfg.Method, p.Obj, p.Sets, cfg.Prox, opt, cfg.Rho, 1e-14, x0, x0), x0
}

// runActors runs cfg on the actor engine and returns its monitor.
func runActors(t testing.TB, cfg *fedplt.Config, p *fedplt.Problem, opt []float64, seed uint64, rounds int, sink func(*trace.Record) error) *fedplt.Monitor {
	t.Helper()
	mon, x0 := monitor(t, cfg, p, opt, seed)
	obs := NewObserver(mon)
	r := actors.NewRun(actors.Options{RunSeed: seed, Observer: obs, Trace: actors.TraceOptions{Sink: sink}})
	defer r.Close()
	sched, err := Spawn(r, Setup{Config: cfg, Problem: p, X0: x0, Rounds: rounds, Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Execute(sched, &msg.Start{}); err != nil {
		t.Fatal(err)
	}
	return mon
}

// The actor engine must not change the mathematics: for the same seed every
// method's actor run and its actor-free reference report the same metrics
// round by round. Both combine in agent order, so they agree to rounding;
// the 1e-12 (relative) is asserted.
func TestActorRunMatchesReference(t *testing.T) {
	p, opt := problem(t, 6, 30, 3)
	subset := func(c *fedplt.Config) { c.Participation = fedplt.Participation{Kind: fedplt.Subset, Active: 3} }
	cases := []struct {
		name string
		m    fedplt.Method
		edit func(*fedplt.Config)
	}{
		{"fed-plt/gd", fedplt.PLT, nil},
		{"fed-plt/bernoulli", fedplt.PLT, func(c *fedplt.Config) {
			c.Participation = fedplt.Participation{Kind: fedplt.Bernoulli, ProbMin: 0.3, ProbMax: 0.9}
		}},
		{"fed-plt/subset-agd", fedplt.PLT, func(c *fedplt.Config) {
			subset(c)
			for i := range c.Solvers {
				c.Solvers[i] = fedplt.Solver{Name: "agd", Rule: fedplt.AGD{}}
			}
		}},
		{"fed-plt/mixed-solvers", fedplt.PLT, func(c *fedplt.Config) {
			c.Solvers[1] = fedplt.Solver{Name: "sgd", Rule: fedplt.SGD{Batch: 5}}
			c.Solvers[2] = fedplt.Solver{Name: "noisy-gd", Rule: fedplt.NoisyGD{Noise: 0.01, Clip: 2}}
			c.Solvers[3] = fedplt.Solver{Name: "agd", Rule: fedplt.AGD{}}
		}},
		{"fed-plt/prior-noisy", fedplt.PLT, func(c *fedplt.Config) {
			c.Init = fedplt.PriorInit
			for i := range c.Solvers {
				c.Solvers[i] = fedplt.Solver{Name: "noisy-gd", Rule: fedplt.NoisyGD{Noise: 0.01}}
			}
		}},
		{"fed-plt/l1", fedplt.PLT, func(c *fedplt.Config) { c.Prox = fedplt.Prox{Kind: fedplt.L1, Weight: 0.5} }},
		{"fedpd", fedplt.FedPD, nil},
		{"fedlin", fedplt.FedLin, nil},
		{"tamuna", fedplt.Tamuna, nil},
		{"tamuna/subset", fedplt.Tamuna, subset},
		{"led", fedplt.LED, nil},
		{"5gcs", fedplt.FiveGCS, nil},
		{"5gcs/subset-agd", fedplt.FiveGCS, func(c *fedplt.Config) {
			subset(c)
			for i := range c.Solvers {
				c.Solvers[i] = fedplt.Solver{Name: "agd", Rule: fedplt.AGD{}}
			}
		}},
	}
	const rounds, seed = 25, 5
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config(t, tc.m, p, tc.edit)
			actor := runActors(t, cfg, p, opt, seed, rounds, nil)
			ref, x0 := monitor(t, cfg, p, opt, seed)
			if _, err := fedplt.Reference(cfg, p, x0, seed, rounds, ref); err != nil {
				t.Fatal(err)
			}
			if len(actor.Records) != len(ref.Records) {
				t.Fatalf("actor run recorded %d rounds, reference %d", len(actor.Records), len(ref.Records))
			}
			for k, a := range actor.Records {
				r := ref.Records[k]
				for _, q := range []struct {
					what string
					a, r float64
				}{{"stationarity", a.Stationarity, r.Stationarity}, {"distance", a.Distance, r.Distance},
					{"cost", a.Cost, r.Cost}, {"stacked error", a.Stacked, r.Stacked}} {
					if math.Abs(q.a-q.r) > 1e-12*math.Max(1, math.Abs(q.r)) {
						t.Fatalf("round %d: %s %v (actors) vs %v (reference)", k, q.what, q.a, q.r)
					}
				}
			}
		})
	}
}

// A traced partial-participation run shows the protocol: in every round the
// coordinator sends y only to the active agents, exactly those agents reply,
// and an inactive agent neither receives nor sends anything.
func TestInactiveAgentsSendNothing(t *testing.T) {
	p, opt := problem(t, 8, 20, 3)
	cfg := config(t, fedplt.PLT, p, func(c *fedplt.Config) {
		c.Participation = fedplt.Participation{Kind: fedplt.Subset, Active: 3}
	})
	var recs []trace.Record
	const rounds = 12
	runActors(t, cfg, p, opt, 3, rounds, func(r *trace.Record) error { recs = append(recs, *r); return nil })
	type sets struct{ to, from map[string]bool }
	byRound := map[int]*sets{}
	agentMessages := map[int]map[string]bool{} // round → agents appearing in any message
	for _, r := range recs {
		s := byRound[r.Round]
		if s == nil {
			s = &sets{to: map[string]bool{}, from: map[string]bool{}}
			byRound[r.Round] = s
			agentMessages[r.Round] = map[string]bool{}
		}
		switch r.Type {
		case "PLTBroadcast":
			if r.From != fedplt.CoordinatorName {
				t.Fatalf("PLTBroadcast from %s", r.From)
			}
			s.to[r.To] = true
			agentMessages[r.Round][r.To] = true
		case "PLTUpdate":
			s.from[r.From] = true
			agentMessages[r.Round][r.From] = true
		default:
			for _, who := range []string{r.From, r.To} {
				if len(who) > 6 && who[:6] == "agent/" {
					t.Errorf("round %d: agent %s in a %s message", r.Round, who, r.Type)
				}
			}
		}
	}
	for k := 1; k <= rounds; k++ {
		s := byRound[k]
		if s == nil {
			t.Fatalf("round %d has no messages", k)
		}
		if len(s.to) != 3 || fmt.Sprint(s.to) != fmt.Sprint(s.from) {
			t.Errorf("round %d: y sent to %v, z received from %v; want the same 3 agents", k, s.to, s.from)
		}
		if len(agentMessages[k]) != 3 {
			t.Errorf("round %d: %d agents exchanged messages, want the 3 active ones", k, len(agentMessages[k]))
		}
	}
}

// same returns n copies of the local solver rule registered as name.
func same(n int, name string, rule fedplt.LocalSolver) []fedplt.Solver {
	s := make([]fedplt.Solver, n)
	for i := range s {
		s[i] = fedplt.Solver{Name: name, Rule: rule}
	}
	return s
}
