package systems

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/stat/distuv"

	"maple/algorithms/rng"
)

// Names of the random streams of the model (see the package documentation).
const (
	StreamCompute = "compute"
	StreamDropout = "dropout"
	StreamCrash   = "crash"
	StreamFaults  = "faults"
	StreamLatency = "latency"
	// ClassOwner and ClassPurpose name the stream that deals the device
	// classes.
	ClassOwner   = "network"
	ClassPurpose = "classes"
)

// ComputeKind is the distribution of an agent's compute time per local step.
type ComputeKind int

const (
	// NoStepTime charges nothing per step (only Model.GradientTime per
	// sample gradient).
	NoStepTime ComputeKind = iota
	// Fixed charges Compute.Value seconds per step.
	Fixed
	// Uniform draws the time per step uniformly from [Min, Max].
	Uniform
	// LogNormal draws exp(N(ln Median, Sigma²)) seconds per step.
	LogNormal
	// Table reads agent k's time per step from Compute.Table[k].
	Table
)

var computeNames = []string{"none", "fixed", "uniform", "lognormal", "table"}

// String returns the scenario-file name of the kind.
func (k ComputeKind) String() string {
	if k < 0 || int(k) >= len(computeNames) {
		return fmt.Sprintf("ComputeKind(%d)", int(k))
	}
	return computeNames[k]
}

// ParseComputeKind returns the kind named s.
func ParseComputeKind(s string) (ComputeKind, error) {
	for i, n := range computeNames {
		if n == s {
			return ComputeKind(i), nil
		}
	}
	return 0, fmt.Errorf("unknown compute-time model %q (expected one of: none, fixed, uniform, lognormal, table)", s)
}

// Compute is the model of the compute time per local step.
type Compute struct {
	Kind ComputeKind
	// Value is the time per step of Fixed.
	Value float64
	// Min and Max bound the time per step of Uniform.
	Min, Max float64
	// Median and Sigma parameterize LogNormal.
	Median, Sigma float64
	// Table holds agent k's time per step at index k (Table).
	Table []float64
	// PerStep redraws the time at every step instead of once per agent
	// (Uniform and LogNormal).
	PerStep bool
}

// Class is a device class: a fraction of the agents whose devices are
// slower, farther or less reliable than the rest.
type Class struct {
	// Name labels the class in summaries.
	Name string
	// Fraction is the share of the agents in the class; the classes' counts
	// are round(Fraction·K), dealt in the order the classes are listed.
	Fraction float64
	// Slowdown multiplies every compute time of the class's devices (1:
	// as fast as the others; 10: ten times slower).
	Slowdown float64
	// Latency is added to every message to or from a device of the class.
	Latency float64
	// Bandwidth, if positive, is the bandwidth of the class's links in
	// bytes per second (the slower of the two ends' bandwidths applies).
	Bandwidth float64
	// Dropout, if not negative, replaces Model.Dropout for the class.
	Dropout float64
}

// Window is an interval of virtual time [From, To] in which an agent is
// available.
type Window struct{ From, To float64 }

// Model is the systems model of a run: compute, links and failures.
type Model struct {
	// Latency, Jitter and Bandwidth are the link model of every message
	// between two placed actors: a fixed delay, a uniform extra delay in
	// [0, Jitter) and size/Bandwidth seconds of transmission (0: unlimited).
	Latency, Jitter, Bandwidth float64
	// GradientTime is the compute time of one sample gradient.
	GradientTime float64
	// Compute is the compute time per local step.
	Compute Compute
	// Classes are the device classes; agents in none of them have the
	// default device (no slowdown, no extra latency).
	Classes []Class
	// Loss and Duplicate are the probabilities that a message between two
	// network nodes is lost, or delivered twice.
	Loss, Duplicate float64
	// Dropout is the probability that an agent given a task does not
	// answer it.
	Dropout float64
	// Availability lists, by agent, the windows in which it is available;
	// agents absent from the map are always available.
	Availability map[int][]Window
	// CrashRate is the probability per round that a live agent crashes for
	// good; Crashes schedules crashes (agent → first round it is down).
	CrashRate float64
	Crashes   map[int]int
}

