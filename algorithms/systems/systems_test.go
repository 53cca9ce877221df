package systems

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"maple/algorithms/rng"
)

func name(k int) string { return fmt.Sprintf("agent/%d", k) }

// Classes take round(fraction·K) agents each, dealt by one permutation, and
// the same seed deals the same classes.
func TestClassesAreDealtByFraction(t *testing.T) {
	m := &Model{Classes: []Class{{Name: "slow", Fraction: 0.2, Slowdown: 10, Dropout: -1}, {Name: "far", Fraction: 0.25, Slowdown: 1, Latency: 1, Dropout: -1}}}
	devs := m.Devices(9, 100, name)
	count := map[int]int{}
	for _, d := range devs {
		count[d.Class]++
	}
	if count[0] != 20 || count[1] != 25 || count[-1] != 55 {
		t.Errorf("class counts %v, want 20 slow, 25 far, 55 default", count)
	}
	again := m.Devices(9, 100, name)
	for k := range devs {
		if devs[k].Class != again[k].Class {
			t.Fatalf("agent %d: class %d, then %d with the same seed", k, devs[k].Class, again[k].Class)
		}
	}
	if d := devs[slicesIndex(devs, 0)]; d.ComputeTime(1, 0) != 0 || d.Slowdown() != 10 {
		t.Errorf("slow device: compute time %v, slowdown %v", d.ComputeTime(1, 0), d.Slowdown())
	}
}

func slicesIndex(devs []*Device, class int) int {
	for k, d := range devs {
		if d.Class == class {
			return k
		}
	}
	return -1
}

// ComputeTime = (steps·step time + samples·gradient time)·slowdown; without
// a step-time model and slowdown it is exactly samples·gradient time, the
// engine's former charge.
func TestComputeTimeFormula(t *testing.T) {
	plain := (&Model{GradientTime: 0.001}).Devices(1, 1, name)[0]
	if got, want := plain.ComputeTime(3, 37), 37*0.001; got != want {
		t.Errorf("no step model: %v, want exactly %v", got, want)
	}
	m := &Model{GradientTime: 0.5, Compute: Compute{Kind: Fixed, Value: 2}, Classes: []Class{{Fraction: 1, Slowdown: 3, Dropout: -1}}}
	d := m.Devices(1, 1, name)[0]
	if got := d.ComputeTime(4, 10); got != (4*2+10*0.5)*3 {
		t.Errorf("fixed step time: %v, want %v", got, (4*2+10*0.5)*3)
	}
	table := &Model{Compute: Compute{Kind: Table, Table: []float64{1, 7}}}
	if got := table.Devices(1, 2, name)[1].ComputeTime(2, 0); got != 14 {
		t.Errorf("table: agent 1 takes %v for 2 steps, want 14", got)
	}
}

// Per-agent uniform and log-normal draws have the distribution's moments:
// over 4000 agents the mean of U(1, 3) is 2 ± 3·(2/√12)/√4000 ≈ 2 ± 0.03, and
// the median of the log-normal is its Median ± about 3% (the sample median's
// standard error is √(π/2)·σ·median/√n ≈ 1% here).
func TestRandomStepTimes(t *testing.T) {
	const n = 4000
	uni := (&Model{Compute: Compute{Kind: Uniform, Min: 1, Max: 3}}).Devices(3, n, name)
	var sum float64
	for _, d := range uni {
		s := d.StepTime()
		if s < 1 || s > 3 {
			t.Fatalf("uniform draw %v outside [1, 3]", s)
		}
		sum += s
	}
	if mean := sum / n; math.Abs(mean-2) > 0.03 {
		t.Errorf("uniform mean %v, want 2 ± 0.03", mean)
	}
	logn := (&Model{Compute: Compute{Kind: LogNormal, Median: 2, Sigma: 0.5}}).Devices(3, n, name)
	times := make([]float64, n)
	for k, d := range logn {
		times[k] = d.StepTime()
	}
	sort.Float64s(times)
	if med := times[n/2]; math.Abs(med-2) > 0.06 {
		t.Errorf("log-normal median %v, want 2 ± 0.06", med)
	}
	// Per-step draws differ from step to step but come from the same stream.
	per := (&Model{Compute: Compute{Kind: Uniform, Min: 1, Max: 3, PerStep: true}}).Devices(3, 1, name)[0]
	r := rng.New(3, name(0), StreamCompute)
	want := 0.0
	want += 1 + 2*r.Float64()
	want += 1 + 2*r.Float64()
	if got := per.ComputeTime(2, 0); got != want {
		t.Errorf("per-step draws: %v, want %v", got, want)
	}
}

