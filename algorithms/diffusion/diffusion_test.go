package diffusion

import (
	"math"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"maple/algorithms/data"
	"maple/algorithms/loss"
	"maple/privacy/homomorphic"
	"maple/privacy/noise"
	"maple/privacy/pairmask"
	"maple/topology"
)

// trajectory runs Reference and returns every iterate, iteration-major.
func trajectory(t *testing.T, cfg Config, prob Problem, seed uint64, n int) [][][]float64 {
	t.Helper()
	var out [][][]float64
	err := Reference(cfg, prob, seed, n, Hooks{Models: func(_ int, W [][]float64) {
		out = append(out, cloneRows(W))
	}})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func cloneRows(W [][]float64) [][]float64 {
	out := make([][]float64, len(W))
	for p := range W {
		out[p] = slices.Clone(W[p])
	}
	return out
}

// Ratio-free GH noise cancels in the Perron-weighted network sum for a
// left-stochastic, not doubly-stochastic A (the averaging rule), at every
// communicating stage. Tolerance: g_m enters with the coefficients q_p a_mp (p ≠
// m) and q_m(a_mm − 1), whose absolute values sum to at most 2q_m, so the sum
// has absolute size S ≤ 2 max|g|; its ≈ P(d+1) ≈ 60 rounded additions err by
// at most 60·2⁻⁵³·S ≈ 1.3e-14 max|g|, and q from the Perron solve satisfies
// Aq = q to ~1e-15. Laplace draws never exceed 37 scales (noise.
// LaplaceFromUint64), i.e. 26σ, so the residual is below 5e-13σ: 1e-12σ
// holds. With the uniform weights 1/P instead of q the residual is of the
// order of σ, which shows the check has teeth.
func TestGHResidualCancels(t *testing.T) {
	A, sets, l := regressionNetwork(t, topology.Averaging)
	if topology.CheckDoublyStochastic(A, 1e-9) == nil {
		t.Fatal("the averaging rule should not be doubly stochastic on this graph")
	}
	q, err := topology.Perron(A)
	if err != nil {
		t.Fatal(err)
	}
	const std = 0.5
	uniform := make([]float64, len(q))
	for p := range uniform {
		uniform[p] = 1 / float64(len(q))
	}
	res := make([]float64, 3)
	for _, cfg := range []Config{
		{Strategy: ATC, StepSize: 0.1},
		{Strategy: General, Stages: [3]bool{true, true, true}, StepSize: 0.1},
	} {
		cfg.Privacy = Privacy{Scheme: GraphHomomorphic, Std: std}
		var worst, wrong float64
		calls := 0
		err := Reference(cfg, Problem{A: A, Sets: sets, Loss: l, W0: make([]float64, 3)}, 3, 20, Hooks{Draws: func(_, _ int, G [][]float64) {
			calls++
			GHResidual(res, A, q, G, homomorphic.RatioFree)
			worst = max(worst, maxAbs(res))
			GHResidual(res, A, uniform, G, homomorphic.RatioFree)
			wrong = max(wrong, maxAbs(res))
		}})
		if err != nil {
			t.Fatal(err)
		}
		stages := 0
		for _, u := range cfg.Uses() {
			if u {
				stages++
			}
		}
		if calls != 20*stages {
			t.Fatalf("%v: %d draws reported, want %d", cfg.Strategy, calls, 20*stages)
		}
		if worst > 1e-12*std {
			t.Errorf("%v: Perron-weighted residual %g > 1e-12σ", cfg.Strategy, worst)
		}
		if wrong < 1e-3*std {
			t.Errorf("%v: residual with uniform weights %g; the draws should not cancel without q", cfg.Strategy, wrong)
		}
	}
}

func maxAbs(x []float64) float64 {
	var m float64
	for _, v := range x {
		m = max(m, math.Abs(v))
	}
	return m
}

// The printed ratio form (paper 001 eq. 44) only cancels for doubly-stochastic
// A: it is refused for the averaging rule and accepted for Metropolis.
func TestRatioFormNeedsDoublyStochastic(t *testing.T) {
	cfg := Config{Strategy: ATC, StepSize: 0.1, Privacy: Privacy{Scheme: GraphHomomorphic, Std: 0.1, Form: homomorphic.Ratio}}
	averaging, _, _ := regressionNetwork(t, topology.Averaging)
	if _, err := NewNetwork(averaging, cfg); err == nil || !strings.Contains(err.Error(), "doubly-stochastic") {
		t.Errorf("ratio form on the averaging rule: error %v, want a refusal naming doubly-stochastic A", err)
	}
	metropolis, _, _ := regressionNetwork(t, topology.Metropolis)
	if _, err := NewNetwork(metropolis, cfg); err != nil {
		t.Errorf("ratio form on Metropolis weights: %v", err)
	}
}

// LGH masks cancel in every receiver's aggregate, so the trajectory is the
// noise-free one of the same seed up to rounding, in every key mode. The masks
// are large (σ_g = 1 against O(1) models) and enter each aggregate as ±g/a·a;
// at most ~10 masks of |g| ≤ 26 (the Laplace truncation) per message, each
// rounded at 2⁻⁵³ relative, give an aggregate error below 1e-13 per iteration
// in the worst case, and the stable recursion (ρ < 1) does not amplify it over
// 30 iterations by more than a small factor: 1e-9 is a safe bound that still
// fails if a single mask (≈ σ) did not cancel.
func TestLGHFollowsNoiseFreeTrajectory(t *testing.T) {
	A, sets, l := regressionNetwork(t, topology.Averaging)
	prob := Problem{A: A, Sets: sets, Loss: l, W0: make([]float64, 3)}
	for _, st := range []Strategy{Consensus, CTA, ATC, General} {
		cfg := Config{Strategy: st, StepSize: 0.1}
		if st == General {
			cfg.Stages = [3]bool{true, true, true}
		}
		plain := trajectory(t, cfg, prob, 4, 30)
		for _, mode := range []pairmask.Mode{pairmask.Secure, pairmask.Paper, pairmask.Oracle} {
			masked := cfg
			masked.Privacy = Privacy{Scheme: LocalGraphHomomorphic, Std: 1, Keys: mode}
			got := trajectory(t, masked, prob, 4, 30)
			if d := maxTrajectoryDiff(got, plain); d > 1e-9 {
				t.Errorf("%v/%v: LGH trajectory leaves the noise-free one by %g", st, mode, d)
			}
		}
	}
}

func maxTrajectoryDiff(a, b [][][]float64) float64 {
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

// outbox records what a state machine does.
type outbox struct {
	sent     []Message
	spent    int
	warnings []string
}

func (o *outbox) Send(m *Message) {
	c := *m
	c.Values, c.Key, c.Partners = slices.Clone(m.Values), slices.Clone(m.Key), slices.Clone(m.Partners)
	o.sent = append(o.sent, c)
}
func (o *outbox) Spend(n int)              { o.spent += n }
func (o *outbox) Warn(message string)      { o.warnings = append(o.warnings, message) }
func (o *outbox) Report(string, []float64) {}

// testAgent returns the ATC state machine of agent p of the test network.
func testAgent(t *testing.T, cfg Config, p int) (*Agent, *Network) {
	t.Helper()
	A, sets, l := regressionNetwork(t, topology.Averaging)
	net, err := NewNetwork(A, cfg)
	if err != nil {
		t.Fatal(err)
	}
	a, err := NewAgent(net, p, sets[p], l, []float64{0.5, -0.25, 1}, SeedStreams(8))
	if err != nil {
		t.Fatal(err)
	}
	return a, net
}

// busiest returns the agent with the most senders.
func busiest(net *Network) int {
	best := 0
	for p := range net.Agents() {
		if len(net.senders[p]) > len(net.senders[best]) {
			best = p
		}
	}
	return best
}

// Contributions are combined in ascending sender id, the self term at its own
// position, whatever the order of arrival: feeding the same shares in
// ascending and in descending order gives the model computed by summing the
// column in ascending order, bit for bit. The first sender's share is 2⁵³
// times the others', so that floating-point addition is visibly not
// associative: summing in descending order gives a different result, which
// the test checks first so that it has teeth.
func TestCombinationIgnoresArrivalOrder(t *testing.T) {
	cfg := Config{Strategy: ATC, StepSize: 0.1}
	_, net := testAgent(t, cfg, 0)
	p := busiest(net)
	senders := net.Senders(p)
	values := make([][]float64, len(senders))
	for s, m := range senders {
		scale := 1.0
		if s == 0 {
			scale = 0x1p53
		}
		values[s] = []float64{scale / net.Weight(m, p), 1, -1}
	}
	a, _ := testAgent(t, cfg, p)
	self := slices.Clone(a.Model()) // ATC: ψ_p = w_p − μ∇J_p(w_p), the self term
	grad := make([]float64, len(self))
	a.loss.FullGrad(grad, self, a.set)
	floats.AddScaled(self, -cfg.StepSize, grad)
	sum := func(order []int) []float64 {
		z := make([]float64, len(self))
		for _, m := range order {
			if m == p {
				floats.AddScaled(z, net.Weight(p, p), self)
			} else {
				s, _ := slices.BinarySearch(senders, m)
				floats.AddScaled(z, net.Weight(m, p), values[s])
			}
		}
		return z
	}
	column := append(slices.Clone(senders), p)
	slices.Sort(column)
	want := sum(column)
	slices.Reverse(column)
	if slices.Equal(want, sum(column)) {
		t.Fatal("the test values sum identically in both orders")
	}
	for _, descending := range []bool{false, true} {
		a, _ := testAgent(t, cfg, p)
		box := &outbox{}
		if done, err := a.Begin(1, box); err != nil || done {
			t.Fatalf("Begin: done %v, error %v", done, err)
		}
		idx := make([]int, len(senders))
		for i := range idx {
			idx[i] = i
		}
		if descending {
			slices.Reverse(idx)
		}
		for n, s := range idx {
			done, err := a.Step(1, &Message{Kind: Share, Peer: senders[s], Stage: Stage2, Values: values[s]}, box)
			if err != nil || done != (n == len(idx)-1) {
				t.Fatalf("share %d: done %v, error %v", n, done, err)
			}
		}
		if !slices.Equal(a.Model(), want) {
			t.Errorf("arrival in descending order %v: model %v, ascending-order sum %v", descending, a.Model(), want)
		}
	}
}

// A state machine refuses messages that break the protocol, with an error.
func TestAgentRejectsProtocolErrors(t *testing.T) {
	cfg := Config{Strategy: ATC, StepSize: 0.1}
	_, net := testAgent(t, cfg, 0)
	p := busiest(net)
	sender := net.Senders(p)[0]
	stranger := -1
	for m := range net.Agents() {
		if m != p && !slices.Contains(net.Senders(p), m) {
			stranger = m
		}
	}
	share := func(peer, stage int, v []float64) *Message {
		return &Message{Kind: Share, Peer: peer, Stage: stage, Values: v}
	}
	ok := []float64{1, 2, 3}
	cases := []struct {
		name  string
		iter  int
		msgs  []*Message
		wants string
	}{
		{"wrong iteration", 2, []*Message{share(sender, Stage2, ok)}, "iteration 2"},
		{"silent stage", 1, []*Message{share(sender, Stage0, ok)}, "does not communicate"},
		{"stranger", 1, []*Message{share(stranger, Stage2, ok)}, "does not listen"},
		{"duplicate", 1, []*Message{share(sender, Stage2, ok), share(sender, Stage2, ok)}, "second share"},
		{"dimension", 1, []*Message{share(sender, Stage2, ok[:2])}, "dimension 2"},
		{"key without LGH", 1, []*Message{{Kind: PublicKey, Peer: sender, Key: make([]byte, 32)}}, "no key protocol"},
	}
	for _, c := range cases {
		a, _ := testAgent(t, cfg, p)
		var err error
		for _, m := range c.msgs {
			if _, err = a.Step(c.iter, m, &outbox{}); err != nil {
				break
			}
		}
		if err == nil || !strings.Contains(err.Error(), c.wants) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.wants)
		}
	}
	a, _ := testAgent(t, cfg, p)
	if _, err := a.Begin(2, &outbox{}); err == nil {
		t.Error("Begin(2) before iteration 1 was accepted")
	}
}

