package randomwalk

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"
	"google.golang.org/protobuf/proto"

	"maple/actors"
	"maple/actors/msg"
	"maple/actors/trace"
	"maple/algorithms/data"
	"maple/algorithms/loss"
	rw "maple/algorithms/randomwalk"
	"maple/algorithms/rng"
	"maple/topology"
)

// TestMain fails the package if any test leaves a goroutine behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// problem returns a small instance of paper 003's set-up: G(n, 0.4), one
// two-class Gaussian sample per node (two at the odd nodes, to cover
// multi-sample nodes), logistic loss with ρ = 1/(2N).
func problem(t testing.TB, n int) rw.Problem {
	t.Helper()
	g, err := topology.ErdosRenyi(n, 0.4, 1, rng.New(3, "test", "graph"), 1000)
	if err != nil {
		t.Fatal(err)
	}
	sets, _ := data.Mixture(data.MixtureConfig{Agents: n, SamplesMin: 1, SamplesMax: 2, Dim: 3, Mean: 1, Variance: 4, Positive: 0.5}, 8)
	return rw.Problem{Graph: g, Sets: sets, Loss: loss.Loss{Kind: loss.Logistic, Rho: 1 / (2 * float64(n))}}
}

// event is one Observer call.
type event struct {
	kind          string
	walk, k, node int
	bytes         int
	active        bool
	model         []float64
}

// recorder keeps the events per walk (walks interleave on the actor engine;
// gossip and set-up events go to their own lists).
type recorder struct {
	walks  map[int][]event
	gossip []event
	setup  map[int]event
}

func newRecorder() *recorder { return &recorder{walks: map[int][]event{}, setup: map[int]event{}} }

func (r *recorder) Setup(node, messages, bytes int) {
	r.setup[node] = event{kind: "setup", node: node, k: messages, bytes: bytes}
}
func (r *recorder) Start(walk, node int, model []float64) {
	r.walks[walk] = append(r.walks[walk], event{kind: "start", walk: walk, node: node, model: slices.Clone(model)})
}
func (r *recorder) Step(walk, k, node int, model []float64, bytes int) {
	r.walks[walk] = append(r.walks[walk], event{kind: "step", walk: walk, k: k, node: node, bytes: bytes, model: slices.Clone(model)})
}
func (r *recorder) GossipStart(node int, model []float64) {
	r.gossip = append(r.gossip, event{kind: "gstart", node: node, model: slices.Clone(model)})
}
func (r *recorder) Gossip(k, node int, model []float64, bytes int, active bool) {
	r.gossip = append(r.gossip, event{kind: "gossip", k: k, node: node, bytes: bytes, active: active, model: slices.Clone(model)})
}

// actorRun executes s on the actor engine and records its events.
func actorRun(t *testing.T, s Setup, opts actors.Options) (*recorder, *actors.Run) {
	t.Helper()
	rec := newRecorder()
	col := &Collector{Observer: rec, Nodes: len(s.Problem.Sets)}
	opts.Observer = col
	s.Observer = rec
	r := actors.NewRun(opts)
	t.Cleanup(r.Close)
	sched, _, err := Spawn(r, s)
	if err != nil {
		t.Fatal(err)
	}
	col.First = sched + 1
	if err := r.Execute(sched, &msg.Start{}); err != nil {
		t.Fatal(err)
	}
	return rec, r
}

// sameEvents compares two event lists; models must agree to 1e-12 (they are
// computed by the same operations in the same order, so they agree exactly
// in practice).
func sameEvents(a, b []event) error {
	if len(a) != len(b) {
		return fmt.Errorf("%d events vs %d", len(a), len(b))
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.kind != y.kind || x.walk != y.walk || x.k != y.k || x.node != y.node || x.bytes != y.bytes || x.active != y.active || len(x.model) != len(y.model) {
			return fmt.Errorf("event %d: %+v vs %+v", i, x, y)
		}
		for j := range x.model {
			if math.Abs(x.model[j]-y.model[j]) > 1e-12 {
				return fmt.Errorf("event %d (%s k=%d): model[%d] %v vs %v", i, x.kind, x.k, j, x.model[j], y.model[j])
			}
		}
	}
	return nil
}

