package run

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"

	"go.uber.org/zap"

	"maple/algorithms/loss"
	"maple/scenarios"
	"maple/scenarios/inputs"
)

// The limits a plan is checked against before anything runs
// (docs/scenarios.md#limits). The estimates are deliberately rough — within a
// factor of a few of the truth — because they only need to tell a plan that
// runs from one that cannot: a typo that asks for 10¹⁸ runs, a dimension that
// needs petabytes.
const (
	// MaxSeconds is the longest a plan may be estimated to run: 30 days on
	// its workers.
	MaxSeconds = 30 * 24 * 3600
	// LongSeconds is the estimated time beyond which the plan's estimate is
	// said before it runs (warnLong): an hour on its workers.
	LongSeconds = 3600
	// DefaultTraceLimit is the largest trace (trace.jsonl.zst) written
	// unless Options.TraceLimit says otherwise: 1 GB.
	DefaultTraceLimit = 1e9
	// recordCompression is how much smaller a compressed trace is than the
	// JSON lines of its records without payload: 17× measured on Fig. 4
	// (docs/trace.md; 16× before zstd SpeedFastest), about 13× on small
	// federated runs; 12 errs on the large side.
	recordCompression = 12
	// payloadCompression is the same for payload coordinates, which are
	// random digits: about 22 JSON bytes compress to about 11.
	payloadCompression = 2

	// secondsPerOp and secondsPerMessage calibrate the time estimate: Go's
	// scalar floating-point loops run at about 1 Gflop/s per core, and the
	// actor engine spends 0.4–0.5 µs per message (docs/design.md).
	secondsPerOp      = 1e-9
	secondsPerMessage = 1e-6
	// ActorBytes is the memory of one actor of the engine, with its mailbox,
	// process registration, envelope and random streams.
	ActorBytes = 4096
	// baseBytes is what the process needs besides the plan.
	baseBytes = 64 << 20
)

// Estimate is what one Monte-Carlo run of a curve costs, beyond building its
// data and solving for w^o, which the runner estimates itself. Families
// provide it through family.Estimate; genericEstimate is the fallback.
type Estimate struct {
	// Bytes is the memory the run holds besides its data: the actors and
	// the state of the algorithm.
	Bytes float64
	// Ops is the number of floating-point operations of the run.
	Ops float64
	// Messages is the number of messages the actor engine delivers.
	Messages float64
	// RecordBytes is the mean size of a message's trace record without
	// payload, and VectorLen the mean number of vector coordinates a message
	// carries (each about 22 bytes in a payload trace).
	RecordBytes float64
	VectorLen   float64
	// Drivers are the fields of the family's own section that the
	// estimate grows with, so that a plan refused for its memory or time
	// names the field that drives it when it is one of them rather than a
	// shared field.
	Drivers []Driver
}

// Driver is a field an estimate grows with, and how far its value is beyond
// a typical one (its value over its default, say): the checks name, among
// the shared fields and the drivers, the one with the largest ratio.
type Driver struct {
	Field string
	Ratio float64
}

// genericEstimate is the estimate of a family that does not provide one:
// every agent touches every sample in every iteration and exchanges four
// messages with the rest of the network.
func genericEstimate(sc *scenarios.Scenario, md Model) Estimate {
	a, n, T := float64(sc.Data.Agents), float64(sc.Data.Samples.Max), float64(sc.Iterations)
	return Estimate{
		Bytes:       a * (ActorBytes + 4*md.Dim*8),
		Ops:         a * n * md.SampleOps * T,
		Messages:    4 * a * T,
		RecordBytes: 200,
		VectorLen:   md.Dim,
	}
}

// estimate returns the family's estimate of one run of sc, whose model is
// md.
func estimate(sc *scenarios.Scenario, md Model) Estimate {
	if f := familyOf(sc); f.Estimate != nil {
		return f.Estimate(sc, md)
	}
	return genericEstimate(sc, md)
}