// Validate reports the first impossible value of m for a run of agents
// agents.
func (m *Model) Validate(agents int) error {
	for _, c := range []struct {
		name string
		v    float64
	}{{"latency", m.Latency}, {"jitter", m.Jitter}, {"bandwidth", m.Bandwidth}, {"gradient time", m.GradientTime}} {
		if !(c.v >= 0) || math.IsInf(c.v, 0) {
			return fmt.Errorf("%s must be a non-negative number, got %v", c.name, c.v)
		}
	}
	for _, p := range []struct {
		name string
		v    float64
	}{{"loss", m.Loss}, {"duplicate", m.Duplicate}, {"dropout", m.Dropout}, {"crash rate", m.CrashRate}} {
		if !(p.v >= 0 && p.v <= 1) {
			return fmt.Errorf("%s probability must lie in [0, 1], got %v", p.name, p.v)
		}
	}
	if err := m.Compute.validate(agents); err != nil {
		return err
	}
	total := 0.0
	for i, c := range m.Classes {
		if !(c.Fraction >= 0 && c.Fraction <= 1) {
			return fmt.Errorf("class %d: fraction must lie in [0, 1], got %v", i, c.Fraction)
		}
		if !(c.Slowdown > 0) || math.IsInf(c.Slowdown, 0) {
			return fmt.Errorf("class %d: slowdown must be a positive number, got %v", i, c.Slowdown)
		}
		if !(c.Latency >= 0) || !(c.Bandwidth >= 0) || math.IsInf(c.Latency, 0) || math.IsInf(c.Bandwidth, 0) {
			return fmt.Errorf("class %d: latency and bandwidth must be non-negative numbers", i)
		}
		if c.Dropout > 1 || math.IsNaN(c.Dropout) {
			return fmt.Errorf("class %d: dropout probability must lie in [0, 1], got %v", i, c.Dropout)
		}
		total += c.Fraction
	}
	if total > 1+1e-12 {
		return fmt.Errorf("the classes' fractions add up to %v, more than 1", total)
	}
	if len(m.Classes) > MaxClasses {
		return fmt.Errorf("%d device classes, more than the %d a model may have", len(m.Classes), MaxClasses)
	}
	for k, ws := range m.Availability {
		if k < 0 || k >= agents {
			return fmt.Errorf("availability of agent %d, but there are %d agents", k, agents)
		}
		for _, w := range ws {
			if !(w.From <= w.To) || math.IsNaN(w.From) {
				return fmt.Errorf("availability window [%v, %v] of agent %d is empty", w.From, w.To, k)
			}
		}
	}
	for k, r := range m.Crashes {
		if k < 0 || k >= agents {
			return fmt.Errorf("crash of agent %d, but there are %d agents", k, agents)
		}
		if r < 1 {
			return fmt.Errorf("crash of agent %d in round %d; rounds start at 1", k, r)
		}
	}
	return nil
}

func (c *Compute) validate(agents int) error {
	switch c.Kind {
	case NoStepTime:
	case Fixed:
		if !(c.Value >= 0) || math.IsInf(c.Value, 0) {
			return fmt.Errorf("fixed compute time must be a non-negative number, got %v", c.Value)
		}
	case Uniform:
		if !(c.Min >= 0 && c.Max >= c.Min) || math.IsInf(c.Max, 0) {
			return fmt.Errorf("uniform compute time needs 0 ≤ min ≤ max, got [%v, %v]", c.Min, c.Max)
		}
	case LogNormal:
		if !(c.Median > 0) || !(c.Sigma >= 0) || math.IsInf(c.Median, 0) || math.IsInf(c.Sigma, 0) {
			return fmt.Errorf("log-normal compute time needs a positive median and a non-negative sigma, got %v and %v", c.Median, c.Sigma)
		}
	case Table:
		if len(c.Table) != agents {
			return fmt.Errorf("the compute-time table lists %d agents, the run has %d", len(c.Table), agents)
		}
		for k, v := range c.Table {
			if !(v >= 0) || math.IsInf(v, 0) {
				return fmt.Errorf("compute time of agent %d must be a non-negative number, got %v", k, v)
			}
		}
	default:
		return fmt.Errorf("invalid compute-time model %v", c.Kind)
	}
	return nil
}

// Faulty reports whether the model can lose or duplicate messages.
func (m *Model) Faulty() bool { return m.Loss > 0 || m.Duplicate > 0 }

// Drops reports whether some agent may fail to answer a task: dropouts,
// crashes or availability windows.
func (m *Model) Drops() bool {
	if m.Dropout > 0 || m.CrashRate > 0 || len(m.Crashes) > 0 || len(m.Availability) > 0 {
		return true
	}
	for _, c := range m.Classes {
		if c.Dropout > 0 {
			return true
		}
	}
	return false
}

// Timed reports whether the model charges any compute time.
func (m *Model) Timed() bool {
	return m.GradientTime > 0 || m.Compute.Kind != NoStepTime
}