// Role announcements are checked before they are used.
func TestAgentRejectsBadRoles(t *testing.T) {
	cfg := Config{Strategy: ATC, StepSize: 0.1, Privacy: Privacy{Scheme: LocalGraphHomomorphic, Std: 0.1}}
	_, net := testAgent(t, cfg, 0)
	p := busiest(net)
	k := net.Receivers(p)[0]
	other := net.Senders(k)[0]
	if other == p {
		other = net.Senders(k)[1]
	}
	cases := []struct {
		name  string
		m     Message
		wants string
	}{
		{"invalid role", Message{Role: 5, Weight: 0.5, Partners: []int{other}}, "invalid role"},
		{"no weight", Message{Role: pairmask.Plus, Partners: []int{other}}, "weight"},
		{"weight above one", Message{Role: pairmask.Plus, Weight: 2, Partners: []int{other}}, "weight"},
		{"no partners", Message{Role: pairmask.Minus, Weight: 0.5}, "partners"},
		{"self partner", Message{Role: pairmask.Minus, Weight: 0.5, Partners: []int{p}}, "invalid partner"},
		{"unmasked with partners", Message{Weight: 0.5, Partners: []int{other}}, "lists partners"},
	}
	for _, c := range cases {
		a, _ := testAgent(t, cfg, p)
		c.m.Kind, c.m.Peer = Role, k
		if _, err := a.Step(1, &c.m, &outbox{}); err == nil || !strings.Contains(err.Error(), c.wants) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.wants)
		}
	}
	a, _ := testAgent(t, cfg, p)
	role := &Message{Kind: Role, Peer: k, Role: pairmask.Plus, Weight: 0.5, Partners: []int{other}}
	box := &outbox{}
	if _, err := a.Step(1, role, box); err != nil {
		t.Fatal(err)
	}
	if len(box.sent) != 1 || box.sent[0].Kind != PublicKey || box.sent[0].Peer != k || len(box.sent[0].Key) != 32 {
		t.Fatalf("after a role announcement the sender sent %+v, want its 32-byte public key to agent %d", box.sent, k)
	}
	if _, err := a.Step(1, role, box); err == nil {
		t.Error("a second role announcement was accepted")
	}
	bad := &Message{Kind: RelayedKey, Peer: k, Other: other, Key: make([]byte, 32)} // all-zero key: low order
	if _, err := a.Step(1, bad, box); err == nil {
		t.Error("a low-order relayed public key was accepted")
	}
}