// A crash rate p gives a geometric crash round of mean 1/p; scheduled
// crashes take the earlier of the two.
func TestCrashRounds(t *testing.T) {
	const n, p = 4000, 0.1
	devs := (&Model{CrashRate: p}).Devices(5, n, name)
	var sum float64
	for _, d := range devs {
		if d.CrashRound() < 1 {
			t.Fatalf("crash round %d", d.CrashRound())
		}
		sum += float64(d.CrashRound())
	}
	// Mean 1/p = 10, standard deviation √(1−p)/p ≈ 9.5: ± 3·9.5/√4000 ≈ 0.45.
	if mean := sum / n; math.Abs(mean-1/p) > 0.45 {
		t.Errorf("mean crash round %v, want %v ± 0.45", mean, 1/p)
	}
	d := (&Model{Crashes: map[int]int{0: 4}}).Devices(5, 2, name)
	if d[0].Crashed(3) || !d[0].Crashed(4) || d[1].Crashed(1000) {
		t.Errorf("scheduled crash in round 4: crashed(3)=%v crashed(4)=%v, other agent %v", d[0].Crashed(3), d[0].Crashed(4), d[1].Crashed(1000))
	}
}

func TestDropoutsAndAvailability(t *testing.T) {
	m := &Model{Dropout: 0.3, Classes: []Class{{Fraction: 0.5, Slowdown: 1, Dropout: 0}},
		Availability: map[int][]Window{1: {{0, 10}, {20, 30}}}}
	devs := m.Devices(2, 2, name)
	for _, d := range devs {
		// The class with dropout 0 never drops and draws nothing.
		if d.Class == 0 && (d.DropsOut() || d.dropouts != nil) {
			t.Error("a device of a class with dropout 0 dropped or opened a stream")
		}
	}
	d := devs[1]
	for _, c := range []struct {
		from, to float64
		want     bool
	}{{0, 10, true}, {5, 12, false}, {21, 29, true}, {15, 16, false}} {
		if got := d.Available(c.from, c.to); got != c.want {
			t.Errorf("available over [%v, %v]: %v, want %v", c.from, c.to, got, c.want)
		}
	}
	if !devs[0].Available(-1e9, 1e9) {
		t.Error("an agent missing from the trace must always be available")
	}
}

// A link's delay is latency + jitter·U + size/bandwidth; Between adds both
// ends' latencies, takes the slowest bandwidth and drops the faults of
// control links.
func TestLinks(t *testing.T) {
	base := Link{Latency: 1, Jitter: 0.5, Bandwidth: 100, Loss: 0.1, Duplicate: 0.2}
	l := base.Between(&Device{Latency: 0.25, Bandwidth: 50}, &Device{Latency: 0.5}, true)
	if l.Latency != 1.75 || l.Bandwidth != 50 || l.Loss != 0.1 {
		t.Errorf("Between = %+v", l)
	}
	if c := base.Between(nil, nil, false); c.Loss != 0 || c.Duplicate != 0 {
		t.Errorf("control link keeps faults: %+v", c)
	}
	r := rand.New(rand.NewPCG(1, 2))
	u := rand.New(rand.NewPCG(1, 2)).Float64()
	if got, want := l.Delay(200, func() *rand.Rand { return r }), 1.75+0.5*u+200.0/50; got != want {
		t.Errorf("delay %v, want %v", got, want)
	}
	opened := false
	reliable := Link{Latency: 1}
	if reliable.Copies(func() *rand.Rand { opened = true; return r }) != 1 || opened {
		t.Error("a reliable link must deliver one copy without drawing")
	}
	counts := [3]int{}
	f := rand.New(rand.NewPCG(3, 4))
	for range 10000 {
		counts[base.Copies(func() *rand.Rand { return f })]++
	}
	// P(lost) = 0.1, P(duplicated) = 0.9·0.2 = 0.18; 3σ ≈ 0.009 and 0.012.
	if math.Abs(float64(counts[0])/1e4-0.1) > 0.009 || math.Abs(float64(counts[2])/1e4-0.18) > 0.012 {
		t.Errorf("copies %v of 10000, want ≈ 1000 lost and 1800 duplicated", counts)
	}
}

