package cli

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"maple/actors/trace"
)

func init() { addTraceCommand(newTracePathCommand) }

// pathFlags select what maple trace path follows and where.
type pathFlags struct {
	walk  int
	agent int
	run   int
	curve string
}

// pathFollower recognizes the records that carry one kind of thing through a
// run — a walk's token today; an agent's model could be another — so that
// printPath can index, validate and print any of them the same way.
type pathFollower interface {
	// what names the kind of thing followed ("walk") and flag the option
	// that selects one ("--walk").
	what() string
	flag() string
	// filter selects the records worth decoding (a compressed trace skips
	// the blocks without them).
	filter() trace.Filter
	// key reports which one of its kind rec belongs to, and whether rec
	// starts it (a start record is where the path begins) or carries it on;
	// ok is false for records that belong to none.
	key(rec *trace.Record) (id int, start, ok bool)
}

// walkFollower follows the token of a random walk: WalkStart (scheduler →
// start node) begins the path, each WalkToken moves it.
type walkFollower struct{}

func (walkFollower) what() string { return "walk" }
func (walkFollower) flag() string { return "--walk" }

func (walkFollower) filter() trace.Filter {
	return trace.Filter{Types: []string{"WalkStart", "WalkToken"}}
}

func (walkFollower) key(rec *trace.Record) (int, bool, bool) {
	switch rec.Type {
	case "WalkStart":
		return walkOf(rec), true, true
	case "WalkToken":
		return walkOf(rec), false, true
	}
	return 0, false, false
}

func newTracePathCommand(*globalFlags) *cobra.Command {
	f := &pathFlags{}
	cmd := &cobra.Command{
		Use:   "path RUN_DIR (--walk N | --agent N) [--run R] [--curve LABEL]",
		Short: "Print the path of one random walk's token, or of one agent's model, through a traced run",
		Long: "Follow walk N of a traced randomwalk run from its start node (WalkStart) along\n" +
			"every WalkToken: one line per move, with the step after which the token left\n" +
			"and its size on the wire. Without --curve, the first curve of the trace.\n" +
			"With --agent N instead, follow agent N's model: every message agent/N sends\n" +
			"that carries a vector, round by round, with its receivers and norms.\n" +
			"An unknown walk, agent, run or curve exits with status 2 and lists the valid ones.",
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error { return printPath(cmd.OutOrStdout(), a[0], f) },
	}
	cmd.Flags().IntVar(&f.walk, "walk", -1, "the walk to follow (0-based)")
	cmd.Flags().IntVar(&f.agent, "agent", -1, "the agent whose model to follow (0-based)")
	cmd.Flags().IntVar(&f.run, "run", 0, "the Monte-Carlo run")
	cmd.Flags().StringVar(&f.curve, "curve", "", "the curve (default: the first in the trace)")
	return cmd
}

// hop is one message that carries the followed thing on.
type hop struct {
	round    int
	from, to string
	size     int
	time     float64
}

// pathIndex is what one pass over a trace learns: the curves in order, the
// runs of each, the ids of the selected curve and run, and the hops of the
// selected id.
type pathIndex struct {
	curves []string
	runs   map[string][]int
	ids    []int
	start  *hop
	hops   []hop
}

// walkOf returns the walk a WalkStart or WalkToken record belongs to: its
// walk field, absent (protobuf's default) for walk 0.
func walkOf(rec *trace.Record) int {
	if w, ok := rec.Fields["walk"].(float64); ok {
		return int(w)
	}
	return 0
}

func printPath(w io.Writer, dir string, f *pathFlags) error {
	if (f.walk < 0) == (f.agent < 0) {
		return usageError{fmt.Errorf("give either the walk to follow (--walk N) or the agent whose model to follow (--agent N)")}
	}
	if f.agent >= 0 {
		return followAgent(w, dir, f.agent, f.run, f.curve)
	}
	return followPath(w, dir, walkFollower{}, f.walk, f.run, f.curve)
}

