package fedavg

import (
	"crypto/ecdh"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"maple/actors"
	"maple/actors/msg"
	"maple/actors/trace"
	"maple/algorithms/data"
	"maple/algorithms/fedavg"
	"maple/algorithms/loss"
	"maple/algorithms/rng"
	"maple/privacy/fixedpoint"
	"maple/privacy/secagg"
	"maple/privacy/shamir"
)

// tracedSecAgg runs cfg for rounds rounds with the payload traced and
// returns the records; agents dropped (by agent index) vanish before their
// masked input in every round, so that the survivors send shares of their
// mask keys.
func tracedSecAgg(t *testing.T, cfg fedavg.Config, rounds int, seed uint64, dropped ...int) []trace.Record {
	t.Helper()
	sets, l := regression(t, cfg.Agents)
	var records []trace.Record
	r := actors.NewRun(actors.Options{RunSeed: seed, Timing: actors.Timing{Latency: 0.01},
		Trace: actors.TraceOptions{Sink: func(rec *trace.Record) error { records = append(records, rec.Clone()); return nil }, Payload: true}})
	defer r.Close()
	sched, err := Spawn(r, Setup{Config: &cfg, Data: data.Sets(sets), Loss: l, W0: make([]float64, 3), Rounds: rounds, Server: "mean",
		Agent: dropping(&cfg, secagg.MaskedInputCollection, dropped...)})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Execute(sched, &msg.Start{}); err != nil {
		t.Fatal(err)
	}
	return records
}

// fields returns the list of maps a record's field holds.
func fieldList(rec *trace.Record, name string) []map[string]any {
	var out []map[string]any
	l, _ := rec.Fields[name].([]any)
	for _, x := range l {
		out = append(out, x.(map[string]any))
	}
	return out
}

// secret is one piece of key material and how it could appear in a trace.
type secret struct {
	what  string
	bytes []byte
	limbs []uint64 // a share's field elements, which a trace would list as numbers
}