func TestConfigValidate(t *testing.T) {
	lgh := Privacy{Scheme: LocalGraphHomomorphic, Std: 0.1}
	cases := []struct {
		name  string
		cfg   Config
		wants string
	}{
		{"step", Config{Strategy: ATC}, "step size"},
		{"infinite step", Config{Strategy: ATC, StepSize: math.Inf(1)}, "step size"},
		{"strategy", Config{Strategy: 7, StepSize: 0.1}, "strategy"},
		{"stages", Config{Strategy: ATC, Stages: [3]bool{true}, StepSize: 0.1}, "stages only apply"},
		{"batch", Config{Strategy: ATC, StepSize: 0.1, Gradient: Batch}, "batch size 0"},
		{"batch for full", Config{Strategy: ATC, StepSize: 0.1, Batch: 3}, "only applies"},
		{"oracle", Config{Strategy: ATC, StepSize: 0.1, Gradient: 9}, "gradient oracle"},
		{"no std", Config{Strategy: ATC, StepSize: 0.1, Privacy: Privacy{Scheme: Random}}, "standard deviation"},
		{"std without scheme", Config{Strategy: ATC, StepSize: 0.1, Privacy: Privacy{Std: 1}}, "without a privacy scheme"},
		{"self noise", Config{Strategy: ATC, StepSize: 0.1, Privacy: Privacy{Scheme: GraphHomomorphic, Std: 1, SelfNoise: true}}, "self noise"},
		{"form", Config{Strategy: ATC, StepSize: 0.1, Privacy: Privacy{Scheme: Random, Std: 1, Form: homomorphic.Ratio}}, "form"},
		{"keys", Config{Strategy: ATC, StepSize: 0.1, Privacy: Privacy{Scheme: Random, Std: 1, Keys: pairmask.Oracle}}, "keys and roles"},
		{"gaussian masks", Config{Strategy: ATC, StepSize: 0.1, Privacy: Privacy{Scheme: LocalGraphHomomorphic, Std: 1, Mechanism: noise.Gaussian}}, "Laplace"},
	}
	for _, c := range cases {
		if err := c.cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.wants) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.wants)
		}
	}
	for _, cfg := range []Config{
		{Strategy: General, Stages: [3]bool{true, false, true}, StepSize: 0.1, Gradient: Batch, Batch: 4, Privacy: lgh},
		{Strategy: Consensus, StepSize: 0.4, Gradient: Sample, Privacy: Privacy{Scheme: Random, Std: 0.1, SelfNoise: true, Mechanism: noise.Gaussian}},
	} {
		if err := cfg.Validate(); err != nil {
			t.Errorf("%+v: %v", cfg, err)
		}
	}
}

