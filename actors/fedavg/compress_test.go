package fedavg

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"maple/actors"
	"maple/actors/msg"
	"maple/actors/trace"
	"maple/algorithms/compress"
	"maple/algorithms/data"
	"maple/algorithms/fedavg"
	"maple/algorithms/fedavg/reference"
	"maple/algorithms/loss"
	"maple/algorithms/systems"
	"maple/internal/params"
)

// uplink is an observer of a run's models, times and reply sizes
// (fedavg.ObsUplink), and, as a trace sink, of the sizes of the replies
// the engine delivered.
type uplink struct {
	models [][]float64
	times  []float64
	sizes  []float64 // ObsUplink, in the order reported
	traced int       // bytes of the LocalModel and LocalUpdate records
}

func (u *uplink) observe(_ int, key string, v []float64) {
	switch key {
	case fedavg.ObsModel:
		u.models = append(u.models, slices.Clone(v))
	case fedavg.ObsTime:
		u.times = append(u.times, v[0])
	case fedavg.ObsUplink:
		u.sizes = append(u.sizes, v[0])
	}
}

func (u *uplink) Observe(_ actors.ID, round int, key string, v []float64) { u.observe(round, key, v) }

func (u *uplink) sink(rec *trace.Record) error {
	if (rec.Type == "LocalModel" || rec.Type == "LocalUpdate") && !rec.Lost {
		u.traced += rec.Size
	}
	return nil
}

// total returns the bytes of the replies reported.
func (u *uplink) total() int {
	n := 0
	for _, s := range u.sizes {
		n += int(s)
	}
	return n
}

// compressProblem is a least-squares problem of dimension dim for agents
// agents.
func compressProblem(agents, dim int) ([]*data.Set, loss.Loss) {
	sets, _ := data.Regression(data.RegressionConfig{
		Agents: agents, SamplesMin: 20, SamplesMax: 30, Dim: dim, CovScale: 1, NoiseVarMin: 0.1, NoiseVarMax: 1,
	}, 7)
	return sets, loss.Loss{Kind: loss.LeastSquares, Rho: 0.001}
}

// compressedRun runs cfg on the actor engine (traced) or on the event-driven
// reference, under model m, with the server behaviour server at its
// defaults.
func compressedRun(t *testing.T, cfg fedavg.Config, sets []*data.Set, l loss.Loss, m *systems.Model, server string, rounds int, onReference bool) (*uplink, error) {
	t.Helper()
	return compressedRunWith(t, cfg, sets, l, m, server, nil, rounds, onReference)
}

// compressedRunWith is compressedRun with the server's parameters p.
func compressedRunWith(t *testing.T, cfg fedavg.Config, sets []*data.Set, l loss.Loss, m *systems.Model, server string, p params.Values, rounds int, onReference bool) (*uplink, error) {
	t.Helper()
	const seed = 11
	u := &uplink{}
	w0 := make([]float64, l.Dim(sets[0].Dim))
	if onReference {
		if _, err := ConfigureServer(&cfg, server, p); err != nil {
			t.Fatal(err)
		}
		return u, reference.Simulate(cfg, data.Sets(sets), l, w0, seed, rounds, reference.SimOptions{Model: m, Observe: u.observe})
	}
	r := actors.NewRun(actors.Options{RunSeed: seed, Observer: u, Trace: actors.TraceOptions{Sink: u.sink},
		Timing: actors.Timing{Latency: m.Latency, Jitter: m.Jitter, Bandwidth: m.Bandwidth, Loss: m.Loss, Duplicate: m.Duplicate}})
	defer r.Close()
	sched, err := Spawn(r, Setup{Config: &cfg, Data: data.Sets(sets), Loss: l, W0: w0, Rounds: rounds, Server: server, ServerParams: p,
		Fleet: m.Fleet(seed, cfg.Agents, fedavg.AgentName)})
	if err != nil {
		return nil, err
	}
	return u, r.Execute(sched, &msg.Start{})
}