// keyMaterial re-derives, independently of the machines, every secret of
// every client in every round from its "secagg" stream, in the order a
// client draws: its cipher and mask private keys (32 bytes each) when it
// advertises, its self-mask seed (32 bytes) and its Shamir shares of the
// mask key and of the seed among the holders of its key list when it
// shares its keys; and the X25519 agreements with every peer's public
// keys and with the server's channel key, and the server's channel key of
// every round. The public keys the records carry must be those of the
// re-derived private keys — which checks that the replay found the keys
// actually used, round after round (a miscounted draw would move every
// later key).
func keyMaterial(t *testing.T, cfg fedavg.Config, records []trace.Record, seed uint64) []secret {
	t.Helper()
	var out []secret
	streams := map[string]*rand.Rand{}
	stream := func(name string) *rand.Rand {
		if streams[name] == nil {
			streams[name] = rng.New(seed, name, fedavg.StreamSecAgg)
		}
		return streams[name]
	}
	draw := func(r *rand.Rand) []byte {
		b := make([]byte, 32)
		for i := 0; i < 32; i += 8 {
			binary.LittleEndian.PutUint64(b[i:], r.Uint64())
		}
		return b
	}
	private := func(b []byte) *ecdh.PrivateKey {
		k, err := ecdh.X25519().NewPrivateKey(b)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	agree := func(k *ecdh.PrivateKey, pub string) []byte {
		raw, _ := hex.DecodeString(pub)
		p, err := ecdh.X25519().NewPublicKey(raw)
		if err != nil {
			t.Fatal(err)
		}
		s, err := k.ECDH(p)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	type client struct{ c, s *ecdh.PrivateKey }
	keys := map[string]client{} // by agent, this round's
	server := rng.New(seed, fedavg.ServerName, fedavg.StreamSecAggChannel)
	var serverKey *ecdh.PrivateKey
	for i := range records {
		rec := &records[i]
		switch rec.Type {
		case "Tick":
			serverKey = private(draw(server))
			out = append(out, secret{what: "server channel key", bytes: serverKey.Bytes()})
		case "SecAggAdvertiseKeys":
			r := stream(rec.From)
			k := client{private(draw(r)), private(draw(r))}
			if hex.EncodeToString(k.c.PublicKey().Bytes()) != rec.Fields["cipher_key"] || hex.EncodeToString(k.s.PublicKey().Bytes()) != rec.Fields["mask_key"] {
				t.Fatalf("round %d: %s advertised keys the replay does not find", rec.Round, rec.From)
			}
			keys[rec.From] = k
			out = append(out, secret{what: rec.From + " cipher key", bytes: k.c.Bytes()}, secret{what: rec.From + " mask key", bytes: k.s.Bytes()})
		case "SecAggKeyList":
			if hex.EncodeToString(serverKey.PublicKey().Bytes()) != rec.Fields["server_key"] {
				t.Fatalf("round %d: the server's key is not the replay's", rec.Round)
			}
			k := keys[rec.To]
			out = append(out, secret{what: rec.To + " channel agreement", bytes: agree(k.c, rec.Fields["server_key"].(string))})
			var xs []uint64
			for _, p := range fieldList(rec, "keys") {
				id, _ := p["id"].(int32) // absent for client 0
				xs = append(xs, uint64(id)+1)
				out = append(out, secret{what: rec.To + " box agreement", bytes: agree(k.c, p["cipher_key"].(string))},
					secret{what: rec.To + " mask agreement", bytes: agree(k.s, p["mask_key"].(string))})
			}
			// The client answers this list (its SharedKeys follow in the
			// trace, the droppers included): it draws its seed and shares.
			r := stream(rec.To)
			b := draw(r)
			out = append(out, secret{what: rec.To + " self-mask seed", bytes: b})
			for _, s := range [][]byte{k.s.Bytes(), b} {
				shares, err := shamir.Split(s, cfg.SecAgg.Threshold, xs, r)
				if err != nil {
					t.Fatal(err)
				}
				for _, sh := range shares {
					raw := make([]byte, 0, 8*len(sh.Y))
					for _, y := range sh.Y {
						raw = binary.BigEndian.AppendUint64(raw, y)
					}
					out = append(out, secret{what: fmt.Sprintf("%s share at x = %d", rec.To, sh.X), bytes: raw, limbs: sh.Y})
				}
			}
		}
	}
	return out
}

// No secret leaves its actor: a traced run of SecAgg and of SecAgg+ with
// clients vanishing before their masked inputs (so that the survivors
// unmask with shares of their mask keys) shows the protocol — keys, sealed
// boxes, masked inputs, survivor lists, sealed unmasking shares — and no
// record, as JSON or as `maple trace` prints it, contains a private key,
// a self-mask seed, a Shamir share or an X25519 agreement of any client,
// or the server's channel key, in hexadecimal, base64 or, for a share, as
// the numbers of its field elements.
func TestTracedSecAggShowsNoSecret(t *testing.T) {
	for name, k := range map[string]int{"secagg": 5, "secagg+": 4} {
		t.Run(name, func(t *testing.T) {
			cfg := secAggConfig()
			cfg.SecAgg.Neighbours, cfg.SecAgg.Threshold, cfg.SecAgg.Timeout = k, 2, 1
			records := tracedSecAgg(t, cfg, 4, 13, 0, 5, 7)
			secrets := keyMaterial(t, cfg, records, 13)
			types := map[string]int{}
			for i := range records {
				rec := &records[i]
				types[rec.Type]++
				js, err := json.Marshal(rec)
				if err != nil {
					t.Fatal(err)
				}
				text := string(js) + trace.Format(rec)
				for _, s := range secrets {
					if strings.Contains(text, hex.EncodeToString(s.bytes)) || strings.Contains(text, base64.StdEncoding.EncodeToString(s.bytes)) {
						t.Fatalf("record %d (%s %s → %s) contains %s", rec.Seq, rec.Type, rec.From, rec.To, s.what)
					}
					for _, y := range s.limbs {
						if y > 1<<40 && strings.Contains(text, strconv.FormatUint(y, 10)) {
							t.Fatalf("record %d (%s %s → %s) lists a field element of %s", rec.Seq, rec.Type, rec.From, rec.To, s.what)
						}
					}
				}
			}
			for _, typ := range []string{"SecAggAdvertiseKeys", "SecAggKeyList", "SecAggSharedKeys", "SecAggForwardedKeys", "SecAggMaskedInput", "SecAggSurvivors", "SecAggUnmask"} {
				if types[typ] == 0 {
					t.Errorf("no %s in the trace (%v)", typ, types)
				}
			}
			if len(secrets) < 100 {
				t.Errorf("only %d secrets re-derived", len(secrets))
			}
		})
	}
}

// tap is an eavesdropper's behaviour: it keeps a copy of every message on
// the links it taps.
type tap struct{ got []proto.Message }

func (e *tap) Receive(_ *actors.Context, m proto.Message) error {
	e.got = append(e.got, m)
	return nil
}

// eavesdrop runs cfg (dimension-50 regression data) for rounds rounds with
// an eavesdropper on the links from agent victim to the server, and returns
// what it saw and the models the server sent the victim, in order.
func eavesdrop(t *testing.T, cfg fedavg.Config, rounds, victim int) (seen []proto.Message, sent [][]float64, set []float64) {
	t.Helper()
	sets, l := wideRegression(t, cfg.Agents)
	w0 := make([]float64, 50)
	r := actors.NewRun(actors.Options{RunSeed: 17})
	defer r.Close()
	// The eavesdropper is spawned first: the agents' lazy range comes last.
	e := &tap{}
	tapID := r.Spawn("eavesdropper", e)
	sched, err := Spawn(r, Setup{Config: &cfg, Data: data.Sets(sets), Loss: l, W0: w0, Rounds: rounds, Server: "mean"})
	if err != nil {
		t.Fatal(err)
	}
	victimName := fedavg.AgentName(victim)
	r.Wiretap(tapID, func(from, to actors.ID) bool {
		return r.Name(from) == victimName && r.Name(to) == fedavg.ServerName || r.Name(from) == fedavg.ServerName && r.Name(to) == victimName
	})
	if err := r.Execute(sched, &msg.Start{}); err != nil {
		t.Fatal(err)
	}
	for _, m := range e.got {
		if g, ok := m.(*msg.GlobalModel); ok {
			sent = append(sent, g.GetWeights())
		}
	}
	return e.got, sent, nil
}

// wideRegression is regression data of dimension 50, for statistics over
// the coordinates of one message.
func wideRegression(t *testing.T, agents int) ([]*data.Set, loss.Loss) {
	t.Helper()
	sets, _ := data.Regression(data.RegressionConfig{Agents: agents, SamplesMin: 20, SamplesMax: 30, Dim: 50, CovScale: 1, NoiseVarMin: 0.1, NoiseVarMax: 1}, 99)
	return sets, loss.Loss{Kind: loss.LeastSquares, Rho: 0.001}
}

// victimReplies replays the victim's training on the models it was sent:
// its replies, in order, as it computed them.
func victimReplies(t *testing.T, cfg fedavg.Config, victim int, sent [][]float64) [][]float64 {
	t.Helper()
	sets, l := wideRegression(t, cfg.Agents)
	name := fedavg.AgentName(victim)
	a := fedavg.NewAgent(&cfg, sets[victim], l, fedavg.AgentStreams(&cfg, func(p string) *rand.Rand { return rng.New(17, name, p) }))
	var out [][]float64
	for _, w := range sent {
		reply := make([]float64, len(w))
		a.Respond(reply, w)
		out = append(out, reply)
	}
	return out
}

// The eavesdropper at the server. Without secure aggregation it reads the
// victim's every reply exactly: each LocalModel it copies is the model the
// victim trained, bit for bit. With SecAgg the masked inputs it copies are
// statistically independent of the inputs: over the victim's 50·R masked
// coordinates (R rounds), the top 4 bits of the 32-bit words are uniform
// (χ² with 15 degrees of freedom below 37.7, its 99.9% quantile), their
// correlation with the encoded inputs is below 4/√(50R) (four standard
// deviations of the correlation of independent samples), and decoding them
// as if they were inputs misses the reply by more than half what a uniform
// draw over the encoding's range does.
func TestEavesdropperRecoversRepliesOnlyWithoutSecAgg(t *testing.T) {
	const rounds, victim = 40, 3
	cfg := secAggConfig()
	cfg.SecAgg = nil
	seen, sent, _ := eavesdrop(t, cfg, rounds, victim)
	want := victimReplies(t, cfg, victim, sent)
	var replies [][]float64
	for _, m := range seen {
		if lm, ok := m.(*msg.LocalModel); ok {
			replies = append(replies, lm.GetWeights())
		}
	}
	if len(replies) < 10 || !slices.EqualFunc(replies, want, slices.Equal) {
		t.Fatalf("without secure aggregation the eavesdropper saw %d replies, not the victim's %d exactly", len(replies), len(want))
	}

	cfg = secAggConfig()
	seen, sent, _ = eavesdrop(t, cfg, rounds, victim)
	want = victimReplies(t, cfg, victim, sent)
	scfg, err := cfg.SecAggRound(1, cfg.Draws(), 50)
	if err != nil {
		t.Fatal(err)
	}
	var masked, inputs []float64
	var bins [16]int
	round := 0
	for _, m := range seen {
		mi, ok := m.(*msg.SecAggMaskedInput)
		if !ok {
			continue
		}
		y := make([]uint64, mi.GetDim())
		if err := fixedpoint.Unpack(y, mi.GetMasked(), int(mi.GetBits())); err != nil {
			t.Fatal(err)
		}
		x := make([]uint64, len(y))
		if _, err := scfg.Encoder.Encode(x, want[round]); err != nil {
			t.Fatal(err)
		}
		decoded := make([]float64, len(y))
		scfg.Encoder.Decode(decoded, y)
		// A uniform vector over the encoding's range [−nc, nc]^d lies
		// √(d/3)·nc from any fixed point on average (98 here), the reply's
		// norm being about 7.
		uniform := math.Sqrt(float64(len(y))/3) * float64(cfg.Draws()) * cfg.SecAgg.Clip
		if miss := distance(decoded, want[round]); !(miss > uniform/2) {
			t.Errorf("round %d: decoding the masked input misses the reply by %v, a uniform draw by %v", round, miss, uniform)
		}
		for j := range y {
			bins[y[j]>>28]++
			masked = append(masked, float64(y[j]))
			inputs = append(inputs, float64(scfg.Encoder.Signed(x[j])))
		}
		round++
	}
	n := len(masked)
	if round < 10 || round != len(want) {
		t.Fatalf("%d masked inputs for %d replies", round, len(want))
	}
	var chi2 float64
	for _, c := range bins {
		e := float64(n) / 16
		chi2 += (float64(c) - e) * (float64(c) - e) / e
	}
	if chi2 > 37.7 {
		t.Errorf("χ² of the masked words' top 4 bits: %v over %d words, above 37.7", chi2, n)
	}
	if rho := correlation(masked, inputs); math.Abs(rho) > 4/math.Sqrt(float64(n)) {
		t.Errorf("correlation of masked words and inputs %v over %d words, above %v", rho, n, 4/math.Sqrt(float64(n)))
	}
}

func distance(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += (a[i] - b[i]) * (a[i] - b[i])
	}
	return math.Sqrt(s)
}

// correlation returns Pearson's correlation of x and y.
func correlation(x, y []float64) float64 {
	n := float64(len(x))
	var mx, my float64
	for i := range x {
		mx += x[i] / n
		my += y[i] / n
	}
	var sxy, sxx, syy float64
	for i := range x {
		sxy += (x[i] - mx) * (y[i] - my)
		sxx += (x[i] - mx) * (x[i] - mx)
		syy += (y[i] - my) * (y[i] - my)
	}
	return sxy / math.Sqrt(sxx*syy)
}
