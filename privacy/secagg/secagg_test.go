package secagg

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"maple/privacy/fixedpoint"
	"maple/privacy/internal/stattest"
)

// streams returns reproducible per-party streams for a test seed.
func streams(seed uint64) func(int) *rand.Rand {
	return func(id int) *rand.Rand {
		var key [32]byte
		key[0], key[1], key[2] = byte(seed), byte(id+1), byte((id+1)>>8)
		return rand.New(rand.NewChaCha8(key))
	}
}

func config(t testing.TB, n, k, th, dim, bits int) Config {
	enc, err := fixedpoint.New(bits, 2, n)
	if err != nil {
		t.Fatal(err)
	}
	return Config{Clients: n, Neighbours: k, Threshold: th, Encoder: enc, Dim: dim, Round: 7}
}

func inputs(n, dim int, seed uint64) [][]float64 {
	r := rand.New(rand.NewPCG(seed, 99))
	x := make([][]float64, n)
	for u := range x {
		x[u] = make([]float64, dim)
		for i := range x[u] {
			x[u][i] = 5*r.Float64() - 2.5 // some beyond the clip of 2
		}
	}
	return x
}

// checkSum asserts that the result decodes to the plain sum of the included
// clients' quantized inputs, exactly.
func checkSum(t *testing.T, cfg Config, x [][]float64, res *Result, included []int) {
	t.Helper()
	if !slices.Equal(res.Included, included) {
		t.Fatalf("included %v, want %v", res.Included, included)
	}
	for i := range cfg.Dim {
		var want int64
		for _, u := range included {
			q, _ := cfg.Encoder.Quantize(x[u][i])
			want += q
		}
		if got := cfg.Encoder.Signed(res.Sum[i]); got != want {
			t.Fatalf("coordinate %d: sum %d, want %d", i, got, want)
		}
	}
}