func TestNamesRoundTrip(t *testing.T) {
	for s := Consensus; s <= General; s++ {
		if got, err := ParseStrategy(s.String()); err != nil || got != s {
			t.Errorf("strategy %v: %v, %v", s, got, err)
		}
	}
	for g := Full; g <= Batch; g++ {
		if got, err := ParseGradient(g.String()); err != nil || got != g {
			t.Errorf("gradient %v: %v, %v", g, got, err)
		}
	}
	for s := None; s <= LocalGraphHomomorphic; s++ {
		if got, err := ParseScheme(s.String()); err != nil || got != s {
			t.Errorf("scheme %v: %v, %v", s, got, err)
		}
	}
	for name, want := range map[string]int{"a0": Stage0, "a1": Stage1, "a2": Stage2} {
		if got, err := ParseStage(name); err != nil || got != want {
			t.Errorf("stage %s: %v, %v", name, got, err)
		}
	}
	for _, bad := range []func() error{
		func() error { _, err := ParseStrategy("diffusion"); return err },
		func() error { _, err := ParseGradient("minibatch"); return err },
		func() error { _, err := ParseScheme("lgh"); return err },
		func() error { _, err := ParseStage("a3"); return err },
	} {
		if bad() == nil {
			t.Error("an unknown name was accepted")
		}
	}
}