// The reply sizes every engine reports (fedavg.UplinkWireSize) and the
// reference charges to bandwidth are the protobuf library's, for dense
// replies and for those of every compressor (from their encoders, on
// vectors with entries of every magnitude, so that indices and values take
// every varint length), both reply messages, any slot, side vector and
// importance report.
func TestReplyWireSizesMatchProtobuf(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 9))
	for range 50 {
		dim := r.IntN(3000)
		slot := []int32{0, 1, 300, 1 << 20}[r.IntN(4)]
		side := make([]float64, []int{0, 1, 5}[r.IntN(3)])
		rep := fedavg.Report{}
		if r.IntN(2) == 0 {
			rep = fedavg.Report{GradNorm: r.Float64(), Sigma2: 0, Alpha: 3.5}
		}
		out := fedavg.Outcome{Report: rep, ToServer: side}
		reply := make([]float64, dim)
		want := fedavg.UplinkWireSize(slot, dim, nil, len(side), rep)
		for share, m := range map[fedavg.Share]proto.Message{
			fedavg.Models:  fillModel(new(msg.LocalModel), slot, reply, nil, out),
			fedavg.Updates: fillUpdate(new(msg.LocalUpdate), slot, reply, nil, out),
		} {
			if got := proto.Size(m); got != want {
				t.Errorf("dense, %v, dim %d, slot %d, side %d, report %+v: proto %d, UplinkWireSize %d", share, dim, slot, len(side), rep, got, want)
			}
		}
	}
	for _, name := range Compressors.Names() {
		spec, _ := params.Lookup(CompressSlot, name)
		for range 20 {
			comp, err := Compressors.New(name, randomValues(spec, r))
			if err != nil {
				t.Fatal(err)
			}
			dim := 1 + r.IntN(3000)
			enc := comp.NewEncoder(dim)
			if enc == nil {
				continue // none
			}
			u := make([]float64, dim)
			for j := range u {
				u[j] = r.NormFloat64() * math.Pow(10, float64(r.IntN(20)-10))
			}
			c := enc.Encode(u, func(string) *rand.Rand { return r })
			slot := []int32{0, 1, 300, 1 << 20}[r.IntN(4)]
			side := make([]float64, []int{0, 1, 5}[r.IntN(3)])
			rep := fedavg.Report{}
			if r.IntN(2) == 0 {
				rep = fedavg.Report{GradNorm: r.Float64(), Sigma2: 0, Alpha: 3.5}
			}
			want := fedavg.UplinkWireSize(slot, dim, &c, len(side), rep)
			out := fedavg.Outcome{Report: rep, ToServer: side}
			for share, m := range map[fedavg.Share]proto.Message{
				fedavg.Models:  fillModel(new(msg.LocalModel), slot, nil, &c, out),
				fedavg.Updates: fillUpdate(new(msg.LocalUpdate), slot, nil, &c, out),
			} {
				if got := proto.Size(m); got != want {
					t.Errorf("%s, %v, dim %d, slot %d, side %d, report %+v: proto %d, reference %d", name, share, dim, slot, len(side), rep, got, want)
				}
			}
		}
	}
}

// A run's replies really shrink: on the actor engine, whose trace counts
// each message's protobuf encoding, FedAvg with d = 1000 sends replies of
// 8 kB; top-k with k = d/100 sends 10 indices (2 bytes each below 16384,
// 1 below 128) and 10 values of 4 bytes, ≈ 1/130 of that; QSGD with s = 1
// 2 bits per coordinate and the norm, ≈ 1/32; signSGD 1 bit, ≈ 1/64. The
// sizes the agents report (fedavg.ObsUplink) are the traced ones, and the
// event-driven reference reports the same.
func TestCompressedRunsSendFewerBytes(t *testing.T) {
	const dim, rounds = 1000, 4
	sets, l := compressProblem(8, dim)
	cfg := fedavg.Config{Agents: 8, Participants: 4, StepSize: 0.01, Normalized: true,
		Epochs: fedavg.Range{Min: 1, Max: 2}, Batch: fedavg.Range{Min: 1, Max: 4}, Share: fedavg.Updates}
	m := &systems.Model{Latency: 0.01}
	bytes := map[string]int{}
	for _, c := range []struct {
		name, server string
		comp         compress.Compressor
		lo, hi       float64 // the factor dense/compressed expected
	}{
		{"none", "mean", nil, 1, 1},
		{"top-k", "mean", compress.TopK{K: dim / 100, Feedback: true}, 8000.0 / (10*4 + 10*2 + 6), 8000.0 / (10*4 + 10*1)},
		{"qsgd", "mean", compress.QSGD{Levels: 1}, 8000.0 / (250 + 15), 32},
		{"signsgd", "majority", compress.SignSGD{}, 8000.0 / (125 + 6), 64},
	} {
		cfg := cfg
		cfg.Compress = c.comp
		actor, err := compressedRun(t, cfg, sets, l, m, c.server, rounds, false)
		if err != nil {
			t.Fatal(err)
		}
		ref, err := compressedRun(t, cfg, sets, l, m, c.server, rounds, true)
		if err != nil {
			t.Fatal(err)
		}
		if actor.total() != actor.traced || !slices.Equal(actor.sizes, ref.sizes) || len(actor.sizes) != rounds*cfg.Participants {
			t.Fatalf("%s: reported %d bytes (%v), traced %d, reference %v", c.name, actor.total(), actor.sizes, actor.traced, ref.sizes)
		}
		for i := range ref.models {
			if !slices.Equal(actor.models[i], ref.models[i]) {
				t.Fatalf("%s: update %d differs between the engines", c.name, i+1)
			}
		}
		bytes[c.name] = actor.traced
		factor := float64(bytes["none"]) / float64(actor.traced)
		if factor < c.lo || factor > c.hi {
			t.Errorf("%s: %d bytes, dense %d: a factor %.1f, want [%.1f, %.1f]", c.name, actor.traced, bytes["none"], factor, c.lo, c.hi)
		}
	}
	t.Logf("reply bytes of %d rounds: %v", rounds, bytes)
}