// Model is what the estimates need of a curve's model.
type Model struct {
	// Dim is the length of its parameter vector on the data's features: m
	// for the generalized linear losses, K(M+1) for softmax, H(M+1) +
	// K(H+1) for the MLP (loss.Loss.Dim), the network's parameters for the
	// cnn. It may differ from data.dim.
	Dim float64
	// SampleOps is the operations of one sample's gradient: 4·Dim for the
	// linear losses and the MLP (a multiply-add per parameter forward and
	// one back), and four times the forward multiply-adds for the cnn,
	// whose convolution weights serve every pixel (loss.Net.MultiplyAdds:
	// McMahan's CNN does 12.3 M for its 1.66 M parameters).
	SampleOps float64
}

// modelOf returns the model of sc on data with m features, a cnn's on
// images of the shape image unless loss.image says otherwise.
func modelOf(sc *scenarios.Scenario, m int, image []int) Model {
	dense := func(d int) Model { return Model{Dim: float64(d), SampleOps: 4 * float64(d)} }
	kind, err := loss.ParseKind(sc.Loss.Kind)
	if err != nil {
		return dense(m)
	}
	if kind == loss.CNN {
		nt, err := sc.Loss.Net(m, image)
		if err != nil {
			return dense(m)
		}
		return Model{Dim: float64(nt.Dim()), SampleOps: 4 * float64(nt.MultiplyAdds())}
	}
	return dense(loss.Loss{Kind: kind, Classes: sc.Loss.Classes, Hidden: sc.Loss.Hidden}.Dim(m))
}

// Generated reports whether sc's data are generated (regression,
// logistic, click, mixture): drawn agent by agent from the run seed, so that
// a family that reads them lazily (Family.Lazy) never holds them whole.
func Generated(sc *scenarios.Scenario) bool {
	switch sc.Data.Kind {
	case "regression", "logistic", "click", "mixture":
		return true
	}
	return false
}

// sampleCost returns the memory of one sample of sc's data of m features
// and its number of non-zero features: dense rows and a target, or, for
// click data, a sparse row of data.click.active entries.
func sampleCost(sc *scenarios.Scenario, m float64) (bytes, nonzeros float64) {
	if sc.Data.Kind == "click" {
		nonzeros = float64(sc.Data.Click.Active)
		return nonzeros*12 + 16, nonzeros
	}
	return (m + 1) * 8, m
}

// AgentDataBytes estimates the memory of one agent's dataset of sc's data,
// of at most data.samples samples of data.dim features.
func AgentDataBytes(sc *scenarios.Scenario) float64 {
	b, _ := sampleCost(sc, float64(max(sc.Data.Dim, 1)))
	return float64(sc.Data.Samples.Max)*b + setBytes
}

// setBytes is the memory of a data.Set besides its samples: the struct
// and its slices' headers, rounded up to the allocator's size classes.
const setBytes = 192

// agentOps is what drawing one generated agent's dataset costs besides its
// samples, in operations: keying its stream (SHA-256) and seeding ChaCha8,
// about 0.3 µs measured, rounded up for the agent's other per-pass work.
const agentOps = 1000

