package diffusion

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"
	"gonum.org/v1/gonum/mat"

	"maple/actors"
	"maple/actors/msg"
	"maple/actors/trace"
	"maple/algorithms/data"
	"maple/algorithms/diffusion"
	"maple/algorithms/loss"
	"maple/algorithms/rng"
	"maple/privacy/homomorphic"
	"maple/privacy/pairmask"
	"maple/privacy/pairmask/pairmasktest"
	"maple/topology"
)

// TestMain fails the package if any test leaves a goroutine behind: every run
// must stop all of its actors.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const (
	agents = 10
	dim    = 3
	seed   = 11
)

// network draws the test's random geometric graph: 10 points in the unit
// square, radius 0.45, redrawn until connected with every degree ≥ 2, so that
// every receiver can mask.
func network(t testing.TB) *topology.Graph {
	t.Helper()
	g, _, err := topology.Geometric(agents, 0.45, 2, rng.New(5, "test", "graph"), 100)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// problem returns least-squares data for the test's agents. CovScale 0.5 keeps
// the Hessians 2R̂ + 2ρI small enough for μ = 0.1 to be stable.
func problem(t testing.TB) ([]*data.Set, loss.Loss) {
	t.Helper()
	sets, _ := data.Regression(data.RegressionConfig{
		Agents: agents, SamplesMin: 20, SamplesMax: 30, Dim: dim, CovScale: 0.5, NoiseVarMin: 0.1, NoiseVarMax: 1,
	}, 99)
	return sets, loss.Loss{Kind: loss.LeastSquares, Rho: 0.01}
}

// run executes s on the actor engine and returns the iterates of every round,
// round-major (out[i-1][p] = w_{p,i}).
func run(t *testing.T, s Setup, opts actors.Options) ([][][]float64, *Collector, *actors.Run) {
	t.Helper()
	var out [][][]float64
	c := NewCollector(len(s.Sets), len(s.W0))
	c.Models = func(_ int, W [][]float64) { out = append(out, clone(W)) }
	opts.Observer = c
	r := actors.NewRun(opts)
	t.Cleanup(r.Close)
	sched, err := Spawn(r, s)
	if err != nil {
		t.Fatal(err)
	}
	c.First = sched + 1
	if err := r.Execute(sched, &msg.Start{}); err != nil {
		t.Fatal(err)
	}
	if len(out) != s.Iterations {
		t.Fatalf("observed %d rounds, want %d", len(out), s.Iterations)
	}
	return out, c, r
}

func clone(W [][]float64) [][]float64 {
	out := make([][]float64, len(W))
	for p := range W {
		out[p] = slices.Clone(W[p])
	}
	return out
}

// reference runs the actor-free recursion with the same inputs.
func reference(t *testing.T, s Setup) [][][]float64 {
	t.Helper()
	var out [][][]float64
	err := diffusion.Reference(s.Config, diffusion.Problem{A: s.A, Sets: s.Sets, Loss: s.Loss, W0: s.W0}, seed, s.Iterations,
		diffusion.Hooks{Models: func(_ int, W [][]float64) { out = append(out, clone(W)) }})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// maxDiff returns the largest coordinate difference of two trajectories.
func maxDiff(a, b [][][]float64) float64 {
	var d float64
	for i := range a {
		for p := range a[i] {
			for j := range a[i][p] {
				d = max(d, math.Abs(a[i][p][j]-b[i][p][j]))
			}
		}
	}
	return d
}

// setup returns a 25-iteration run of cfg on matrix A with the test's data.
func setup(t testing.TB, cfg diffusion.Config, A *mat.Dense) Setup {
	t.Helper()
	sets, l := problem(t)
	return Setup{Config: cfg, A: A, Sets: sets, Loss: l, W0: make([]float64, dim), Iterations: 25, GradientTime: 1e-3}
}

func privacy(scheme diffusion.Scheme) diffusion.Privacy {
	p := diffusion.Privacy{Scheme: scheme}
	if scheme != diffusion.None {
		p.Std = 0.3
	}
	return p
}

// The actor engine must not change the mathematics: for the same seed the
// actor run and the actor-free reference produce the same iterates. Both
// consume the same streams in the same order and add the same terms in the
// same order, so they agree bit for bit; the 1e-12 tolerance of the issue is
// what is asserted (iterates are O(1)), and a loss of exact equality is logged.
func TestActorRunMatchesReference(t *testing.T) {
	g := network(t)
	metropolis, averaging := topology.Metropolis(g), topology.Averaging(g)
	type variant struct {
		name string
		cfg  diffusion.Config
		A    *mat.Dense
	}
	var variants []variant
	for _, st := range []diffusion.Strategy{diffusion.Consensus, diffusion.CTA, diffusion.ATC} {
		for _, sc := range []diffusion.Scheme{diffusion.None, diffusion.Random, diffusion.GraphHomomorphic, diffusion.LocalGraphHomomorphic} {
			cfg := diffusion.Config{Strategy: st, StepSize: 0.1, Privacy: privacy(sc)}
			variants = append(variants, variant{st.String() + "/" + sc.String(), cfg, averaging})
		}
	}
	all := [3]bool{true, true, true}
	extra := []variant{
		{"general/random-self-noise/batch", diffusion.Config{Strategy: diffusion.General, Stages: all, StepSize: 0.1, Gradient: diffusion.Batch, Batch: 5,
			Privacy: diffusion.Privacy{Scheme: diffusion.Random, Std: 0.3, SelfNoise: true}}, averaging},
		{"general/gh-ratio/sample", diffusion.Config{Strategy: diffusion.General, Stages: [3]bool{true, false, true}, StepSize: 0.05, Gradient: diffusion.Sample,
			Privacy: diffusion.Privacy{Scheme: diffusion.GraphHomomorphic, Std: 0.3, Form: homomorphic.Ratio}}, metropolis},
		{"general/lgh-secure", diffusion.Config{Strategy: diffusion.General, Stages: all, StepSize: 0.1, Privacy: privacy(diffusion.LocalGraphHomomorphic)}, metropolis},
		{"atc/lgh-paper/parity", diffusion.Config{Strategy: diffusion.ATC, StepSize: 0.1,
			Privacy: diffusion.Privacy{Scheme: diffusion.LocalGraphHomomorphic, Std: 0.3, Keys: pairmask.Paper, Roles: pairmask.Parity}}, averaging},
		{"cta/lgh-oracle", diffusion.Config{Strategy: diffusion.CTA, StepSize: 0.1,
			Privacy: diffusion.Privacy{Scheme: diffusion.LocalGraphHomomorphic, Std: 0.3, Keys: pairmask.Oracle}}, averaging},
		{"general/local-only", diffusion.Config{Strategy: diffusion.General, StepSize: 0.1, Privacy: privacy(diffusion.Random)}, averaging},
	}
	for _, v := range append(variants, extra...) {
		t.Run(v.name, func(t *testing.T) {
			s := setup(t, v.cfg, v.A)
			got, _, _ := run(t, s, actors.Options{RunSeed: seed})
			want := reference(t, s)
			if d := maxDiff(got, want); d > 1e-12 {
				t.Fatalf("actor run and reference differ by %g", d)
			} else if d != 0 {
				t.Logf("iterates agree to %g but not bit for bit", d)
			}
		})
	}
}

// LGH masks cancel in every receiver's aggregate, so an actor run with masks
// follows the noise-free actor run of the same seed, in every key mode, while
// the shares on the links are visibly masked. Tolerance: with σ_g = 1 each
// message carries at most 8 masks of |g| ≤ 26 (the Laplace truncation of
// noise.LaplaceFromUint64) divided by its weight a ≥ 1/9, and a·(g/a) is
// rounded at 2⁻⁵³ relative; so each aggregate is off by at most
// 8·9·26·2⁻⁵³ ≈ 2e-13 per iteration in the worst case (≈ 1e-16 typically), and
// the stable recursion (ρ < 1) keeps 25 iterations of it well under 1e-9,
// which still fails if a single mask (≈ σ_g = 1) did not cancel. The shares
// themselves carry at least one mask of standard deviation σ_g/a ≥ 1 each,
// so their norms move by O(1) from the plain ones: a mean change below 0.1
// would mean the masks are missing.
func TestLGHFollowsNoiseFreeRun(t *testing.T) {
	A := topology.Averaging(network(t))
	for _, st := range []diffusion.Strategy{diffusion.CTA, diffusion.General} {
		cfg := diffusion.Config{Strategy: st, StepSize: 0.1}
		if st == diffusion.General {
			cfg.Stages = [3]bool{true, true, true}
		}
		plainShares := shareNorms{}
		plain, _, _ := run(t, setup(t, cfg, A), actors.Options{RunSeed: seed, Trace: actors.TraceOptions{Sink: plainShares.record}})
		for _, mode := range []pairmask.Mode{pairmask.Secure, pairmask.Paper, pairmask.Oracle} {
			masked := cfg
			masked.Privacy = diffusion.Privacy{Scheme: diffusion.LocalGraphHomomorphic, Std: 1, Keys: mode}
			maskedShares := shareNorms{}
			got, _, r := run(t, setup(t, masked, A), actors.Options{RunSeed: seed, Trace: actors.TraceOptions{Sink: maskedShares.record}})
			if d := maxDiff(got, plain); d > 1e-9 {
				t.Errorf("%v/%v: the masked run leaves the noise-free one by %g", st, mode, d)
			}
			if w := r.Warnings(); len(w) > 0 {
				t.Errorf("%v/%v: warnings %v on a graph of minimum degree 2", st, mode, w)
			}
			if len(maskedShares) != len(plainShares) {
				t.Errorf("%v/%v: %d shares, the plain run sent %d", st, mode, len(maskedShares), len(plainShares))
			}
			if d := plainShares.meanAbsDiff(maskedShares); d < 0.1 {
				t.Errorf("%v/%v: shares differ from the plain ones by %.3g on average; masks of σ_g = 1 should be visible", st, mode, d)
			}
		}
	}
}

// shareNorms records the norm of every StageShare, keyed by round, link and
// stage.
type shareNorms map[string]float64

func (s shareNorms) record(rec *trace.Record) error {
	if rec.Type == "StageShare" {
		s[fmt.Sprintf("%d %s %s %v", rec.Round, rec.From, rec.To, rec.Fields["stage"])] = rec.Norm
	}
	return nil
}

func (s shareNorms) meanAbsDiff(o shareNorms) float64 {
	var sum float64
	for k, v := range s {
		sum += math.Abs(v - o[k])
	}
	return sum / float64(len(s))
}

// keyMaterial recomputes, from the agents' key streams, what must never leave
// a agent — every private key and every pairwise X25519 secret — and the
// public keys that may.
func keyMaterial(t *testing.T) (secrets []string, public map[string]string) {
	names := make([]string, agents)
	for p := range names {
		names[p] = diffusion.AgentName(p)
	}
	return pairmasktest.KeyMaterial(t, names, func(name string) *rand.Rand { return rng.New(seed, name, diffusion.StreamKey) })
}

// A traced secure LGH run shows the protocol as messages — role
// announcements, public keys, their relays and the masked shares — and
// nothing secret: no record, in any rendering, contains a private key or a
// pairwise secret. The public keys in the trace are those of the recomputed
// private keys, which shows the recomputation finds the keys actually used.
// The set-up messages each agent sent match the protocol exactly and stay
// within the paper's bound (relays, which the bound does not count, are
// checked separately).
func TestTracedLGHRunShowsProtocolAndNoSecret(t *testing.T) {
	A := topology.Averaging(network(t))
	cfg := diffusion.Config{Strategy: diffusion.ATC, StepSize: 0.1, Privacy: privacy(diffusion.LocalGraphHomomorphic)}
	var records []trace.Record
	sink := func(rec *trace.Record) error { records = append(records, rec.Clone()); return nil }
	s := setup(t, cfg, A)
	s.Iterations = 3
	_, c, _ := run(t, s, actors.Options{RunSeed: seed, Trace: actors.TraceOptions{Sink: sink, Payload: true}})

	secrets, public := keyMaterial(t)
	types := map[string]int{}
	for i := range records {
		rec := &records[i]
		types[rec.Type]++
		if rec.Type == "PublicKey" && rec.Fields["key"] != public[rec.From] {
			t.Fatalf("%s sent public key %v, recomputed %s", rec.From, rec.Fields["key"], public[rec.From])
		}
		js, err := json.Marshal(rec)
		if err != nil {
			t.Fatal(err)
		}
		text := string(js) + trace.Format(rec)
		for _, sec := range secrets {
			raw, _ := hex.DecodeString(sec)
			if strings.Contains(text, sec) || strings.Contains(text, base64.StdEncoding.EncodeToString(raw)) {
				t.Fatalf("record %d (%s %s → %s) contains secret key material", rec.Seq, rec.Type, rec.From, rec.To)
			}
		}
	}
	for _, typ := range []string{"RoleAssign", "PublicKey", "RelayedPublicKey", "StageShare"} {
		if types[typ] == 0 {
			t.Errorf("no %s message in the trace (types: %v)", typ, types)
		}
	}

	net, err := s.Network()
	if err != nil {
		t.Fatal(err)
	}
	bounds, err := s.SetupBounds()
	if err != nil {
		t.Fatal(err)
	}
	for p, got := range c.Setup {
		var want diffusion.SetupCounts
		want.Roles = len(net.Senders(p))
		want.Keys = len(net.Receivers(p)) // degree ≥ 2: every receiver masks
		for _, l := range net.Senders(p) {
			for _, m := range net.Senders(p) {
				if m != l && roleOf(t, records, p, l) != roleOf(t, records, p, m) {
					want.Relays++
				}
			}
		}
		if got != want {
			t.Errorf("agent %d sent set-up messages %+v, want %+v", p, got, want)
		}
		if float64(got.Roles+got.Keys) > bounds[p] {
			t.Errorf("agent %d sent %d role and key messages, above the paper's bound %v", p, got.Roles+got.Keys, bounds[p])
		}
	}
}

// roleOf returns the role receiver k announced to sender l in the trace.
func roleOf(t *testing.T, records []trace.Record, k, l int) any {
	t.Helper()
	for _, rec := range records {
		if rec.Type == "RoleAssign" && rec.From == diffusion.AgentName(k) && rec.To == diffusion.AgentName(l) {
			return rec.Fields["role"]
		}
	}
	t.Fatalf("agent %d announced no role to agent %d", k, l)
	return nil
}

// In paper mode the public values e^{−v} travel every round, through the
// receiver, as PaperPublic and RelayedPaperPublic messages.
func TestTracedPaperRunRelaysPublicValues(t *testing.T) {
	A := topology.Metropolis(network(t))
	cfg := diffusion.Config{Strategy: diffusion.CTA, StepSize: 0.1,
		Privacy: diffusion.Privacy{Scheme: diffusion.LocalGraphHomomorphic, Std: 0.3, Keys: pairmask.Paper}}
	perRound := map[int]map[string]int{}
	sink := func(rec *trace.Record) error {
		if perRound[rec.Round] == nil {
			perRound[rec.Round] = map[string]int{}
		}
		perRound[rec.Round][rec.Type]++
		return nil
	}
	s := setup(t, cfg, A)
	s.Iterations = 3
	run(t, s, actors.Options{RunSeed: seed, Trace: actors.TraceOptions{Sink: sink}})
	for round := 0; round <= 3; round++ {
		n := perRound[round]
		if round > 0 && (n["PaperPublic"] == 0 || n["RelayedPaperPublic"] != n["PaperPublic"]) {
			t.Errorf("round %d: %d PaperPublic and %d RelayedPaperPublic messages; want as many relays as values, and some", round, n["PaperPublic"], n["RelayedPaperPublic"])
		}
		// Roles are announced once, in the set-up round 0, which carries
		// nothing else but the harness's Start.
		if (n["RoleAssign"] > 0) != (round == SetupRound) {
			t.Errorf("round %d: %d RoleAssign messages; roles are announced in round 0 only", round, n["RoleAssign"])
		}
		if round == SetupRound && n["RoleAssign"]+n["Start"] != sum(n) {
			t.Errorf("round 0 carries %v; want only Start and the role announcements", n)
		}
	}
}

// A receiver with a single neighbour cannot mask (agent 4, a leaf of agent 3):
// the run warns about it, UnmaskedEdges lists the edge 3 → 4, the leaf
// announces agent 3 the unmasked role, and agent 3's shares to it are its
// plain values, as in the noise-free run.
func TestUnmaskableReceiverIsReported(t *testing.T) {
	g, err := topology.NewGraph(5, [][2]int{{0, 1}, {1, 2}, {2, 3}, {3, 0}, {3, 4}})
	if err != nil {
		t.Fatal(err)
	}
	sets, l := problem(t)
	base := Setup{A: topology.Metropolis(g), Sets: sets[:5], Loss: l, W0: make([]float64, dim), Iterations: 4,
		Config: diffusion.Config{Strategy: diffusion.ATC, StepSize: 0.1}}
	plain := shareNorms{}
	run(t, base, actors.Options{RunSeed: seed, Trace: actors.TraceOptions{Sink: plain.record}})
	s := base
	s.Config.Privacy = privacy(diffusion.LocalGraphHomomorphic)
	edges, err := s.UnmaskedEdges()
	if err != nil {
		t.Fatal(err)
	}
	if want := []diffusion.Edge{{From: 3, To: 4}}; !slices.Equal(edges, want) {
		t.Fatalf("unmasked edges %v, want %v", edges, want)
	}
	masked := shareNorms{}
	var roles []string
	sink := func(rec *trace.Record) error {
		if rec.Type == "RoleAssign" && rec.From == "agent/4" {
			roles = append(roles, fmt.Sprint(rec.To, " ", rec.Fields["role"]))
		}
		return masked.record(rec)
	}
	_, _, r := run(t, s, actors.Options{RunSeed: seed, Trace: actors.TraceOptions{Sink: sink}})
	if w := r.Warnings(); len(w) != 1 || !strings.Contains(w[0], "agent/4") || !strings.Contains(w[0], "unmasked") {
		t.Errorf("warnings %q, want one about agent/4's unmasked messages", w)
	}
	if want := []string{"agent/3 MASK_ROLE_UNMASKED"}; !slices.Equal(roles, want) {
		t.Errorf("agent/4 announced %v, want %v", roles, want)
	}
	// The runs' states differ by rounding only (see TestLGHFollowsNoiseFreeRun),
	// so an unmasked share matches the plain one to 1e-9, while a masked one
	// differs by about σ_g = 0.3.
	for k, v := range masked {
		if d := math.Abs(v - plain[k]); strings.Contains(k, "agent/3 agent/4") && d > 1e-9 {
			t.Errorf("share %s has norm %v, the plain share %v: it should be unmasked", k, v, plain[k])
		} else if strings.Contains(k, "agent/0 agent/3") && d < 1e-3 {
			t.Errorf("share %s is not masked", k)
		}
	}
}

// The GH draws the agents report let the observer check, every round and
// stage, that ratio-free noise cancels in the Perron-weighted network sum on
// the (left-stochastic, not doubly-stochastic) averaging rule; see
// algorithms/diffusion TestGHResidualCancels for the 1e-12σ tolerance.
func TestObservedGHResidualCancels(t *testing.T) {
	A := topology.Averaging(network(t))
	cfg := diffusion.Config{Strategy: diffusion.General, Stages: [3]bool{true, true, true}, StepSize: 0.1,
		Privacy: diffusion.Privacy{Scheme: diffusion.GraphHomomorphic, Std: 0.5}}
	q, err := topology.Perron(A)
	if err != nil {
		t.Fatal(err)
	}
	s := setup(t, cfg, A)
	c := NewCollector(agents, dim)
	res := make([]float64, dim)
	checked := 0
	c.Draws = func(round, stage int, G [][]float64) {
		checked++
		diffusion.GHResidual(res, A, q, G, homomorphic.RatioFree)
		for _, v := range res {
			if math.Abs(v) > 1e-12*cfg.Privacy.Std {
				t.Errorf("round %d stage %d: residual %v", round, stage, res)
			}
		}
	}
	r := actors.NewRun(actors.Options{RunSeed: seed, Observer: c})
	defer r.Close()
	sched, err := Spawn(r, s)
	if err != nil {
		t.Fatal(err)
	}
	c.First = sched + 1
	if err := r.Execute(sched, &msg.Start{}); err != nil {
		t.Fatal(err)
	}
	if checked != 3*s.Iterations {
		t.Errorf("checked %d stage residuals, want %d", checked, 3*s.Iterations)
	}
}

// Bad set-ups are errors, not panics, and leave the run without actors.
func TestSpawnRefusesBadSetups(t *testing.T) {
	A := topology.Averaging(network(t))
	good := setup(t, diffusion.Config{Strategy: diffusion.ATC, StepSize: 0.1}, A)
	cases := map[string]func(s *Setup){
		"no iterations":   func(s *Setup) { s.Iterations = 0 },
		"no matrix":       func(s *Setup) { s.A = nil },
		"few datasets":    func(s *Setup) { s.Sets = s.Sets[:3] },
		"dimension":       func(s *Setup) { s.W0 = make([]float64, dim+1) },
		"batch too large": func(s *Setup) { s.Config.Gradient, s.Config.Batch = diffusion.Batch, 1000 },
		"ratio form": func(s *Setup) {
			s.Config.Privacy = diffusion.Privacy{Scheme: diffusion.GraphHomomorphic, Std: 1, Form: homomorphic.Ratio}
		},
		"negative time": func(s *Setup) { s.GradientTime = -1 },
		"no step":       func(s *Setup) { s.Config.StepSize = 0 },
	}
	for name, change := range cases {
		s := good
		change(&s)
		r := actors.NewRun(actors.Options{})
		if _, err := Spawn(r, s); err == nil {
			t.Errorf("%s: accepted", name)
		}
		if r.Name(0) != "unknown/0" {
			t.Errorf("%s: actors were spawned before the error", name)
		}
		r.Close()
	}
}

// A message that breaks the protocol stops the run with an error naming the
// agent, the round and the message.
func TestProtocolViolationStopsTheRun(t *testing.T) {
	s := setup(t, diffusion.Config{Strategy: diffusion.ATC, StepSize: 0.1}, topology.Averaging(network(t)))
	r := actors.NewRun(actors.Options{RunSeed: seed})
	defer r.Close()
	sched, err := Spawn(r, s)
	if err != nil {
		t.Fatal(err)
	}
	err = r.Execute(sched+1, &msg.StageShare{Stage: 2, Payload: []float64{1, 2, 3}})
	var f *actors.Failure
	if !errors.As(err, &f) || f.Actor != "agent/0" || f.Message != "StageShare" || !strings.Contains(err.Error(), "not an agent") {
		t.Fatalf("error %v, want a failure of agent/0 handling StageShare from a non-agent", err)
	}
}

// Virtual time: with equal datasets, an ATC round with full-batch gradients
// lasts L (the Tick) + N·G (the local gradient) + L (the shares) + L (Done), so
// T rounds take exactly T·(3L + N·G); every quantity is a multiple of a power
// of two here, so the sum is exact.
func TestVirtualDurationOfAnATCRound(t *testing.T) {
	sets, l := problem(t)
	for k := range sets {
		sets[k] = sets[0] // every agent holds N = sets[0].Len() samples
	}
	const L, G = 1.0 / 64, 1.0 / 1024
	s := Setup{Config: diffusion.Config{Strategy: diffusion.ATC, StepSize: 0.1}, A: topology.Metropolis(network(t)),
		Sets: sets, Loss: l, W0: make([]float64, dim), Iterations: 25, GradientTime: G}
	_, _, r := run(t, s, actors.Options{RunSeed: seed, Timing: actors.Timing{Latency: L}})
	n := float64(sets[0].Len())
	if got, want := r.Duration(), 25*(3*L+n*G); got != want {
		t.Errorf("virtual duration %v, want 25·(3L + N·G) = %v", got, want)
	}
}

func sum(counts map[string]int) int {
	n := 0
	for _, c := range counts {
		n += c
	}
	return n
}