// Compressed replies compose with the systems model: on a bandwidth-limited
// link a round ends when its last reply has crossed it, so that smaller
// replies end rounds earlier, by exactly the bytes saved over the
// bandwidth (fixed compute times, no jitter: every round waits for a reply
// of a slot above 0, whose size is the same for every agent). And the
// actor run and the event-driven reference agree, bit for bit, under every
// fault of the model.
func TestCompressedRepliesComposeWithTheSystemsModel(t *testing.T) {
	const dim, rounds, bandwidth = 200, 6, 1e4
	sets, l := compressProblem(8, dim)
	cfg := fedavg.Config{Agents: 8, Participants: 4, StepSize: 0.01, Normalized: true,
		Epochs: fedavg.Range{Min: 2, Max: 2}, Batch: fedavg.Range{Min: 3, Max: 3}}
	m := &systems.Model{Latency: 0.05, Bandwidth: bandwidth, Compute: systems.Compute{Kind: systems.Fixed, Value: 0.1}}
	dense, err := compressedRun(t, cfg, sets, l, m, "mean", rounds, false)
	if err != nil {
		t.Fatal(err)
	}
	signs := cfg
	signs.Compress = compress.SignSGD{}
	got, err := compressedRun(t, signs, sets, l, m, "majority", rounds, false)
	if err != nil {
		t.Fatal(err)
	}
	saved := float64(fedavg.ReplyWireSize(1, dim)-fedavg.CompressedReplyWireSize(1, &compress.Compressed{Packed: make([]byte, dim/8)}, 0)) / bandwidth
	for i := range rounds {
		if d := dense.times[i] - got.times[i]; math.Abs(d-float64(i+1)*saved) > 1e-9 {
			t.Errorf("round %d ends at %v with signSGD, %v dense: %v earlier, want %v", i+1, got.times[i], dense.times[i], d, float64(i+1)*saved)
		}
	}

	h := hostile()
	for _, c := range []struct {
		server string
		comp   compress.Compressor
		share  fedavg.Share
	}{
		{"mean", compress.TopK{K: 7, Feedback: true}, fedavg.Models},
		{"median", compress.QSGD{Levels: 3}, fedavg.Updates},
		{"majority", compress.SignSGD{}, fedavg.Models},
		{"fedasync", compress.TopK{K: 20, Feedback: true}, fedavg.Models},
		{"fedbuff", compress.QSGD{Levels: 2}, fedavg.Updates},
		{"fedasync", compress.QSGD{Levels: 2}, fedavg.Models},
	} {
		cfg := cfg
		cfg.Compress, cfg.Share = c.comp, c.share
		cfg.Collect = fedavg.Deadline{Seconds: 1.5, Reweighted: true}
		p := params.Values(nil)
		if c.server == "fedbuff" {
			p = params.Values{"buffer": 2}
		}
		if strings.HasPrefix(c.server, "fed") {
			cfg.Collect = nil
		}
		actor, aerr := compressedRunWith(t, cfg, sets, l, h, c.server, p, rounds, false)
		ref, rerr := compressedRunWith(t, cfg, sets, l, h, c.server, p, rounds, true)
		if aerr != nil || rerr != nil {
			t.Fatalf("%s with %T: actors %v, reference %v", c.server, c.comp, aerr, rerr)
		}
		if len(actor.models) != rounds || !slices.EqualFunc(actor.models, ref.models, slices.Equal) || !slices.Equal(actor.times, ref.times) || !slices.Equal(actor.sizes, ref.sizes) {
			t.Errorf("%s with %T, %v: the engines differ:\nactors:    %v %v\nreference: %v %v", c.server, c.comp, c.share, actor.times, actor.sizes, ref.times, ref.sizes)
		}
	}
}