// problemCost estimates the memory and operations of building one run's data
// (of m features) and solving for w^o (of dim parameters): the dense (or, for
// click data, sparse) samples of every agent and the test set, the normal
// equations or Newton Hessian (dim² memory, N·dim² + dim³/3 operations, about
// 20 Newton steps for logistic regression) or, above 2000 parameters and for
// softmax regression, L-BFGS; nothing for a curve without an optimum.
//
// A family that reads generated data lazily (Family.Lazy) holds none of the
// agents' samples, but draws them anew on every pass over the agents: one
// for the checks and the summary, which also sums the normal equations of
// the closed form, then one for the gradient norm of its report (which may
// be a family's own pass for its summary, inputs.Pass), about three per Newton
// step (the gradient, the Hessian, the line search) and two per L-BFGS
// iteration.
func problemCost(sc *scenarios.Scenario, dir string, m, dim float64) (bytes, ops float64) {
	d := &sc.Data
	samples := float64(d.Agents)*float64(d.Samples.Max) + float64(d.TestSamples)
	perSample, nonzeros := sampleCost(sc, m)
	if Generated(sc) && familyOf(sc).Lazy {
		return lazyProblemCost(sc, m, dim)
	}
	switch d.Kind {
	case "libsvm":
		// A LIBSVM file holds the samples; a dense copy of it takes a few
		// times its size.
		if st, err := os.Stat(inputs.Resolve(dir, d.LIBSVM.File)); err == nil {
			samples = 0
			bytes = 4 * float64(st.Size())
		}
	case "idx":
		samples = 0
		for _, f := range []string{d.IDX.Images, d.IDX.TestImages} {
			if f != "" {
				b, o := idxCost(dir, f, d)
				bytes, ops = bytes+b, ops+o
			}
		}
	}
	bytes += samples * perSample
	ops += 10*samples*nonzeros + agentOps*float64(d.Agents)
	switch {
	case !hasOptimum(sc):
	case sc.Loss.Kind == "least-squares" || (sc.Loss.Kind == "logistic" && dim <= 2000):
		steps := 1.0
		if sc.Loss.Kind != "least-squares" {
			steps = 20
		}
		bytes += 2 * dim * dim * 8
		ops += steps * (samples*nonzeros*nonzeros + dim*dim*dim/3)
	default:
		// A gradient costs about a pass over the parameters per sample:
		// nonzeros·dim/m.
		bytes += 40 * dim * 8
		ops += 500 * samples * nonzeros * dim / max(m, 1)
	}
	return bytes, ops
}

// idxCost estimates the memory of the IDX array in file, and the
// operations of transforming its images (data.transform): its elements as
// its header announces them, read before anything else is decompressed
// (inputs.IDXHeader) — a gzip file of a few megabytes can announce a
// gigabyte of zeros, which the estimate must refuse before the reader
// inflates it — held once in their encoded form, which the sets of
// unsigned-byte images share (data.IDXRows), plus a float64 per element
// for standardized sets and other element types (data.IDXSubset), or a
// float64 per coefficient of every image and scatter.Config.Ops per image
// for transformed ones. A file whose header cannot be read counts twice
// its size; the checks of the data then name what is wrong with it.
func idxCost(dir, file string, d *scenarios.Data) (bytes, ops float64) {
	a, err := inputs.IDXHeader(dir, file)
	if err != nil {
		if st, err := os.Stat(inputs.Resolve(dir, file)); err == nil {
			return 2 * float64(st.Size()), 0
		}
		return 0, 0
	}
	elements := 1.0
	for _, n := range a.Dims {
		elements *= float64(n)
	}
	bytes = elements * float64(a.Size())
	switch {
	case d.Transform != nil:
		images := float64(a.Dims[0])
		bytes += 8 * images * float64(inputs.TransformFeatures(d.Transform, a))
		if len(a.Dims) == 3 {
			ops = images * d.Transform.ScatterConfig().Ops(a.Dims[1], a.Dims[2])
		}
	case d.IDX.Scale == "standardize" || !a.SharedRows():
		bytes += 8 * elements
	}
	return bytes, ops
}

// lazyProblemCost is problemCost for generated data read lazily: the test
// set, the chunks of agents drawn ahead (data.Fold: two chunks of 256 per
// core), and the passes over the agents, each drawing them anew.
func lazyProblemCost(sc *scenarios.Scenario, m, dim float64) (bytes, ops float64) {
	d := &sc.Data
	perSample, nonzeros := sampleCost(sc, m)
	agents, train := float64(d.Agents), float64(d.Agents)*float64(d.Samples.Max)
	bytes = float64(d.TestSamples)*perSample + float64(2*256*runtime.GOMAXPROCS(0))*AgentDataBytes(sc)
	pass := 10*train*nonzeros + agentOps*agents // drawing every agent once
	ops = pass + 10*float64(d.TestSamples)*nonzeros
	switch {
	case !hasOptimum(sc):
	case sc.Loss.Kind == "least-squares":
		bytes += 2 * dim * dim * 8
		ops += pass + train*nonzeros*nonzeros + dim*dim*dim/3
	case sc.Loss.Kind == "logistic" && dim <= 2000:
		bytes += 2 * dim * dim * 8
		ops += 20 * (3*pass + train*nonzeros*nonzeros + dim*dim*dim/3)
	default:
		bytes += 40 * dim * 8
		ops += 500 * (2*pass + train*nonzeros*dim/max(m, 1))
	}
	return bytes, ops
}