// The actor run reports the same events as the reference: every step's node,
// model and token size, walk by walk, and every gossip update in order — for
// every walk variant, several walks at once, a node rule whose nodes keep
// state between visits, and with latency and jitter (which reorder
// deliveries between walks but not within one).
func TestActorRunMatchesReference(t *testing.T) {
	const T, seed = 40, 17
	p := problem(t, 9)
	base := rw.Config{Protocol: rw.Walk, Walks: 1, StepSize: 0.05, Exponent: 0.75, Radius: 5}
	cases := map[string]rw.Config{}
	add := func(name string, mutate func(*rw.Config)) {
		c := base
		mutate(&c)
		cases[name] = c
	}
	add("uniform", func(c *rw.Config) { c.Target = rw.Uniform })
	add("importance", func(c *rw.Config) { c.Target = rw.Importance })
	add("gamma", func(c *rw.Config) {
		c.Target, c.Privacy = rw.Importance, rw.Privacy{Mechanism: rw.GammaMechanism, Theta: 5}
	})
	add("gamma-noisy-r-3-walks", func(c *rw.Config) {
		c.Target, c.Weighting, c.Walks = rw.Importance, rw.NoisyR, 3
		c.Privacy = rw.Privacy{Mechanism: rw.GammaMechanism, Theta: 5}
	})
	add("truncated", func(c *rw.Config) {
		c.Target, c.Privacy = rw.Importance, rw.Privacy{Mechanism: rw.TruncatedGamma, Theta: 5, Low: 5, High: 40}
	})
	add("laplace-zero-init", func(c *rw.Config) {
		c.Target, c.Init = rw.Importance, rw.Zero
		c.Privacy = rw.Privacy{Mechanism: rw.LaplaceMechanism, Scale: 10, Low: 2}
	})
	add("walkman-3-walks", func(c *rw.Config) { c.Walks, c.Init, c.Node = 3, rw.Zero, walkman{} })
	add("walkman-gamma", func(c *rw.Config) {
		c.Target, c.Init, c.Node = rw.Importance, rw.Zero, walkman{}
		c.Privacy = rw.Privacy{Mechanism: rw.GammaMechanism, Theta: 5}
	})
	add("gossip-step-then-average", func(c *rw.Config) { c.Protocol = rw.Gossip })
	add("gossip-average-then-step-per-node", func(c *rw.Config) {
		c.Protocol, c.Gossip = rw.Gossip, rw.GossipConfig{Order: rw.AverageThenStep, Step: rw.NodeStep}
	})
	for name, cfg := range cases {
		for _, timing := range []actors.Timing{{}, {Latency: 0.01, Jitter: 0.05}} {
			ref := newRecorder()
			if err := rw.Reference(cfg, p, seed, T, ref, WireSizer{}); err != nil {
				t.Fatal(err)
			}
			got, r := actorRun(t, Setup{Config: cfg, Problem: p, Iterations: T, GradientTime: 0.001}, actors.Options{RunSeed: seed, Timing: timing})
			if err := sameEvents(got.gossip, ref.gossip); err != nil {
				t.Errorf("%s %+v: gossip: %v", name, timing, err)
			}
			for w := range cfg.Walks {
				if cfg.Protocol == rw.Gossip {
					break
				}
				if len(ref.walks[w]) != T+1 {
					t.Errorf("%s: walk %d has %d events, want %d", name, w, len(ref.walks[w]), T+1)
				}
				if err := sameEvents(got.walks[w], ref.walks[w]); err != nil {
					t.Errorf("%s %+v: walk %d: %v", name, timing, w, err)
				}
			}
			for node, e := range ref.setup {
				if g := got.setup[node]; g.k != e.k || g.bytes != e.bytes {
					t.Errorf("%s: set-up of node %d: %+v vs %+v", name, node, got.setup[node], e)
				}
			}
			// Messages: Start, N Ticks, 2|E| announcements, N Dones, W
			// WalkStarts, the tokens and W Dones; gossip: Start and 4 per
			// iteration.
			want := uint64(1 + 4*T)
			if cfg.Protocol == rw.Walk {
				want = uint64(1 + 2*len(p.Sets) + 2*len(p.Graph.Edges()) + 2*cfg.Walks)
				for _, events := range got.walks {
					for _, e := range events {
						if e.bytes > 0 {
							want++
						}
					}
				}
			}
			if r.Messages() != want {
				t.Errorf("%s: %d messages delivered, want %d", name, r.Messages(), want)
			}
		}
	}
}

