package cli

import (
	"context"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"os/signal"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"go.uber.org/zap"
	"golang.org/x/term"

	htmlreport "maple/report"
	"maple/rundir"
	"maple/scenarios"
	"maple/scenarios/run"
)

func init() { addCommand(newRunCommand) }

type runFlags struct {
	sets         []string
	trace        bool
	tracePayload bool
	traceLimit   string
	out          string
	force        bool
	engine       string
	workers      int
	report       bool
	cluster      clusterFlags
	cpuProfile   string
}

func newRunCommand(g *globalFlags) *cobra.Command {
	f := &runFlags{}
	cmd := &cobra.Command{
		Use:   "run [FILE]",
		Short: "Run a scenario and write its run directory",
		Long: "Run the scenario FILE (without FILE, the bundled quick start) and write a run\n" +
			"directory with the resolved scenario, metrics.csv, summary.json, plots and,\n" +
			"with --trace, trace.jsonl.zst. Interrupted (SIGINT, SIGTERM), it writes the runs\n" +
			"that finished, marked partial in summary.json, and exits with status 130.",
		Args: args(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error { return runScenario(cmd, g, f, a) },
	}
	cmd.Flags().StringArrayVar(&f.sets, "set", nil, "override a field, e.g. --set algorithm.step_size=0.05 (repeatable)")
	cmd.Flags().BoolVar(&f.trace, "trace", false, "record every message in trace.jsonl.zst (compressed, indexed; zstdcat prints the JSON lines)")
	cmd.Flags().BoolVar(&f.tracePayload, "trace-payload", false, "record message vectors in full (implies --trace)")
	cmd.Flags().StringVar(&f.traceLimit, "trace-limit", "1GB", "refuse to trace a plan whose trace is estimated above this size (e.g. 500MB, 20GB; none for no limit)")
	cmd.Flags().StringVar(&f.out, "out", "", "run directory (default runs/NAME-TIMESTAMP); it must be empty or new")
	cmd.Flags().BoolVar(&f.force, "force", false, "with --out: delete maple's files from a non-empty run directory first")
	cmd.Flags().StringVar(&f.engine, "engine", "actors", "actors, or reference for the actor-free implementation")
	cmd.Flags().IntVar(&f.workers, "workers", 0, "runs executed in parallel (default: number of CPUs)")
	cmd.Flags().BoolVar(&f.report, "report", false, "also write report.html, a self-contained page of the results (see maple report)")
	f.cluster.add(cmd)
	// For profiling the engine and the kernels (docs/design.md, Performance):
	// not part of the user's interface.
	cmd.Flags().StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile of the run (pprof format) to this file")
	_ = cmd.Flags().MarkHidden("cpuprofile")
	return cmd
}

func runScenario(cmd *cobra.Command, g *globalFlags, f *runFlags, a []string) error {
	logger, err := g.newLogger(cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	defer logger.Sync() //nolint:errcheck // stderr sync errors are not actionable
	engine := run.Engine(f.engine)
	if engine != run.Actors && engine != run.Reference {
		return usageError{fmt.Errorf("--engine: expected actors or reference, got %q", f.engine)}
	}
	if f.workers < 0 {
		return usageError{fmt.Errorf("--workers: must be a positive number of parallel runs (or 0 for one per CPU), got %d", f.workers)}
	}
	traceLimit, err := parseSize(f.traceLimit)
	if err != nil {
		return usageError{fmt.Errorf("--trace-limit: %v", err)}
	}
	if f.force && f.out == "" {
		return usageError{fmt.Errorf("--force only applies with --out (a default run directory is always new)")}
	}
	var plan *scenarios.Plan
	if len(a) == 0 {
		plan, err = scenarios.LoadBundled(scenarios.DefaultScenario, f.sets)
	} else {
		plan, err = scenarios.LoadFile(a[0], f.sets)
	}
	if err != nil {
		return err
	}
	opts := run.Options{
		Engine: engine, Trace: f.trace || f.tracePayload, TracePayload: f.tracePayload,
		Workers: f.workers, Logger: logger, TraceLimit: traceLimit,
	}
	if opts.Executor, err = f.cluster.executor(cmd, logger); err != nil {
		return err
	}
	// Everything that can be checked is checked before the run directory
	// (and runs/) exists, so that a bad plan leaves nothing behind.
	if err := run.CheckWith(plan, opts); err != nil {
		return err
	}
	ctx, abort, stop := interruption(cmd.Context(), cmd.ErrOrStderr())
	defer stop()
	opts.Abort = abort
	dir, err := rundir.CreateDir(f.out, "runs", plan.Base.Name, f.force)
	if err != nil {
		return usageError{err}
	}
	total := 0
	for _, c := range plan.Curves {
		total += c.Scenario.Runs
	}
	bar := newProgress(cmd.ErrOrStderr(), total)
	if bar != nil {
		opts.Progress = func(done, _ int) { _ = bar.Set(done) }
	}
	start := time.Now()
	stopProfile, err := startCPUProfile(f.cpuProfile)
	if err != nil {
		dir.Discard()
		return err
	}
	res, err := run.ExecuteContext(ctx, plan, dir.Path, opts)
	if perr := stopProfile(); err == nil {
		err = perr
	}
	if bar != nil {
		_ = bar.Finish()
	}
	if err == nil {
		err = inspectable(dir.Path, f.report, res)
	}
	if res != nil {
		printResult(cmd.OutOrStdout(), dir.Path, res)
	}
	if err != nil {
		dir.Discard() // only the directories it created, and only if empty: partial results stay
		return err
	}
	logger.Info("run finished", zap.String("dir", dir.Path), zap.Duration("elapsed", time.Since(start)))
	return nil
}

// inspectable writes the run directory's provenance and, if asked, its
// report, adding them to the files listed.
func inspectable(dir string, withReport bool, res *run.Result) error {
	if err := rundir.WriteProvenance(dir, run.Version, os.Args); err != nil {
		return err
	}
	res.Files = append(res.Files, rundir.ProvenanceFile)
	if withReport {
		if _, _, err := htmlreport.Write(dir); err != nil {
			return err
		}
		res.Files = append(res.Files, htmlreport.File)
	}
	return nil
}

// abandonGrace is how long maple waits, after a second interrupt, for the
// writing to stop and remove what it wrote before it exits anyway: every
// step of the writing observes the abort within milliseconds, so the bound
// only ends a process that some step would otherwise keep alive.
const abandonGrace = time.Second

// interruption handles SIGINT and SIGTERM during an execution: the first
// cancels ctx (the runs stop, the finished ones are written), the second
// closes abort (the writing is abandoned and maple exits; if that takes
// longer than abandonGrace, it exits with status 130 at once), and a third
// kills the process as usual. stop releases the signals.
func interruption(parent context.Context, stderr io.Writer) (ctx context.Context, abort <-chan struct{}, stop func()) {
	ctx, cancel := context.WithCancel(parent)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	aborted, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer signal.Stop(sigs)
		select {
		case <-sigs:
			fmt.Fprintln(stderr, "maple: interrupted: stopping the runs and writing those that finished (interrupt again to abandon them)")
			cancel()
		case <-finished:
			return
		}
		select {
		case <-sigs:
			signal.Stop(sigs) // a third signal kills the process
			close(aborted)
		case <-finished:
			return
		}
		select {
		case <-time.After(abandonGrace):
			fmt.Fprintf(stderr, "maple: interrupted again: still writing after %v, exiting without cleaning up (hidden temporaries may remain)\n", abandonGrace)
			os.Exit(exitInterrupted)
		case <-finished:
		}
	}()
	var once sync.Once
	return ctx, aborted, func() { once.Do(func() { close(finished); cancel() }) }
}

// parseSize reads a size such as 1GB, 500MB, 2.5GiB or 1000 (bytes); none
// means no limit (returned as -1).
func parseSize(s string) (float64, error) {
	if strings.EqualFold(s, "none") {
		return -1, nil
	}
	units := []struct {
		suffix string
		factor float64
	}{
		{"KIB", 1 << 10}, {"MIB", 1 << 20}, {"GIB", 1 << 30}, {"TIB", 1 << 40},
		{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
		{"K", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12}, {"B", 1},
	}
	num, factor := strings.ToUpper(strings.TrimSpace(s)), 1.0
	for _, u := range units {
		if rest, ok := strings.CutSuffix(num, u.suffix); ok {
			num, factor = strings.TrimSpace(rest), u.factor
			break
		}
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || !(v > 0) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("expected a positive size such as 500MB or 20GB, or none, got %q", s)
	}
	return v * factor, nil
}

// newProgress returns a progress bar on w when w is a terminal and there is
// more than one run, else nil.
func newProgress(w io.Writer, total int) *progressbar.ProgressBar {
	f, ok := w.(*os.File)
	if !ok || total < 2 || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	return progressbar.NewOptions(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription("runs"),
		progressbar.OptionShowCount(),
		progressbar.OptionClearOnFinish(),
	)
}

// printResult tells the user where the outputs are and how each curve ended.
func printResult(w io.Writer, dir string, res *run.Result) {
	fmt.Fprintf(w, "run directory: %s\n", dir)
	for _, f := range res.Files {
		fmt.Fprintf(w, "  %s\n", f)
	}
	fmt.Fprintln(w, "steady state (mean of the final iterations):")
	// The values start in one column: after the longest label up to
	// maxLabelWidth characters, and at least minLabelWidth; a longer label
	// has its line to itself, and its values go on the next, in that column.
	width := minLabelWidth
	for _, c := range res.Summary.Curves {
		if n := utf8.RuneCountInString(c.Label); n <= maxLabelWidth {
			width = max(width, n)
		}
	}
	for _, c := range res.Summary.Curves {
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(c.SteadyState)) {
			if strings.HasSuffix(k, "_db") || !hasDB(c.SteadyState, k) {
				parts = append(parts, fmt.Sprintf("%s=%.4g", k, float64(c.SteadyState[k])))
			}
		}
		status := ""
		if c.RunsPlanned > 0 {
			status = fmt.Sprintf("  (partial: %d of %d runs)", c.Runs, c.RunsPlanned)
		}
		if c.Baseline != "" {
			var gains []string
			for _, k := range slices.Sorted(maps.Keys(c.Gain)) {
				gains = append(gains, fmt.Sprintf("%s %+.3g", k, float64(c.Gain[k])))
			}
			status += fmt.Sprintf("  gain over %q: %s", c.Baseline, strings.Join(gains, ", "))
		}
		if c.Claim != "" {
			status += "  (paper: " + c.Claim + ")"
		}
		if c.Diverged {
			status += fmt.Sprintf("  DIVERGED at iteration %d (%d of %d runs)", c.DivergedAt, c.DivergedRuns, c.Runs)
		}
		label := c.Label
		if utf8.RuneCountInString(label) > width {
			fmt.Fprintf(w, "  %s\n", label)
			label = ""
		}
		fmt.Fprintf(w, "  %-*s %s%s\n", width, label, strings.Join(parts, " "), status)
		for _, warning := range c.Warnings {
			fmt.Fprintf(w, "    warning: %s\n", warning)
		}
		for _, tr := range c.Trending {
			fmt.Fprintf(w, "    still trending: %s changes by %+.2f dB over iterations %d–%d; the run may end before the steady state (raise iterations)\n",
				tr.Metric, float64(tr.Change), tr.From, tr.To)
		}
	}
}

// minLabelWidth and maxLabelWidth bound the column of labels in the
// steady-state table: short labels are padded to minLabelWidth characters,
// as they always were; a label longer than maxLabelWidth is printed on a
// line of its own (sweeps give labels of a hundred characters, which would
// push every curve's values that far right).
const minLabelWidth, maxLabelWidth = 30, 48

func hasDB[V any](m map[string]V, k string) bool { _, ok := m[k+"_db"]; return ok }

// startCPUProfile starts writing a CPU profile to path (nothing when path is
// empty) and returns the function that stops it and closes the file.
func startCPUProfile(path string) (stop func() error, err error) {
	if path == "" {
		return func() error { return nil }, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, usageError{fmt.Errorf("--cpuprofile: %v", err)}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, usageError{fmt.Errorf("--cpuprofile: %v", err)}
	}
	return func() error {
		pprof.StopCPUProfile()
		return f.Close()
	}, nil
}