// curveCost is the estimate of one curve.
type curveCost struct {
	curve    *scenarios.CurveSpec
	est      Estimate
	runBytes float64 // peak memory of one run, data included
	seconds  float64 // time of one run on one core
	tables   float64 // memory of the metrics of all the curve's runs
	trace    float64 // bytes of the curve's trace
}

// planCost is the estimate of a whole plan.
type planCost struct {
	curves  []curveCost
	workers int
	memory  float64 // peak memory
	seconds float64 // wall-clock time on the workers
	trace   float64 // bytes of the compressed trace, if traced
}

// costOf estimates the plan under the given options.
func costOf(plan *scenarios.Plan, opts *Options, tracing bool) *planCost {
	pc := &planCost{}
	runs := 0.0
	var maxRun float64
	for _, c := range plan.Curves {
		sc := c.Scenario
		m := inputs.Features(sc, plan.Dir)
		md := modelOf(sc, m, inputs.ImageShape(sc, plan.Dir))
		est := estimate(sc, md)
		bytes, ops := problemCost(sc, plan.Dir, float64(m), md.Dim)
		cc := curveCost{curve: c, est: est, runBytes: bytes + est.Bytes, seconds: (ops + est.Ops) * secondsPerOp}
		if opts.Engine != Reference {
			cc.seconds += est.Messages * secondsPerMessage
		}
		r := float64(sc.Runs)
		rows := float64(sc.Iterations)/float64(sc.Output.Every) + 2
		cc.tables = r * (rows*float64(len(Columns(sc)))*8 + 512)
		if tracing {
			// Every record names its curve.
			record := (est.RecordBytes + float64(len(c.Label))) / recordCompression
			if opts.TracePayload {
				record += 22 * est.VectorLen / payloadCompression
			}
			cc.trace = r * est.Messages * record
		}
		pc.curves = append(pc.curves, cc)
		runs += r
		maxRun = max(maxRun, cc.runBytes)
		pc.seconds += r * cc.seconds
		pc.memory += cc.tables
		pc.trace += cc.trace
	}
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	pc.workers = int(min(float64(workers), max(runs, 1)))
	pc.memory += float64(pc.workers)*maxRun + baseBytes
	pc.seconds /= float64(pc.workers)
	return pc
}

// PlanEstimate is what the checks before running estimate a plan to cost.
type PlanEstimate struct {
	// Curves holds each curve's estimate of one run, in plan order.
	Curves []Estimate
	// Memory is the peak memory in bytes, Seconds the wall-clock time on
	// the workers, and Trace the size of the compressed trace in bytes (0
	// when not tracing).
	Memory, Seconds, Trace float64
}

// EstimatePlan returns the estimates CheckWith checks against the limits,
// under the options Execute would be given.
func EstimatePlan(plan *scenarios.Plan, opts Options) PlanEstimate {
	opts.defaults()
	pc := costOf(plan, &opts, opts.Trace || opts.TracePayload || plan.Base.Trace)
	e := PlanEstimate{Memory: pc.memory, Seconds: pc.seconds, Trace: pc.trace}
	for _, c := range pc.curves {
		e.Curves = append(e.Curves, c.est)
	}
	return e
}