// A traced walk shows the set-up exchange and the token's path: every
// announcement, then tokens whose sizes are the ones reported, each sent by
// the node the previous one went to, with the round of the step it follows.
func TestTraceShowsSetupAndPath(t *testing.T) {
	const T = 40
	p := problem(t, 7)
	cfg := rw.Config{Protocol: rw.Walk, Target: rw.Importance, Walks: 1, StepSize: 0.05, Exponent: 0.75, Radius: 5,
		Privacy: rw.Privacy{Mechanism: rw.GammaMechanism, Theta: 5}}
	var recs []trace.Record
	sink := func(rec *trace.Record) error { recs = append(recs, rec.Clone()); return nil }
	got, _ := actorRun(t, Setup{Config: cfg, Problem: p, Iterations: T}, actors.Options{RunSeed: 4, Trace: actors.TraceOptions{Sink: sink}})
	var announce, tokens []trace.Record
	for _, rec := range recs {
		switch rec.Type {
		case "WalkAnnounce":
			announce = append(announce, rec)
			if len(tokens) > 0 {
				t.Errorf("announcement #%d after a token", rec.Seq)
			}
		case "WalkToken":
			tokens = append(tokens, rec)
		}
	}
	if len(announce) != 2*len(p.Graph.Edges()) {
		t.Errorf("%d announcements, want 2|E| = %d", len(announce), 2*len(p.Graph.Edges()))
	}
	var moves []event
	for _, e := range got.walks[0] {
		if e.bytes > 0 {
			moves = append(moves, e)
		}
	}
	if len(tokens) != len(moves) || len(tokens) == 0 {
		t.Fatalf("%d tokens traced, %d moves reported", len(tokens), len(moves))
	}
	at := rw.NodeName(got.walks[0][0].node)
	for i, tok := range tokens {
		if tok.From != at || tok.Size != moves[i].bytes || tok.Round != moves[i].k || tok.Dim != 3 {
			t.Errorf("token %d: %s → %s round %d %dB, want from %s round %d %dB", i, tok.From, tok.To, tok.Round, tok.Size, at, moves[i].k, moves[i].bytes)
		}
		at = tok.To
	}
}

// A protocol violation stops the run with an error naming the actor.
func TestForeignMessagesFailTheRun(t *testing.T) {
	p := problem(t, 5)
	cfg := rw.Config{Protocol: rw.Walk, Target: rw.Uniform, Walks: 1, StepSize: 0.05, Exponent: 0.75, Radius: 5}
	r := actors.NewRun(actors.Options{RunSeed: 1})
	defer r.Close()
	sched, _, err := Spawn(r, Setup{Config: cfg, Problem: p, Iterations: 10})
	if err != nil {
		t.Fatal(err)
	}
	// A token before any set-up: the node does not know its neighbours.
	err = r.Execute(sched+1, &msg.WalkStart{Walk: 0})
	if err == nil || !strings.Contains(err.Error(), "node/0") {
		t.Errorf("error %v, want a failure naming node/0", err)
	}
}

// Bad input is refused before any actor is spawned.
func TestSpawnRefusesBadInput(t *testing.T) {
	p := problem(t, 5)
	cfg := rw.Config{Protocol: rw.Walk, Target: rw.Uniform, Walks: 1, StepSize: 0.05, Exponent: 0.4, Radius: 5}
	r := actors.NewRun(actors.Options{RunSeed: 1})
	defer r.Close()
	if _, _, err := Spawn(r, Setup{Config: cfg, Problem: p, Iterations: 10}); err == nil || !strings.Contains(err.Error(), "exponent") {
		t.Errorf("q = 0.4 accepted: %v", err)
	}
	cfg.Exponent = 0.75
	if _, _, err := Spawn(r, Setup{Config: cfg, Problem: p, Iterations: 0}); err == nil {
		t.Error("0 iterations accepted")
	}
	if r.Name(0) != "unknown/0" {
		t.Error("an actor was spawned despite the errors")
	}
}

// tokenSize is proto.Size of the token, for walks, steps and dimensions at
// and around every varint length boundary, zero and negative values
// included.
func TestTokenSizeIsProtoSize(t *testing.T) {
	values := []int{0, 1, -1, 127, 128, 16383, 16384, 1<<21 - 1, 1 << 21, 1<<31 - 1, -1 << 31}
	steps := append(values, 1<<35, 1<<62, -1<<40)
	for _, walk := range values {
		for _, k := range steps {
			for _, dim := range []int{0, 1, 10, 15, 16, 2047, 2048} {
				model := make([]float64, dim)
				if got, want := tokenSize(walk, k, dim), proto.Size(token(walk, k, model)); got != want {
					t.Errorf("walk %d, step %d, dimension %d: tokenSize %d, proto.Size %d", walk, k, dim, got, want)
				}
			}
		}
	}
}
