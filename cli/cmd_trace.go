package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"

	"github.com/spf13/cobra"

	"maple/actors/trace"
	"maple/rundir"
)

func init() { addCommand(newTraceCommand) }

// traceCommands lists the constructors of the subcommands of maple trace
// (maple trace path, …); each adds itself with addTraceCommand from an init
// function in its own file.
var traceCommands []func(g *globalFlags) *cobra.Command

// addTraceCommand registers a subcommand of maple trace.
func addTraceCommand(c func(g *globalFlags) *cobra.Command) { traceCommands = append(traceCommands, c) }

type traceFlags struct {
	rounds []int
	actors []string
	types  []string
	runs   []int
	curve  string
	json   bool
	window windowFlags
}

// windowFlags are the filters by sender, receiver and virtual time, and the
// limit on the records printed.
type windowFlags struct {
	from, to     []string
	since, until float64
	limit        int
	cmd          *cobra.Command
}

// add declares the flags on cmd.
func (w *windowFlags) add(cmd *cobra.Command) {
	w.cmd = cmd
	cmd.Flags().StringSliceVar(&w.from, "from", nil, "keep messages sent by these actors")
	cmd.Flags().StringSliceVar(&w.to, "to", nil, "keep messages received by these actors")
	cmd.Flags().Float64Var(&w.since, "since", 0, "keep messages arriving at or after this virtual time (seconds)")
	cmd.Flags().Float64Var(&w.until, "until", 0, "keep messages arriving at or before this virtual time (seconds)")
	cmd.Flags().IntVar(&w.limit, "limit", 0, "print at most this many messages (0: all)")
}

// apply checks the flags against the values the trace holds and sets them
// on f: an actor the trace does not have, or a time window that cannot be,
// is a usage error listing what is valid.
func (w *windowFlags) apply(f *trace.Filter, values *trace.Values) error {
	for _, flag := range []struct {
		name   string
		actors []string
	}{{"--from", w.from}, {"--to", w.to}} {
		if err := (trace.Filter{Actors: flag.actors}).Check(values); err != nil {
			return usageError{fmt.Errorf("%s: %v", flag.name, err)}
		}
	}
	f.From, f.To = w.from, w.to
	for _, b := range []struct {
		name string
		v    float64
		dst  **float64
	}{{"since", w.since, &f.Since}, {"until", w.until, &f.Until}} {
		if !w.cmd.Flags().Changed(b.name) {
			continue
		}
		if math.IsNaN(b.v) {
			return usageError{fmt.Errorf("--%s: not a number", b.name)}
		}
		*b.dst = &b.v
	}
	if f.Since != nil && f.Until != nil && *f.Since > *f.Until {
		return usageError{fmt.Errorf("--since %g is after --until %g", *f.Since, *f.Until)}
	}
	if w.limit < 0 {
		return usageError{fmt.Errorf("--limit: %d is negative", w.limit)}
	}
	return nil
}

func newTraceCommand(g *globalFlags) *cobra.Command {
	f := &traceFlags{}
	cmd := &cobra.Command{
		Use:   "trace RUN_DIR",
		Short: "Print a run's message trace, filtered by round, actor and message type",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			return printTrace(cmd.OutOrStdout(), a[0], f)
		},
	}
	cmd.Flags().IntSliceVar(&f.rounds, "round", nil, "keep these rounds (repeatable or comma-separated)")
	cmd.Flags().StringSliceVar(&f.actors, "actor", nil, "keep messages sent or received by these actors, e.g. server, agent/3")
	cmd.Flags().StringSliceVar(&f.types, "type", nil, "keep these message types, e.g. GlobalModel")
	cmd.Flags().IntSliceVar(&f.runs, "run", nil, "keep these Monte-Carlo runs")
	cmd.Flags().StringVar(&f.curve, "curve", "", "keep this curve")
	cmd.Flags().BoolVar(&f.json, "json", false, "print the matching JSON lines instead of text")
	f.window.add(cmd)
	for _, c := range traceCommands {
		cmd.AddCommand(c(g))
	}
	return cmd
}

// openTrace opens the trace of run directory dir; a directory without one,
// and a trace without records (its runs sent no message: the
// gamma-mechanism family has no actors), are usage errors — every trace
// command would otherwise print nothing and succeed.
func openTrace(dir string) (*trace.Trace, error) {
	t, err := rundir.OpenTrace(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, usageError{fmt.Errorf("%s has no trace: run the scenario with --trace", dir)}
	}
	if err != nil {
		return nil, usageError{err}
	}
	if t.Empty() {
		t.Close()
		return nil, usageError{fmt.Errorf("%s: the trace holds no records (its runs sent no messages): there is nothing to show", dir)}
	}
	return t, nil
}

// openValues opens the trace of run directory dir and reads the values it
// holds (runs, curves, rounds, actors, types); the caller closes the trace.
func openValues(dir string) (*trace.Trace, *trace.Values, error) {
	t, err := openTrace(dir)
	if err != nil {
		return nil, nil, err
	}
	values, err := t.Values()
	if err != nil {
		t.Close()
		return nil, nil, usageError{err}
	}
	return t, values, nil
}

// openSelection is openValues that also checks filter against the values:
// a run, curve, round, actor or type the trace does not have is a usage
// error.
func openSelection(dir string, filter trace.Filter) (*trace.Trace, *trace.Values, error) {
	t, values, err := openValues(dir)
	if err != nil {
		return nil, nil, err
	}
	if err := filter.Check(values); err != nil {
		t.Close()
		return nil, nil, usageError{fmt.Errorf("%s: %v", dir, err)}
	}
	return t, values, nil
}

// selectionFlags select runs, a curve and rounds of a trace.
type selectionFlags struct {
	runs   []int
	curve  string
	rounds []int
}

// add declares the flags on cmd.
func (f *selectionFlags) add(cmd *cobra.Command) {
	cmd.Flags().IntSliceVar(&f.runs, "run", nil, "only these Monte-Carlo runs")
	cmd.Flags().StringVar(&f.curve, "curve", "", "only this curve")
	cmd.Flags().IntSliceVar(&f.rounds, "round", nil, "only these rounds")
}

// filter returns the filter of the selection.
func (f *selectionFlags) filter() trace.Filter {
	return trace.Filter{Runs: f.runs, Curve: f.curve, Rounds: f.rounds}
}

func printTrace(w io.Writer, dir string, f *traceFlags) error {
	filter := trace.Filter{Rounds: f.rounds, Actors: f.actors, Types: f.types, Runs: f.runs, Curve: f.curve}
	t, values, err := openSelection(dir, filter)
	if err != nil {
		return err
	}
	defer t.Close()
	if err := f.window.apply(&filter, values); err != nil {
		return err
	}
	tw := trace.NewWriter(w)
	printed := 0
	err = t.Scan(filter, func(rec *trace.Record) error {
		if f.window.limit > 0 && printed == f.window.limit {
			return trace.ErrStop
		}
		printed++
		if f.json {
			return tw.Write(rec)
		}
		_, err := fmt.Fprintln(w, trace.Format(rec))
		return err
	})
	if err != nil {
		return usageError{err}
	}
	return tw.Flush()
}