// typical are the values the blame for an estimate is measured against: a
// field is blamed in proportion to how far it exceeds its default.
var typical = []struct {
	field string
	value func(sc *scenarios.Scenario) float64
	ref   float64
}{
	{"runs", func(sc *scenarios.Scenario) float64 { return float64(sc.Runs) }, 1},
	{"iterations", func(sc *scenarios.Scenario) float64 { return float64(sc.Iterations) }, 100},
	{"data.agents", func(sc *scenarios.Scenario) float64 { return float64(sc.Data.Agents) }, 10},
	{"data.samples", func(sc *scenarios.Scenario) float64 { return float64(sc.Data.Samples.Max) }, 100},
	{"data.dim", func(sc *scenarios.Scenario) float64 { return float64(sc.Data.Dim) }, 2},
	{"data.test_samples", func(sc *scenarios.Scenario) float64 { return float64(sc.Data.TestSamples) }, 1000},
	{"loss.classes", func(sc *scenarios.Scenario) float64 { return float64(sc.Loss.Classes) }, 10},
	{"loss.hidden", func(sc *scenarios.Scenario) float64 { return float64(sc.Loss.Hidden) }, 100},
}

// blame returns the field among fields and the family's drivers whose
// value in sc is largest relative to its default: the one to name when an
// estimate is too large.
func blame(sc *scenarios.Scenario, drivers []Driver, fields ...string) string {
	best, ratio := fields[0], 0.0
	for _, t := range typical {
		for _, f := range fields {
			if f == t.field {
				if r := t.value(sc) / t.ref; r > ratio {
					best, ratio = f, r
				}
			}
		}
	}
	for _, d := range drivers {
		if d.Ratio > ratio {
			best, ratio = d.Field, d.Ratio
		}
	}
	return best
}

// checkCost refuses a plan whose estimated memory, time or trace size is
// beyond the limits, naming the field that drives the estimate.
func (pc *planCost) check(opts *Options) error {
	limit := opts.MemoryLimit
	if limit == 0 {
		limit = MachineMemory()
	}
	if limit > 0 && pc.memory > limit {
		c := pc.largest(func(c curveCost) float64 { return c.runBytes })
		field := blame(c.curve.Scenario, c.est.Drivers, "data.agents", "data.samples", "data.dim", "data.test_samples", "loss.classes", "loss.hidden")
		tables := pc.sum(func(c curveCost) float64 { return c.tables })
		if tables > float64(pc.workers)*c.runBytes {
			c = pc.largest(func(c curveCost) float64 { return c.tables })
			field = blame(c.curve.Scenario, nil, "runs", "iterations")
		}
		return c.curve.Errorf(field, "the plan needs about %s of memory (%d worker(s) × %s per run for the data, w^o and the algorithm, plus %s of metrics), more than the %s available; see docs/scenarios.md#limits",
			formatBytes(pc.memory), pc.workers, formatBytes(c.runBytes), formatBytes(tables), formatBytes(limit))
	}
	if pc.seconds > MaxSeconds {
		c := pc.largest(func(c curveCost) float64 { return float64(c.curve.Scenario.Runs) * c.seconds })
		field := blame(c.curve.Scenario, c.est.Drivers, "runs", "iterations", "data.agents", "data.samples", "data.dim", "loss.classes", "loss.hidden")
		return c.curve.Errorf(field, "the plan would run for about %s on %d worker(s) (%s per run), more than the %s maple accepts; see docs/scenarios.md#limits",
			formatDuration(pc.seconds), pc.workers, formatDuration(c.seconds), formatDuration(MaxSeconds))
	}
	traceLimit := opts.TraceLimit
	if traceLimit == 0 {
		traceLimit = DefaultTraceLimit
	}
	if traceLimit > 0 && pc.trace > traceLimit {
		c := pc.largest(func(c curveCost) float64 { return c.trace })
		var messages, runs float64
		for _, c := range pc.curves {
			messages += float64(c.curve.Scenario.Runs) * c.est.Messages
			runs += float64(c.curve.Scenario.Runs)
		}
		return c.curve.Errorf("trace", "tracing would write about %s (%s messages in %.0f runs, about %.0f bytes each), more than the trace limit of %s: raise --trace-limit, or trace fewer runs or iterations (--set runs=1)",
			formatBytes(pc.trace), formatCount(messages), runs, pc.trace/max(messages, 1), formatBytes(traceLimit))
	}
	return nil
}

