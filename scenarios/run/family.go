package run

import (
	"context"

	"maple/rundir"
	"maple/scenarios"
	"maple/scenarios/inputs"
)

// Family is an algorithm family as the runner sees it: the scenario side it
// registers with the loader, and what it takes to check and execute a curve.
// Each family lives in a package of its own (families/<kind>) and calls
// Register from an init function, so the runner, the checker, the columns and
// the plots never switch on the algorithm kind.
type Family struct {
	scenarios.Family
	// Check, if set, reports what only the family can see before anything
	// runs — an unregistered behaviour, a topology that cannot be built — as
	// scenario errors.
	Check func(c *scenarios.CurveSpec, dir string) error
	// Columns lists the metrics a curve's runs produce, in metrics.csv order.
	Columns func(sc *scenarios.Scenario) []rundir.Column
	// Run executes one Monte-Carlo run on the job's engine (j.Opts.Engine),
	// filling j.Table and j.Stats.
	Run func(j *Job, p *inputs.Problem, sink *TraceSink) error
	// Estimate, if set, returns what one run of a curve costs (memory,
	// operations, messages, trace record size) beyond its data, for the
	// checks before running, for the curve's model md (its parameters and
	// the cost of a sample's gradient); without it the runner uses
	// genericEstimate, which assumes every agent touches every sample in
	// every iteration.
	Estimate func(sc *scenarios.Scenario, md Model) Estimate
	// Lazy declares that the family reads the agents' data only through
	// inputs.Problem.Data, one agent at a time, so that the runner leaves
	// generated data (regression, logistic, click, mixture) to be drawn
	// when asked instead of holding every agent's (Problem.Sets is then
	// nil): what lets a run hold millions of agents (docs/design.md, "Ten
	// million clients").
	Lazy bool
	// Tiny, optionally, lists small scenarios (YAML, a few agents and
	// iterations) for the engine-parity test, which changes every field of
	// the first and every field of the family's parameter section in the
	// others, on both engines. List one per setting that brings parameters
	// into play (a strategy with its own fields, say). Without any, the test
	// derives one from the defaults.
	Tiny []string
}

var families = map[string]Family{}

// Register adds a family to the runner and to the scenario loader.
// Registering a kind twice panics, as it is a programming error.
func Register(f Family) {
	if _, dup := families[f.Kind]; dup {
		panic("run: family " + f.Kind + " registered twice")
	}
	if f.Columns == nil || f.Run == nil {
		panic("run: family " + f.Kind + " needs Columns and Run")
	}
	scenarios.RegisterFamily(f.Family)
	families[f.Kind] = f
}

// Lookup returns the family registered for an algorithm kind.
func Lookup(kind string) (Family, bool) {
	f, ok := families[kind]
	return f, ok
}

// familyOf returns the family of a curve's scenario. The loader only accepts
// registered kinds, so a miss is a programming error.
func familyOf(sc *scenarios.Scenario) Family {
	f, ok := families[sc.Algorithm.Kind]
	if !ok {
		panic("run: no family registered for algorithm.kind " + sc.Algorithm.Kind)
	}
	return f
}

// Check reports, as scenario errors and without running anything, every
// problem Execute would find before running, with default Options: a plan
// whose estimated memory or time exceeds the limits (docs/scenarios.md#limits),
// a data file that is missing or malformed, and what only the algorithm
// families can see — an unregistered behaviour, a topology that cannot be
// built.
func Check(plan *scenarios.Plan) error { return CheckWith(plan, Options{}) }

// CheckWith is Check with the options Execute would be given: the engine,
// the workers, tracing and the limits change the estimates.
func CheckWith(plan *scenarios.Plan, opts Options) error {
	return checkWith(context.Background(), plan, opts)
}

// checkWith is CheckWith, whose reading of the data files stops once ctx is
// done (the checks ExecuteContext makes again).
func checkWith(ctx context.Context, plan *scenarios.Plan, opts Options) error {
	opts.defaults()
	tracing := opts.Trace || opts.TracePayload || plan.Base.Trace
	if tracing && opts.Engine != Actors {
		return &scenarios.Error{File: plan.File, Field: "trace", Msg: "tracing needs the actor engine"}
	}
	cost := costOf(plan, &opts, tracing)
	if err := cost.check(&opts); err != nil {
		return err
	}
	cost.log(opts.Logger)
	if err := inputs.CheckData(ctx, plan); err != nil {
		return err
	}
	for _, c := range plan.Curves {
		if err := checkOptimum(c); err != nil {
			return err
		}
		if f := familyOf(c.Scenario); f.Check != nil {
			if err := f.Check(c, plan.Dir); err != nil {
				return err
			}
		}
	}
	return nil
}

// Columns returns the metrics a curve's runs produce.
func Columns(sc *scenarios.Scenario) []rundir.Column {
	return familyOf(sc).Columns(sc)
}