// A receiver with a single neighbour cannot mask: its incoming edges are
// listed, in order, and only for LGH. The set-up bound follows the paper's
// formula on this star-like graph.
func TestUnmaskedEdgesAndSetupBound(t *testing.T) {
	g, err := topology.NewGraph(5, [][2]int{{0, 1}, {1, 2}, {2, 3}, {3, 0}, {3, 4}})
	if err != nil {
		t.Fatal(err)
	}
	A := topology.Metropolis(g)
	for _, sc := range []Scheme{Random, LocalGraphHomomorphic} {
		net, err := NewNetwork(A, Config{Strategy: ATC, StepSize: 0.1, Privacy: Privacy{Scheme: sc, Std: 0.1}})
		if err != nil {
			t.Fatal(err)
		}
		want := []Edge(nil)
		if sc == LocalGraphHomomorphic {
			want = []Edge{{From: 3, To: 4}}
		}
		if got := net.Unmasked(); !slices.Equal(got, want) {
			t.Errorf("%v: unmasked edges %v, want %v", sc, got, want)
		}
	}
	net, _ := NewNetwork(A, Config{Strategy: ATC, StepSize: 0.1})
	// Agent 3 listens to 0, 2, 4 (|N_3| = 3); they have 2, 2, 1 neighbours.
	if got, want := net.SetupBound(3), 3+(2+2+1)/2.0; got != want {
		t.Errorf("set-up bound of agent 3: %v, want %v", got, want)
	}
}