// followPath prints the path of the thing id that fol recognizes, in run
// run of curve (the first curve of the trace when empty).
func followPath(w io.Writer, dir string, fol pathFollower, id, run int, curve string) error {
	t, err := openTrace(dir)
	if err != nil {
		return err
	}
	defer t.Close()
	path := t.Path
	ix := &pathIndex{runs: map[string][]int{}}
	err = t.Scan(fol.filter(), func(rec *trace.Record) error {
		key, start, ok := fol.key(rec)
		if !ok {
			return nil
		}
		if !slices.Contains(ix.curves, rec.Curve) {
			ix.curves = append(ix.curves, rec.Curve)
		}
		if !slices.Contains(ix.runs[rec.Curve], rec.Run) {
			ix.runs[rec.Curve] = append(ix.runs[rec.Curve], rec.Run)
		}
		if curve == "" {
			curve = rec.Curve
		}
		if rec.Curve != curve || rec.Run != run {
			return nil
		}
		if start && !slices.Contains(ix.ids, key) {
			ix.ids = append(ix.ids, key)
		}
		if key != id {
			return nil
		}
		h := hop{round: rec.Round, from: rec.From, to: rec.To, size: rec.Size, time: rec.Time}
		if start {
			ix.start = &h
		} else {
			ix.hops = append(ix.hops, h)
		}
		return nil
	})
	if err != nil {
		return usageError{err}
	}
	switch {
	case len(ix.curves) == 0:
		return usageError{fmt.Errorf("%s has nothing to follow with %s (no %s in the trace)", path, fol.flag(), fol.what())}
	case !slices.Contains(ix.curves, curve):
		return usageError{fmt.Errorf("--curve: no curve %q in the trace (curves: %s)", curve, quoteAll(ix.curves))}
	case !slices.Contains(ix.runs[curve], run):
		return usageError{fmt.Errorf("--run: curve %q has no run %d in the trace (runs: %s)", curve, run, joinInts(ix.runs[curve]))}
	case ix.start == nil:
		slices.Sort(ix.ids)
		return usageError{fmt.Errorf("%s: run %d of curve %q has no %s %d (%ss: %s)", fol.flag(), run, curve, fol.what(), id, fol.what(), joinInts(ix.ids))}
	}
	at := ix.start.to
	fmt.Fprintf(w, "%s %d, run %d, curve %q: starts at %s, %d moves\n", fol.what(), id, run, curve, at, len(ix.hops))
	for _, h := range ix.hops {
		if h.from != at {
			return fmt.Errorf("%s: %s %d leaves %s after round %d, but it was at %s", path, fol.what(), id, h.from, h.round, at)
		}
		fmt.Fprintf(w, "step %6d  %s -> %s  %dB  t=%.4f\n", h.round, h.from, h.to, h.size, h.time)
		at = h.to
	}
	if n := len(ix.hops); n > 0 {
		fmt.Fprintf(w, "last move after step %d; the %s ends at %s\n", ix.hops[n-1].round, fol.what(), at)
	} else {
		fmt.Fprintf(w, "it never moved: the %s ends at %s\n", fol.what(), at)
	}
	return nil
}

func quoteAll(s []string) string {
	q := make([]string, len(s))
	for i, v := range s {
		q[i] = strconv.Quote(v)
	}
	return strings.Join(q, ", ")
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}

// followAgent prints where agent id's model goes in run run of curve (the
// first curve when empty): per round, every message it sends that carries a
// vector — its model, or what it shares of it — with receiver, type and norm.
func followAgent(w io.Writer, dir string, id, run int, curve string) error {
	t, values, err := openValues(dir)
	if err != nil {
		return err
	}
	defer t.Close()
	name := fmt.Sprintf("agent/%d", id)
	if curve == "" && len(values.Curves) > 0 {
		curve = firstCurve(t)
	}
	filter := trace.Filter{Actors: []string{name}, Runs: []int{run}, Curve: curve}
	if err := filter.Check(values); err != nil {
		return usageError{fmt.Errorf("%s: %v", dir, err)}
	}
	filter.Actors, filter.From = nil, []string{name}
	type send struct {
		to, typ string
		norm    float64
		size    int
	}
	var rounds []int
	byRound := map[int][]send{}
	err = t.Scan(filter, func(rec *trace.Record) error {
		if rec.Dim == 0 {
			return nil
		}
		if _, ok := byRound[rec.Round]; !ok {
			rounds = append(rounds, rec.Round)
		}
		byRound[rec.Round] = append(byRound[rec.Round], send{rec.To, rec.Type, rec.Norm, rec.Size})
		return nil
	})
	if err != nil {
		return usageError{err}
	}
	fmt.Fprintf(w, "%s's model, run %d, curve %q: sent in %d rounds\n", name, run, curve, len(rounds))
	for _, r := range rounds {
		var parts []string
		for _, s := range byRound[r] {
			parts = append(parts, fmt.Sprintf("%s %s ‖·‖=%.6g %dB", s.to, s.typ, s.norm, s.size))
		}
		fmt.Fprintf(w, "round %6d  -> %s\n", r, strings.Join(parts, ", "))
	}
	return nil
}

// firstCurve returns the curve of the trace's first record.
func firstCurve(t *trace.Trace) string {
	curve := ""
	_ = t.Scan(trace.Filter{}, func(rec *trace.Record) error {
		curve = rec.Curve
		return trace.ErrStop
	})
	return curve
}