func TestQueueOrder(t *testing.T) {
	var q Queue[string]
	q.Push(2, false, "b")
	q.Push(1, true, "timer@1")
	q.Push(1, false, "msg@1")
	q.Push(1, false, "msg@1 later")
	var got []string
	for q.Len() > 0 {
		_, v := q.Pop()
		got = append(got, v)
	}
	if want := "msg@1,msg@1 later,timer@1,b"; strings.Join(got, ",") != want {
		t.Errorf("order %v, want %s", got, want)
	}
	f := FIFO{}
	if f.Arrive(0, 1, 5) != 5 || f.Arrive(0, 1, 3) != 5 || f.Arrive(1, 0, 3) != 3 {
		t.Error("FIFO does not keep a link's send order")
	}
}

func TestValidate(t *testing.T) {
	for _, c := range []struct {
		m    Model
		want string
	}{
		{Model{Loss: 1.5}, "loss"},
		{Model{Compute: Compute{Kind: Uniform, Min: 2, Max: 1}}, "uniform"},
		{Model{Compute: Compute{Kind: Table, Table: []float64{1}}}, "lists 1 agents"},
		{Model{Classes: []Class{{Fraction: 0.7, Slowdown: 1}, {Fraction: 0.7, Slowdown: 1}}}, "add up"},
		{Model{Crashes: map[int]int{5: 1}}, "crash of agent 5"},
		{Model{Availability: map[int][]Window{0: {{2, 1}}}}, "empty"},
	} {
		if err := c.m.Validate(3); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: Validate = %v, want an error about %q", c.m, err, c.want)
		}
	}
	ok := Model{Compute: Compute{Kind: LogNormal, Median: 1, Sigma: 0.3}}
	if err := ok.Validate(3); err != nil {
		t.Error(err)
	}
}

// A fleet builds each agent's device as Devices does — the same class, step
// time, dropout and crash — and a device saved between its tasks and
// resumed on a freshly built one draws what the device kept alive draws.
func TestFleetDevicesResumeTheirStreams(t *testing.T) {
	name := func(k int) string { return fmt.Sprintf("agent/%d", k) }
	for _, perStep := range []bool{false, true} {
		m := &Model{Dropout: 0.3, CrashRate: 0.01,
			Compute: Compute{Kind: LogNormal, Median: 0.1, Sigma: 0.5, PerStep: perStep},
			Classes: []Class{{Name: "slow", Fraction: 0.3, Slowdown: 4, Dropout: -1}, {Name: "far", Fraction: 0.2, Slowdown: 1, Latency: 0.2, Dropout: 0.5}}}
		const K = 50
		all := m.Devices(11, K, name)
		f := m.Fleet(11, K, name)
		for k, d := range all {
			lazy := f.Device(k)
			if lazy.Class != d.Class || f.Class(k) != d.Class || lazy.StepTime() != d.StepTime() || lazy.CrashRound() != d.CrashRound() || lazy.Latency != d.Latency {
				t.Fatalf("per-step %v, agent %d: the fleet's device differs", perStep, k)
			}
			for task := range 6 {
				if task == 3 { // park and resume it halfway
					ps := lazy.Save(nil)
					lazy = f.Device(k)
					if rest := lazy.Resume(ps); len(rest) != 0 {
						t.Fatalf("%d positions left over", len(rest))
					}
				}
				if a, b := d.DropsOut(), lazy.DropsOut(); a != b {
					t.Fatalf("per-step %v, agent %d, task %d: dropout %v vs %v", perStep, k, task, a, b)
				}
				if a, b := d.ComputeTime(3, 10), lazy.ComputeTime(3, 10); a != b {
					t.Fatalf("per-step %v, agent %d, task %d: compute time %v vs %v", perStep, k, task, a, b)
				}
			}
		}
	}
}

// The fleet deals the classes by the permutation rand.Rand.Perm draws from
// the class stream (held in int32 while it is drawn), as the model always
// has: the first round(fraction·K) agents of it to the first class, and so on.
func TestFleetDealsClassesByPerm(t *testing.T) {
	m := &Model{Classes: []Class{{Name: "a", Fraction: 0.3, Slowdown: 2, Dropout: -1}, {Name: "b", Fraction: 0.45, Slowdown: 3, Dropout: -1}}}
	const K = 1001
	perm := rng.New(4, ClassOwner, ClassPurpose).Perm(K)
	want := make([]int, K)
	for k := range want {
		want[k] = -1
	}
	next := 0
	for c, n := range m.ClassCounts(K) {
		for _, k := range perm[next : next+n] {
			want[k] = c
		}
		next += n
	}
	f := m.Fleet(4, K, name)
	for k, c := range want {
		if f.Class(k) != c {
			t.Fatalf("agent %d: class %d, want %d", k, f.Class(k), c)
		}
	}
}