func TestNetworkRefusesBadMatrices(t *testing.T) {
	cfg := Config{Strategy: ATC, StepSize: 0.1}
	for name, A := range map[string]*mat.Dense{
		"not stochastic": mat.NewDense(2, 2, []float64{0.5, 0.5, 0.6, 0.5}),
		"not square":     mat.NewDense(2, 3, nil),
		"disconnected":   mat.NewDense(2, 2, []float64{1, 0, 0, 1}),
	} {
		if _, err := NewNetwork(A, cfg); err == nil {
			t.Errorf("%s matrix accepted", name)
		}
	}
	var nilDense *mat.Dense
	for _, A := range []mat.Matrix{nil, nilDense} {
		if _, err := NewNetwork(A, cfg); err == nil {
			t.Error("a missing matrix was accepted")
		}
	}
	gh := Config{Strategy: ATC, StepSize: 0.1, Privacy: Privacy{Scheme: GraphHomomorphic, Std: 0.1}}
	noSelf := mat.NewDense(3, 3, []float64{0, 0.5, 0.5, 0.5, 0, 0.5, 0.5, 0.5, 0})
	if _, err := NewNetwork(noSelf, gh); err == nil {
		t.Error("GH accepted a matrix without self-weights")
	}
}

func TestMeasure(t *testing.T) {
	q := []float64{0.25, 0.75}
	W := [][]float64{{1, 0}, {-1, 2}}
	var m Metrics
	wc := make([]float64, 2)
	Measure(&m, wc, q, W, []float64{0, 1}, loss.Loss{Kind: loss.Logistic}, nil)
	// w_c = (0.25 − 0.75, 1.5) = (−0.5, 1.5); ‖w_c − w^o‖² = 0.25 + 0.25.
	if !slices.Equal(wc, []float64{-0.5, 1.5}) || m.CentroidMSD != 0.5 {
		t.Errorf("centroid %v, MSD %v; want [-0.5 1.5], 0.5", wc, m.CentroidMSD)
	}
	// ‖w_0 − w^o‖² = 2, ‖w_1 − w^o‖² = 2; ‖w_0 − w_c‖² = 4.5, ‖w_1 − w_c‖² = 0.5.
	if m.AverageMSD != 2 || m.Disagreement != 2.5 {
		t.Errorf("average MSD %v, disagreement %v; want 2, 2.5", m.AverageMSD, m.Disagreement)
	}
	if !math.IsNaN(m.CentroidTestError) || !math.IsNaN(m.AverageTestError) {
		t.Error("test errors without a test set should be NaN")
	}
	// Test samples x = (1, 0) labelled +1 and x = (0, 1) labelled −1: w_c
	// gets both wrong, w_0 the second (a zero score is an error), w_1 both.
	test := &data.Set{Dim: 2, X: []float64{1, 0, 0, 1}, Y: []float64{1, -1}}
	Measure(&m, wc, q, W, []float64{0, 1}, loss.Loss{Kind: loss.Logistic}, test)
	if m.CentroidTestError != 1 || m.AverageTestError != 0.75 {
		t.Errorf("test errors: centroid %v, average %v; want 1, 0.75", m.CentroidTestError, m.AverageTestError)
	}
}

// Shared reports the noise-free value of the communicating stage: without
// privacy exactly the payload of every share the agent sends, with random
// perturbations the payload minus its noise (so not equal to it).
func TestSharedIsTheNoiseFreeValue(t *testing.T) {
	for _, scheme := range []Scheme{None, Random} {
		cfg := Config{Strategy: ATC, StepSize: 0.1, Privacy: Privacy{Scheme: scheme}}
		if scheme != None {
			cfg.Privacy.Std = 0.1
		}
		a, _ := testAgent(t, cfg, 0)
		if a.Shared(Stage0) != nil || a.Shared(Stage1) != nil {
			t.Errorf("%v: ATC shares only in stage 2", scheme)
		}
		box := &outbox{}
		if _, err := a.Begin(1, box); err != nil {
			t.Fatal(err)
		}
		// ATC's share is ψ = w − μ∇J(w), computed before any message.
		psi := slices.Clone(a.Model())
		grad := make([]float64, len(psi))
		a.loss.FullGrad(grad, psi, a.set)
		floats.AddScaled(psi, -cfg.StepSize, grad)
		if !slices.Equal(a.Shared(Stage2), psi) || len(box.sent) == 0 {
			t.Fatalf("%v: Shared(2) = %v, want ψ = %v", scheme, a.Shared(Stage2), psi)
		}
		for _, m := range box.sent {
			if equal := slices.Equal(m.Values, psi); equal != (scheme == None) {
				t.Errorf("%v: share to %d carries %v, ψ = %v", scheme, m.Peer, m.Values, psi)
			}
		}
	}
}