func all(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

func without(s []int, drop ...int) []int {
	return slices.DeleteFunc(slices.Clone(s), func(u int) bool { return slices.Contains(drop, u) })
}

// Without dropouts the decoded aggregate equals the plain sum of the
// quantized inputs bit for bit, for SecAgg and SecAgg+.
func TestAggregateIsTheQuantizedSum(t *testing.T) {
	for _, tc := range []struct{ n, k, th, bits int }{
		{8, 7, 5, 24}, {5, 4, 2, 64}, {12, 4, 3, 16}, {11, 5, 4, 20},
	} {
		cfg := config(t, tc.n, tc.k, tc.th, 13, tc.bits)
		x := inputs(tc.n, cfg.Dim, uint64(tc.n))
		res, _, _, err := Reference(cfg, x, nil, streams(1))
		if err != nil {
			t.Fatalf("%+v: %v", tc, err)
		}
		checkSum(t, cfg, x, res, all(tc.n))
	}
}

// Dropouts in every phase, as long as at least t survive each: the result
// is the sum over U₃, the clients that sent their masked input.
func TestDropoutsInEveryPhaseAreRecovered(t *testing.T) {
	n := 10
	for _, kt := range [][2]int{{n - 1, 6}, {6, 4}} {
		k := kt[0]
		cfg := config(t, n, k, kt[1], 9, 32)
		x := inputs(n, cfg.Dim, 3)
		for _, p := range Phases() {
			dropped := []int{2, 7}
			drop := func(q Phase, u int) bool { return q == p && slices.Contains(dropped, u) }
			res, _, surv, err := Reference(cfg, x, drop, streams(2))
			if err != nil {
				t.Fatalf("k=%d, drop in %v: %v", k, p, err)
			}
			included := all(n)
			if p != Unmasking { // dropping while unmasking leaves the input in
				included = without(included, dropped...)
			}
			checkSum(t, cfg, x, res, included)
			if got := surv[p]; !slices.Equal(got, without(all(n), dropped...)) {
				t.Errorf("k=%d: survivors of %v: %v", k, p, got)
			}
		}
		// Drops spread over all four PhaseCount at once.
		drop := func(q Phase, u int) bool { return u == int(q) }
		res, _, _, err := Reference(cfg, x, drop, streams(3))
		if err != nil {
			t.Fatalf("k=%d, one drop per phase: %v", k, err)
		}
		checkSum(t, cfg, x, res, without(all(n), 0, 1, 2))
	}
}

// Below the threshold the round fails with a *ThresholdError naming the
// phase and the survivors; no result is produced.
func TestBelowThresholdFailsNamingThePhase(t *testing.T) {
	n, th := 8, 6
	cfg := config(t, n, n-1, th, 4, 24)
	x := inputs(n, cfg.Dim, 4)
	for _, p := range Phases() {
		drop := func(q Phase, u int) bool { return q == p && u < 3 }
		res, _, _, err := Reference(cfg, x, drop, streams(4))
		var te *ThresholdError
		if !errors.As(err, &te) || res != nil {
			t.Fatalf("drop 3 of 8 in %v: result %v, error %v", p, res, err)
		}
		if te.Phase != p || te.Survivors != 5 || te.Threshold != th || te.Client != -1 {
			t.Errorf("drop in %v: %+v", p, te)
		}
		want := fmt.Sprintf("secagg: %v: 5 clients survived, threshold 6", p)
		if err.Error() != want {
			t.Errorf("message %q, want %q", err, want)
		}
	}
}

// SecAgg+: a client whose surviving holders fall below t stops the round
// with its id, even though most of the round survived.
func TestSecAggPlusNeedsEachClientsHolders(t *testing.T) {
	n, k, th := 12, 4, 4
	cfg := config(t, n, k, th, 3, 24)
	x := inputs(n, cfg.Dim, 5)
	server, _ := NewServer(cfg, streams(6)(Server))
	g := server.Graph()
	// Drop two of client 0's four neighbours: it keeps 3 holders (itself
	// included), one short of t = 4.
	nb := without(g.Holders(0), 0)[:2]
	drop := func(q Phase, u int) bool { return q == ShareKeys && slices.Contains(nb, u) }
	_, _, _, err := Reference(cfg, x, drop, streams(6))
	var te *ThresholdError
	if !errors.As(err, &te) || te.Phase != ShareKeys || te.Survivors != 3 || te.Client < 0 {
		t.Fatalf("error %v", err)
	}
	if !strings.Contains(err.Error(), "surviving share holders") {
		t.Errorf("message %q", err)
	}
}

// SecAgg+ with random dropouts of 10% per phase: whenever the round
// completes its sum is exact; whenever it fails, the error is a threshold
// error whose count is below t.
func TestSecAggPlusRandomDropouts(t *testing.T) {
	n, k, th := 40, 10, 6
	cfg := config(t, n, k, th, 5, 32)
	x := inputs(n, cfg.Dim, 7)
	completed := 0
	for trial := range 12 {
		r := rand.New(rand.NewPCG(uint64(trial), 8))
		draws := map[[2]int]bool{}
		drop := func(q Phase, u int) bool {
			key := [2]int{int(q), u}
			if _, ok := draws[key]; !ok {
				draws[key] = r.Float64() < 0.1
			}
			return draws[key]
		}
		res, _, surv, err := Reference(cfg, x, drop, streams(uint64(10+trial)))
		if err != nil {
			var te *ThresholdError
			if !errors.As(err, &te) || te.Survivors >= th {
				t.Fatalf("trial %d: %v", trial, err)
			}
			continue
		}
		completed++
		checkSum(t, cfg, x, res, surv[MaskedInputCollection])
	}
	if completed == 0 {
		t.Error("no trial completed")
	}
}

// The traffic of a round without dropouts equals the closed form, per
// client and for the server, in every phase.
func TestCostsMatchTheClosedForm(t *testing.T) {
	for _, tc := range []struct{ n, k, th, dim, bits int }{
		{8, 7, 5, 100, 20}, {10, 4, 3, 33, 17}, {12, 5, 4, 10, 64},
	} {
		cfg := config(t, tc.n, tc.k, tc.th, tc.dim, tc.bits)
		_, costs, _, err := Reference(cfg, inputs(tc.n, tc.dim, 9), nil, streams(9))
		if err != nil {
			t.Fatal(err)
		}
		want := ExpectedCosts(cfg)
		for _, p := range Phases() {
			if got := costs.Server(p); got != want.Server[p] {
				t.Errorf("%+v %v: server %+v, want %+v", tc, p, got, want.Server[p])
			}
			for u := range tc.n {
				if got := costs.Client(p, u); got != want.Client[p] {
					t.Fatalf("%+v %v: client %d %+v, want %+v", tc, p, u, got, want.Client[p])
				}
			}
		}
	}
	// By hand for SecAgg, n = 3, m = 10, 8 bits: the masked input is 10
	// bytes, a box 2·40 + 16 = 96 bytes, a key list 3·68 = 204 bytes.
	cfg := config(t, 3, 2, 2, 10, 8)
	e := ExpectedCosts(cfg)
	if e.Client[AdvertiseKeys].Received.Bytes != 204 || e.Client[ShareKeys].Sent.Bytes != 200 ||
		e.Client[MaskedInputCollection].Sent.Bytes != 10 || e.Client[Unmasking].Sent.Bytes != 132 ||
		e.Server[ShareKeys].Received.Bytes != 600 {
		t.Errorf("closed form by hand: %+v", e)
	}
}

// Same seeds, same round: the results and every message are identical.
func TestRoundIsReproducible(t *testing.T) {
	cfg := config(t, 9, 4, 3, 6, 24)
	x := inputs(9, 6, 10)
	drop := func(q Phase, u int) bool { return q == MaskedInputCollection && u == 4 }
	a, ca, _, err := Reference(cfg, x, drop, streams(11))
	if err != nil {
		t.Fatal(err)
	}
	b, cb, _, _ := Reference(cfg, x, drop, streams(11))
	if !reflect.DeepEqual(a, b) || !reflect.DeepEqual(ca, cb) {
		t.Error("two runs with the same streams differ")
	}
}

// A masked input reveals nothing about its input: with every input zero,
// each client's masked coordinates are uniform on [0, 2^k). Pearson's χ²
// over 16 equal bins of 4096 coordinates has 15 degrees of freedom; 50 is
// beyond its 1 − 1e-5 quantile (≈ 44.3), so a correct masker fails with
// probability below 1e-5 per client (the streams are fixed, so the outcome
// is too).
func TestMaskedInputsLookUniform(t *testing.T) {
	n, dim, bits := 4, 4096, 20
	cfg := config(t, n, n-1, 3, dim, bits)
	x := make([][]float64, n)
	for u := range x {
		x[u] = make([]float64, dim)
	}
	server, _ := NewServer(cfg, streams(12)(Server))
	clients := make([]*Client, n)
	var msgs []Message
	for u := range clients {
		clients[u], _ = NewClient(cfg, u, x[u], streams(12)(u))
		out, err := server.Step(clients[u].Start())
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, out...)
	}
	for range 2 { // share keys, then masked input
		var next []Message
		for _, m := range msgs {
			reply, err := clients[m.Receiver()].Step(m)
			if err != nil {
				t.Fatal(err)
			}
			if mi, ok := reply.(*MaskedInputMsg); ok {
				var counts [16]float64
				for _, v := range mi.Masked {
					counts[v>>(bits-4)]++
				}
				chi := 0.0
				for _, c := range counts {
					e := float64(dim) / 16
					chi += (c - e) * (c - e) / e
				}
				if chi > 50 {
					t.Errorf("client %d: χ² = %.1f over 16 bins", mi.From, chi)
				}
				mean, _ := stattest.MeanVar(toFloat(mi.Masked))
				if mean == 0 {
					t.Errorf("client %d: masked input is all zero", mi.From)
				}
			}
			out, err := server.Step(reply)
			if err != nil {
				t.Fatal(err)
			}
			next = append(next, out...)
		}
		msgs = next
	}
}