// ClassCounts returns the number of agents of each class among agents:
// round(Fraction·agents), capped so that the counts never exceed agents.
func (m *Model) ClassCounts(agents int) []int {
	counts := make([]int, len(m.Classes))
	left := agents
	for i, c := range m.Classes {
		n := min(int(math.Round(c.Fraction*float64(agents))), left)
		counts[i] = n
		left -= n
	}
	return counts
}

// Devices returns the devices of the run with seed runSeed, one per agent,
// named by name(k) (the family's actor names, which own the streams): every
// device of the Fleet.
func (m *Model) Devices(runSeed uint64, agents int, name func(k int) string) []*Device {
	f := m.Fleet(runSeed, agents, name)
	devices := make([]*Device, agents)
	for k := range devices {
		devices[k] = f.Device(k)
	}
	return devices
}

// Fleet returns the devices of the run with seed runSeed, named by name(k),
// to be built one at a time (Fleet.Device) by runs that hold their agents
// lazily. It deals the classes at once — a permutation of the agents drawn
// from the stream (ClassOwner, ClassPurpose), 4 bytes per agent while it is
// drawn — and keeps each agent's class in 2 bytes; without classes it holds
// nothing per agent.
func (m *Model) Fleet(runSeed uint64, agents int, name func(k int) string) *Fleet {
	f := &Fleet{m: m, runSeed: runSeed, agents: agents, name: name}
	if len(m.Classes) > 0 {
		// The permutation rand.Rand.Perm(agents) draws, in int32.
		perm := make([]int32, agents)
		for i := range perm {
			perm[i] = int32(i)
		}
		rng.New(runSeed, ClassOwner, ClassPurpose).Shuffle(agents, func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
		f.class = make([]uint16, agents)
		next := 0
		for c, n := range m.ClassCounts(agents) {
			for _, k := range perm[next : next+n] {
				f.class[k] = uint16(c + 1)
			}
			next += n
		}
	}
	return f
}

// MaxClasses is the largest number of device classes a model may have.
const MaxClasses = math.MaxUint16 - 1

// Fleet is the devices of a run, built when asked (Model.Fleet).
type Fleet struct {
	m       *Model
	runSeed uint64
	agents  int
	name    func(k int) string
	class   []uint16 // class + 1 of each agent, 0 for the default device; nil without classes
}

// Agents returns the number of agents of the fleet.
func (f *Fleet) Agents() int { return f.agents }

// Class returns agent k's class, −1 for the default device.
func (f *Fleet) Class(k int) int {
	if f.class == nil {
		return -1
	}
	return int(f.class[k]) - 1
}

// Device returns agent k's device with its streams at their start: the
// device Devices returns for k. A device whose streams have moved on since
// (per-step compute times, dropouts) is carried over with Save and Resume.
func (f *Fleet) Device(k int) *Device {
	return f.m.device(f.runSeed, k, f.name(k), f.Class(k))
}

func (m *Model) device(runSeed uint64, k int, name string, class int) *Device {
	d := &Device{model: m, Agent: k, Class: class, slowdown: 1, dropout: m.Dropout, windows: m.Availability[k]}
	if class >= 0 {
		c := m.Classes[class]
		d.slowdown, d.Latency, d.Bandwidth = c.Slowdown, c.Latency, c.Bandwidth
		if c.Dropout >= 0 {
			d.dropout = c.Dropout
		}
	}
	stream := func(purpose string) *rand.Rand { return rng.New(runSeed, name, purpose) }
	switch m.Compute.Kind {
	case Fixed:
		d.step = m.Compute.Value
	case Table:
		d.step = m.Compute.Table[k]
	case Uniform, LogNormal:
		d.computeSrc = rng.Source(runSeed, name, StreamCompute)
		d.compute = rand.New(d.computeSrc)
		if !m.Compute.PerStep {
			d.step = d.draw()
		}
	}
	if d.dropout > 0 {
		d.dropoutSrc = rng.Source(runSeed, name, StreamDropout)
		d.dropouts = rand.New(d.dropoutSrc)
	}
	d.crash = m.Crashes[k]
	if m.CrashRate > 0 {
		r := crashRound(m.CrashRate, stream(StreamCrash))
		if d.crash == 0 || (r > 0 && r < d.crash) {
			d.crash = r
		}
	}
	return d
}

// Save appends to ps the positions of the device's streams that move on
// from task to task — its per-step compute times and its dropouts — and
// returns the extended slice; Resume, on the device the Fleet builds for
// the same agent, continues them. Everything else a device holds is drawn
// once when it is built, so that the device of an agent held lazily costs
// 40 bytes per such stream between its tasks.
func (d *Device) Save(ps []rng.Position) []rng.Position {
	if d.model.Compute.PerStep && d.computeSrc != nil {
		ps = append(ps, rng.Save(d.computeSrc))
	}
	if d.dropoutSrc != nil {
		ps = append(ps, rng.Save(d.dropoutSrc))
	}
	return ps
}

// Resume moves the streams of a freshly built device to the positions Save
// appended (in the same order), and returns the positions that follow them.
func (d *Device) Resume(ps []rng.Position) []rng.Position {
	if d.model.Compute.PerStep && d.computeSrc != nil {
		d.computeSrc = ps[0].Resume()
		d.compute, ps = rand.New(d.computeSrc), ps[1:]
	}
	if d.dropoutSrc != nil {
		d.dropoutSrc = ps[0].Resume()
		d.dropouts, ps = rand.New(d.dropoutSrc), ps[1:]
	}
	return ps
}

// crashRound draws the first round in which a Bernoulli(rate) trial per
// round succeeds (a geometric draw), or 0 (never) when rate is 0.
func crashRound(rate float64, r *rand.Rand) int {
	u := r.Float64()
	if rate >= 1 {
		return 1
	}
	// P(round > n) = (1 − rate)^n; invert at 1 − u ∈ (0, 1].
	n := math.Floor(math.Log1p(-u) / math.Log1p(-rate))
	if n >= math.MaxInt32 {
		return 0
	}
	return int(n) + 1
}

// Device is one agent's device: its compute speed, its link properties and
// the failures it suffers. It draws from the agent's own streams, so it must
// be used by one goroutine (its actor, or the reference).
type Device struct {
	model *Model
	// Agent is the agent's index and Class its class (−1: the default
	// device).
	Agent, Class int
	// Latency and Bandwidth are the class's link properties (0: none
	// extra, unlimited).
	Latency, Bandwidth float64

	slowdown   float64
	step       float64    // time per step (per-agent draw, fixed or table)
	compute    *rand.Rand // StreamCompute, for Uniform and LogNormal
	computeSrc *rand.ChaCha8
	dropout    float64
	dropouts   *rand.Rand // StreamDropout
	dropoutSrc *rand.ChaCha8
	crash      int // first round the agent is down for good; 0: never
	windows    []Window
}

func (d *Device) draw() float64 {
	c := &d.model.Compute
	switch c.Kind {
	case Uniform:
		return c.Min + (c.Max-c.Min)*d.compute.Float64()
	case LogNormal:
		return distuv.LogNormal{Mu: math.Log(c.Median), Sigma: c.Sigma, Src: d.compute}.Rand()
	}
	return d.step
}

// ComputeTime returns the virtual time of a task of steps local steps that
// computes samples sample gradients: steps times the time per step plus
// samples times the gradient time, times the class's slowdown. Under a
// per-step model it draws one time per step.
func (d *Device) ComputeTime(steps, samples int) float64 {
	t := float64(samples) * d.model.GradientTime
	if d.model.Compute.Kind != NoStepTime {
		if d.model.Compute.PerStep && d.compute != nil {
			for range steps {
				t += d.draw()
			}
		} else {
			t += float64(steps) * d.step
		}
	}
	if d.slowdown != 1 {
		t *= d.slowdown
	}
	return t
}

// StepTime returns the agent's time per local step under a per-agent model
// (before the slowdown), for summaries.
func (d *Device) StepTime() float64 { return d.step }

// Slowdown returns the class's slowdown factor (1 for the default device).
func (d *Device) Slowdown() float64 { return d.slowdown }

// DropsOut draws whether the agent fails to answer its current task; it
// draws nothing when its dropout probability is 0.
func (d *Device) DropsOut() bool {
	return d.dropout > 0 && d.dropouts.Float64() < d.dropout
}

// Crashed reports whether the agent is down for good in round.
func (d *Device) Crashed(round int) bool { return d.crash > 0 && round >= d.crash }

// CrashRound returns the first round the agent is down for good, 0 if never.
func (d *Device) CrashRound() int { return d.crash }

// Available reports whether the agent is available throughout [from, to]:
// always, unless the availability trace lists it, in which case some
// window must cover the interval.
func (d *Device) Available(from, to float64) bool {
	if d.windows == nil {
		return true
	}
	for _, w := range d.windows {
		if w.From <= from && to <= w.To {
			return true
		}
	}
	return false
}