// warnLong logs at warning level, before the runs start, the estimated
// time of a plan that will run for more than LongSeconds, naming the curve
// and the field that drive it as the time check names those of a plan it
// refuses: a plan within the 30 days that is still far longer than meant
// (local_steps: 10¹² say) is said before the wait, not found out after it.
func warnLong(plan *scenarios.Plan, opts *Options) {
	pc := costOf(plan, opts, opts.Trace || opts.TracePayload || plan.Base.Trace)
	if pc.seconds <= LongSeconds {
		return
	}
	c := pc.largest(func(c curveCost) float64 { return float64(c.curve.Scenario.Runs) * c.seconds })
	field := blame(c.curve.Scenario, c.est.Drivers, "runs", "iterations", "data.agents", "data.samples", "data.dim", "loss.classes", "loss.hidden")
	opts.Logger.Warn(fmt.Sprintf("the plan is estimated to run for about %s on %d worker(s) (%s per run of curve %q, whose %s drives it): Ctrl-C stops it, writing the runs that finished; see docs/scenarios.md#limits",
		formatDuration(pc.seconds), pc.workers, formatDuration(c.seconds), c.curve.Label, field))
}

// largest returns the curve with the largest value of f.
func (pc *planCost) largest(f func(curveCost) float64) curveCost {
	best := pc.curves[0]
	for _, c := range pc.curves[1:] {
		if f(c) > f(best) {
			best = c
		}
	}
	return best
}

func (pc *planCost) sum(f func(curveCost) float64) float64 {
	var s float64
	for _, c := range pc.curves {
		s += f(c)
	}
	return s
}

// log reports the estimate at Debug level.
func (pc *planCost) log(l *zap.Logger) {
	l.Debug("plan estimate", zap.String("memory", formatBytes(pc.memory)), zap.String("time", formatDuration(pc.seconds)),
		zap.Int("workers", pc.workers), zap.String("trace", formatBytes(pc.trace)))
}

// MachineMemory returns the memory this process can use: the physical
// memory, or the cgroup (container) limit when it is lower. It returns 0 when
// neither can be read, and the memory check is then skipped.
func MachineMemory() float64 {
	var total float64
	if f, err := os.Open("/proc/meminfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
				kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
				if err == nil {
					total = kb * 1024
				}
			}
		}
		f.Close()
	}
	if b, err := os.ReadFile("/sys/fs/cgroup/memory.max"); err == nil {
		if v, err := strconv.ParseFloat(strings.TrimSpace(string(b)), 64); err == nil && (total == 0 || v < total) {
			total = v
		}
	}
	return total
}

// formatBytes writes n bytes with a decimal unit: 1.2 GB.
func formatBytes(n float64) string {
	units := []string{"B", "kB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB"}
	i := 0
	for n >= 1000 && i < len(units)-1 {
		n /= 1000
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%.0f B", n)
	}
	return fmt.Sprintf("%.3g %s", n, units[i])
}

// formatCount writes a count compactly: 1.8 million.
func formatCount(n float64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.3g billion", n/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.3g million", n/1e6)
	}
	return fmt.Sprintf("%.0f", n)
}

// formatDuration writes a duration in seconds in the largest fitting unit.
func formatDuration(s float64) string {
	switch {
	case s >= 365*86400:
		return fmt.Sprintf("%.3g years", s/(365*86400))
	case s >= 2*86400:
		return fmt.Sprintf("%.3g days", s/86400)
	case s >= 2*3600:
		return fmt.Sprintf("%.3g hours", s/3600)
	case s >= 120:
		return fmt.Sprintf("%.3g minutes", s/60)
	}
	return fmt.Sprintf("%.2g s", math.Max(s, 0))
}