func toFloat(v []uint64) []float64 {
	f := make([]float64, len(v))
	for i, x := range v {
		f[i] = float64(x)
	}
	return f
}

// A box altered on its way through the server fails authentication when
// the recipient opens it, naming the link.
func TestTamperedBoxIsRefused(t *testing.T) {
	cfg := config(t, 3, 2, 2, 2, 16)
	x := inputs(3, 2, 13)
	server, _ := NewServer(cfg, streams(13)(Server))
	clients := make([]*Client, 3)
	var msgs []Message
	for u := range clients {
		clients[u], _ = NewClient(cfg, u, x[u], streams(13)(u))
		out, _ := server.Step(clients[u].Start())
		msgs = append(msgs, out...)
	}
	for phase := 0; len(msgs) > 0; phase++ {
		var next []Message
		for _, m := range msgs {
			if f, ok := m.(*ForwardedKeysMsg); ok && f.To == 1 {
				f.Boxes[0].Sealed = slices.Clone(f.Boxes[0].Sealed)
				f.Boxes[0].Sealed[5] ^= 1
			}
			reply, err := clients[m.Receiver()].Step(m)
			if err != nil {
				if m.Receiver() == 1 && phase == 2 && strings.Contains(err.Error(), "box from client 0 to 1") {
					return
				}
				t.Fatalf("phase %d: %v", phase, err)
			}
			out, err := server.Step(reply)
			if err != nil {
				t.Fatal(err)
			}
			next = append(next, out...)
		}
		msgs = next
	}
	t.Fatal("the tampered box was accepted")
}

