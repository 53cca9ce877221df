package diffusion

import (
	"math"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	"maple/actors"
	"maple/actors/msg"
	"maple/algorithms/diffusion"
	"maple/algorithms/systems"
	"maple/topology"
)

// asyncRun runs asynchronous ATC on the actor engine under model m and
// returns the network iterates of every step and their times.
func asyncRun(t *testing.T, s Setup, m *systems.Model) ([][][]float64, []float64) {
	t.Helper()
	var out [][][]float64
	var times []float64
	c := NewCollector(len(s.Sets), len(s.W0))
	c.Async = true
	c.Models = func(_ int, W [][]float64) { out = append(out, clone(W)) }
	c.Time = func(_ int, tm float64) { times = append(times, tm) }
	r := actors.NewRun(actors.Options{RunSeed: seed, Observer: c,
		Timing: actors.Timing{Latency: m.Latency, Jitter: m.Jitter, Bandwidth: m.Bandwidth, Loss: m.Loss, Duplicate: m.Duplicate}})
	t.Cleanup(r.Close)
	s.Devices = m.Devices(seed, len(s.Sets), diffusion.AgentName)
	sched, err := Spawn(r, s)
	if err != nil {
		t.Fatal(err)
	}
	c.First = sched + 1
	if err := r.Execute(sched, &msg.Start{}); err != nil {
		t.Fatal(err)
	}
	if len(out) != s.Iterations {
		t.Fatalf("observed %d steps, want %d", len(out), s.Iterations)
	}
	return out, times
}

// asyncReference runs the event-driven reference on the same inputs.
func asyncReference(t *testing.T, s Setup, m *systems.Model) ([][][]float64, []float64) {
	t.Helper()
	rows := map[int][][]float64{}
	tm := map[int]float64{}
	seen := map[int]int{}
	var out [][][]float64
	var times []float64
	err := diffusion.AsyncReference(s.Config, diffusion.Problem{A: s.A, Sets: s.Sets, Loss: s.Loss, W0: s.W0}, seed, s.Iterations,
		diffusion.AsyncOptions{Model: m, Wait: s.Async.Wait, Observe: func(round, agent int, key string, v []float64) {
			switch key {
			case diffusion.KeyAsyncTime:
				tm[round] = max(tm[round], v[0])
			case diffusion.KeyAsyncModel:
				if rows[round] == nil {
					rows[round] = make([][]float64, len(s.Sets))
				}
				rows[round][agent] = slices.Clone(v)
				if seen[round]++; seen[round] == len(s.Sets) {
					out = append(out, rows[round])
					times = append(times, tm[round])
				}
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	return out, times
}

// Under slow devices, per-step random compute times, jitter, bandwidth,
// loss, duplication, dropouts and a crash, the asynchronous actor run and
// the event-driven reference produce the same iterates at the same virtual
// times, bit for bit.
func TestAsyncMatchesReference(t *testing.T) {
	A := topology.Metropolis(network(t))
	m := &systems.Model{Latency: 0.05, Jitter: 0.03, Bandwidth: 1000,
		Compute: systems.Compute{Kind: systems.Uniform, Min: 0.5, Max: 1.5, PerStep: true},
		Classes: []systems.Class{{Name: "slow", Fraction: 0.2, Slowdown: 10, Dropout: -1}},
		Loss:    0.1, Duplicate: 0.1, Dropout: 0.05, Crashes: map[int]int{3: 12}}
	for _, scheme := range []diffusion.Scheme{diffusion.None, diffusion.Random} {
		s := setup(t, diffusion.Config{Strategy: diffusion.ATC, StepSize: 0.1, Privacy: privacy(scheme)}, A)
		s.Async = &Async{Wait: 0.02}
		got, gt := asyncRun(t, s, m)
		want, wt := asyncReference(t, s, m)
		if d := maxDiff(got, want); d != 0 || !slices.Equal(gt, wt) {
			t.Errorf("%v: iterates differ by %g; times %v and %v", scheme, d, gt[:3], wt[:3])
		}
	}
}

// With equal compute times, no jitter and a wait of at least the latency,
// every share reaches its receivers before they combine: asynchronous ATC is
// the synchronous recursion, bit for bit, one step per round.
func TestAsyncWithEqualComputeTimesIsSynchronous(t *testing.T) {
	A := topology.Metropolis(network(t))
	cfg := diffusion.Config{Strategy: diffusion.ATC, StepSize: 0.1, Privacy: privacy(diffusion.Random)}
	s := setup(t, cfg, A)
	want := reference(t, s)
	m := &systems.Model{Latency: 0.1, Compute: systems.Compute{Kind: systems.Fixed, Value: 1}}
	s.Async = &Async{Wait: 0.1}
	got, times := asyncRun(t, s, m)
	if d := maxDiff(got, want); d != 0 {
		t.Errorf("asynchronous ATC with equal compute times differs from synchronous ATC by %g", d)
	}
	// Tick at 0.1, then steps of 1 s of compute and 0.1 s of wait (sums of
	// a few decimals: 1e-12 covers their rounding).
	if math.Abs(times[0]-1.2) > 1e-12 || math.Abs(times[4]-(0.1+5*1.1)) > 1e-12 {
		t.Errorf("step times %v, want 1.2, 2.3, …", times[:5])
	}
	// With a shorter wait the shares arrive after the combines: the
	// iterates differ (each agent combines its neighbours' previous step).
	s.Async = &Async{Wait: 0.05}
	late, _ := asyncRun(t, s, m)
	if maxDiff(late, want) == 0 {
		t.Error("a wait shorter than the latency still gave the synchronous iterates")
	}
}

// The sizes the reference charges to bandwidth are the protobuf library's.
func TestShareWireSize(t *testing.T) {
	for _, n := range []int{0, 1, 3, 7850} {
		for _, stage := range []int{0, 2} {
			if got, want := diffusion.ShareWireSize(stage, n), proto.Size(&msg.StageShare{Stage: int32(stage), Payload: make([]float64, n)}); got != want {
				t.Errorf("stage %d, %d values: reference %d, protobuf %d", stage, n, got, want)
			}
		}
	}
}