// An agent's residual survives its being parked: a run whose agents are
// parked after every task (fedavg.HoldPark) equals, bit for bit, one that
// keeps them (HoldKeep), on both engines — and the residual matters: the
// same run without error feedback differs. QSGD's stream is carried over
// alike.
func TestParkedAgentsKeepTheirResidual(t *testing.T) {
	const dim, rounds = 50, 12
	sets, l := compressProblem(10, dim)
	base := fedavg.Config{Agents: 10, Participants: 3, StepSize: 0.02, Normalized: true,
		Epochs: fedavg.Range{Min: 1, Max: 3}, Batch: fedavg.Range{Min: 1, Max: 5}, NoiseStd: 0.01}
	m := &systems.Model{Latency: 0.01, Dropout: 0.1}
	for _, comp := range []compress.Compressor{compress.TopK{K: 3, Feedback: true}, compress.QSGD{Levels: 2}} {
		var runs [][][]float64
		for _, hold := range []fedavg.Holding{fedavg.HoldKeep, fedavg.HoldPark} {
			for _, onReference := range []bool{false, true} {
				cfg := base
				cfg.Compress, cfg.Hold = comp, hold
				cfg.Collect = fedavg.Deadline{Seconds: 10}
				u, err := compressedRun(t, cfg, sets, l, m, "mean", rounds, onReference)
				if err != nil {
					t.Fatal(err)
				}
				runs = append(runs, u.models)
			}
		}
		for i, r := range runs[1:] {
			if !slices.EqualFunc(r, runs[0], slices.Equal) {
				t.Errorf("%T: run %d (hold, engine) differs from the kept actor run", comp, i+1)
			}
		}
		if tk, ok := comp.(compress.TopK); ok {
			cfg := base
			tk.Feedback = false
			cfg.Compress, cfg.Hold = tk, fedavg.HoldPark
			cfg.Collect = fedavg.Deadline{Seconds: 10}
			u, err := compressedRun(t, cfg, sets, l, m, "mean", rounds, false)
			if err != nil {
				t.Fatal(err)
			}
			if slices.EqualFunc(u.models, runs[0], slices.Equal) {
				t.Error("top-k without error feedback gives the run with it: the residual is not carried")
			}
		}
	}
}

// Compressed replies are refused with secure aggregation by name, and a
// reply the server cannot decode stops the run naming the agent.
func TestCompressionRefusedWithSecureAggregation(t *testing.T) {
	cfg := baseConfig()
	cfg.Compress = compress.TopK{K: 1, Feedback: true}
	cfg.SecAgg = &fedavg.SecureAggregation{Bits: 32, Clip: 4}
	sets, l := regression(t, cfg.Agents)
	r := actors.NewRun(actors.Options{RunSeed: 1})
	defer r.Close()
	_, err := Spawn(r, Setup{Config: &cfg, Data: data.Sets(sets), Loss: l, W0: make([]float64, 3), Rounds: 1, Server: "mean"})
	if err == nil || !strings.Contains(err.Error(), fedavg.CompressSecAgg) {
		t.Errorf("got %v", err)
	}
}

// Compressed replies carry the partial agent policy's report: on the
// ideal network the actor run and the flat reference agree on the models
// and on every reply's size, report fields included.
func TestCompressedRepliesCarryTheImportanceReport(t *testing.T) {
	sets, l := regression(t, 12)
	cfg := fedavg.Config{Agents: 12, Participants: 4, StepSize: 0.05, Normalized: true,
		Epochs: fedavg.Range{Min: 1, Max: 5}, Batch: fedavg.Range{Min: 1, Max: 10},
		Importance: fedavg.Importance{Agents: fedavg.Partial, Data: fedavg.Partial},
		Compress:   compress.QSGD{Levels: 3}, Share: fedavg.Updates, NoiseStd: 0.1}
	w0 := make([]float64, 3)
	got := &uplink{}
	r := actors.NewRun(actors.Options{RunSeed: 7, Observer: got})
	defer r.Close()
	sched, err := Spawn(r, Setup{Config: &cfg, Data: data.Sets(sets), Loss: l, W0: w0, Rounds: 20, Server: "mean"})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Execute(sched, &msg.Start{}); err != nil {
		t.Fatal(err)
	}
	want := &uplink{}
	if err := reference.ReferenceEvents(t.Context(), cfg, data.Sets(sets), l, w0, 7, 20, want.observe); err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(got.models, want.models, slices.Equal) || !slices.Equal(got.sizes, want.sizes) {
		t.Errorf("actors %v\nreference %v", got.sizes, want.sizes)
	}
	if bare := fedavg.CompressedReplyWireSize(1, &compress.Compressed{Scale: 1, Packed: make([]byte, 2)}, 0); !slices.ContainsFunc(got.sizes, func(s float64) bool { return int(s) > bare }) {
		t.Errorf("no reply carried a report: sizes %v", got.sizes)
	}
}