// A survivor reveals, for each holder, either its self-mask share or its
// mask-key share, never both (the server could otherwise unmask it).
func TestNoClientRevealsBothSecrets(t *testing.T) {
	n := 6
	cfg := config(t, n, n-1, 3, 2, 16)
	x := inputs(n, 2, 14)
	server, _ := NewServer(cfg, streams(14)(Server))
	clients := make([]*Client, n)
	var msgs []Message
	for u := range clients {
		clients[u], _ = NewClient(cfg, u, x[u], streams(14)(u))
		out, _ := server.Step(clients[u].Start())
		msgs = append(msgs, out...)
	}
	unmasks := 0
	for len(msgs) > 0 {
		var next []Message
		for _, m := range msgs {
			if m.Receiver() == 5 && m.Phase() == ShareKeys {
				continue // client 5 drops before masking its input
			}
			reply, err := clients[m.Receiver()].Step(m)
			if err != nil {
				t.Fatal(err)
			}
			if um, ok := reply.(*UnmaskMsg); ok {
				unmasks++
				seen := map[int]bool{}
				for _, s := range append(slices.Clone(um.SelfMask), um.MaskKey...) {
					if seen[s.Owner] {
						t.Errorf("client %d revealed both secrets of %d", um.From, s.Owner)
					}
					seen[s.Owner] = true
				}
				if len(um.MaskKey) != 1 || um.MaskKey[0].Owner != 5 {
					t.Errorf("client %d: mask-key shares %+v, want client 5's", um.From, um.MaskKey)
				}
			}
			out, err := server.Step(reply)
			if err != nil {
				t.Fatal(err)
			}
			next = append(next, out...)
		}
		if len(next) == 0 && server.Phase() < PhaseCount {
			out, err := server.Close()
			if err != nil {
				t.Fatal(err)
			}
			next = out
		}
		msgs = next
	}
	if unmasks != n-1 {
		t.Errorf("%d unmasking messages, want %d", unmasks, n-1)
	}
}

// Keys never reach a log: the state machines format as placeholders.
func TestStateFormatsAsPlaceholder(t *testing.T) {
	cfg := config(t, 3, 2, 2, 1, 8)
	c, _ := NewClient(cfg, 1, []float64{0.5}, streams(15)(1))
	s, _ := NewServer(cfg, streams(15)(Server))
	for _, v := range []string{fmt.Sprintf("%v %+v %#v %s", c, c, c, c), fmt.Sprintf("%v %+v", s, s), fmt.Sprintf("%+v %+v", *c, *s)} {
		if strings.Contains(v, "0x") || strings.Contains(v, "{") {
			t.Errorf("formatted state %q", v)
		}
	}
}

func TestConfigErrorsNameTheField(t *testing.T) {
	base := config(t, 10, 9, 5, 3, 16)
	for field, mutate := range map[string]func(*Config){
		"clients:":    func(c *Config) { c.Clients = 1 },
		"neighbours:": func(c *Config) { c.Neighbours = 10 },
		"threshold:":  func(c *Config) { c.Threshold = 11 },
		"bits:":       func(c *Config) { c.Encoder = fixedpoint.Encoder{} },
		"dim:":        func(c *Config) { c.Dim = 0 },
	} {
		c := base
		mutate(&c)
		if err := c.Validate(); err == nil || !strings.HasPrefix(err.Error(), field) {
			t.Errorf("%s: %v", field, err)
		}
	}
	small, _ := fixedpoint.New(16, 1, 5)
	c := base
	c.Encoder = small
	if err := c.Validate(); err == nil || !strings.HasPrefix(err.Error(), "bits:") {
		t.Errorf("encoder for 5 summands used for 10: %v", err)
	}
	c = config(t, 10, 4, 6, 3, 16)
	if err := c.Validate(); err == nil || !strings.HasPrefix(err.Error(), "threshold:") {
		t.Errorf("threshold above k + 1: %v", err)
	}
}
