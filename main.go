// Command maple runs privacy-preserving multi-agent learning scenarios on an
// actor engine and inspects their message traces.
//
//	maple run [FILE] [--set field=value]... [--trace]   run a scenario (no FILE: the bundled quick start)
//	maple validate FILE...                              check scenarios without running them
//	maple trace RUN_DIR [--round N] [--actor A] [--type T]   filter a run's message trace
//	maple version                                       print the version
//
// Exit status: 0 on success, 2 for a problem with the user's input (a bad
// scenario, flag or file), 1 for a failure of a run.
package main

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"golang.org/x/term"

	"maple/actors/trace"
	"maple/scenarios"
	"maple/scenarios/run"
)

func main() {
	os.Exit(execute(os.Args[1:], os.Stdout, os.Stderr))
}

// usageError marks a problem with the command line itself.
type usageError struct{ error }

// exitCode maps an error to the process exit status.
func exitCode(err error) int {
	var u usageError
	if err == nil {
		return 0
	}
	if errors.As(err, &u) || scenarios.IsUserError(err) {
		return 2
	}
	return 1
}

// execute runs the command line args and returns the exit status.
func execute(args []string, stdout, stderr io.Writer) int {
	root := newRoot(stdout, stderr)
	root.SetArgs(args)
	err := root.Execute()
	if err != nil {
		fmt.Fprintln(stderr, "maple:", err)
	}
	return exitCode(err)
}

// globalFlags are the flags every command shares.
type globalFlags struct {
	logLevel  string
	logFormat string
}

func newRoot(stdout, stderr io.Writer) *cobra.Command {
	g := &globalFlags{}
	root := &cobra.Command{
		Use:           "maple",
		Short:         "Simulate privacy-preserving multi-agent learning on an actor engine",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.PersistentFlags().StringVar(&g.logLevel, "log-level", "warn", "log level: debug, info, warn or error")
	root.PersistentFlags().StringVar(&g.logFormat, "log-format", "console", "log format: console or json")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(newRunCommand(g), newValidateCommand(), newTraceCommand(), newVersionCommand())
	return root
}

// args wraps a cobra argument check so that its failures are usage errors.
func args(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, a []string) error {
		if err := check(cmd, a); err != nil {
			return usageError{err}
		}
		return nil
	}
}

// newLogger builds the zap logger the flags ask for, writing to stderr.
func (g *globalFlags) newLogger(stderr io.Writer) (*zap.Logger, error) {
	level, err := zapcore.ParseLevel(g.logLevel)
	if err != nil {
		return nil, usageError{fmt.Errorf("--log-level: %v", err)}
	}
	enc := zap.NewDevelopmentEncoderConfig()
	var encoder zapcore.Encoder
	switch g.logFormat {
	case "console":
		encoder = zapcore.NewConsoleEncoder(enc)
	case "json":
		encoder = zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig())
	default:
		return nil, usageError{fmt.Errorf("--log-format: expected console or json, got %q", g.logFormat)}
	}
	return zap.New(zapcore.NewCore(encoder, zapcore.AddSync(stderr), level)), nil
}

type runFlags struct {
	sets         []string
	trace        bool
	tracePayload bool
	out          string
	engine       string
	workers      int
}

func newRunCommand(g *globalFlags) *cobra.Command {
	f := &runFlags{}
	cmd := &cobra.Command{
		Use:   "run [FILE]",
		Short: "Run a scenario and write its run directory",
		Long: "Run the scenario FILE (without FILE, the bundled quick start) and write a run\n" +
			"directory with the resolved scenario, metrics.csv, summary.json, plots and,\n" +
			"with --trace, trace.jsonl.",
		Args: args(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error { return runScenario(cmd, g, f, a) },
	}
	cmd.Flags().StringArrayVar(&f.sets, "set", nil, "override a field, e.g. --set algorithm.step_size=0.05 (repeatable)")
	cmd.Flags().BoolVar(&f.trace, "trace", false, "record every message in trace.jsonl")
	cmd.Flags().BoolVar(&f.tracePayload, "trace-payload", false, "record message vectors in full (implies --trace)")
	cmd.Flags().StringVar(&f.out, "out", "", "run directory (default runs/NAME-TIMESTAMP)")
	cmd.Flags().StringVar(&f.engine, "engine", "actors", "actors, or reference for the actor-free implementation")
	cmd.Flags().IntVar(&f.workers, "workers", 0, "runs executed in parallel (default: number of CPUs)")
	return cmd
}

func runScenario(cmd *cobra.Command, g *globalFlags, f *runFlags, a []string) error {
	logger, err := g.newLogger(cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	defer logger.Sync() //nolint:errcheck // stderr sync errors are not actionable
	var plan *scenarios.Plan
	if len(a) == 0 {
		plan, err = scenarios.LoadBundled(scenarios.DefaultScenario, f.sets)
	} else {
		plan, err = scenarios.LoadFile(a[0], f.sets)
	}
	if err != nil {
		return err
	}
	engine := run.Engine(f.engine)
	if engine != run.Actors && engine != run.Reference {
		return usageError{fmt.Errorf("--engine: expected actors or reference, got %q", f.engine)}
	}
	out, err := outputDir(f.out, plan.Base.Name)
	if err != nil {
		return err
	}
	total := 0
	for _, c := range plan.Curves {
		total += c.Scenario.Runs
	}
	opts := run.Options{
		Engine: engine, Trace: f.trace || f.tracePayload, TracePayload: f.tracePayload,
		Workers: f.workers, Logger: logger,
	}
	bar := newProgress(cmd.ErrOrStderr(), total)
	if bar != nil {
		opts.Progress = func(done, _ int) { _ = bar.Set(done) }
	}
	start := time.Now()
	res, err := run.Execute(plan, out, opts)
	if bar != nil {
		_ = bar.Finish()
	}
	if err != nil {
		_ = os.Remove(out) // only if it is still empty: partial results stay for inspection
		return err
	}
	logger.Info("run finished", zap.String("dir", out), zap.Duration("elapsed", time.Since(start)))
	printResult(cmd.OutOrStdout(), out, res)
	return nil
}

// outputDir creates the run directory: dir if given, else
// runs/NAME-YYYYMMDD-HHMMSS (with a numeric suffix if that exists).
func outputDir(dir, name string) (string, error) {
	if dir == "" {
		base := filepath.Join("runs", name+"-"+time.Now().Format("20060102-150405"))
		dir = base
		for i := 2; ; i++ {
			if _, err := os.Stat(dir); os.IsNotExist(err) {
				break
			}
			dir = base + "-" + strconv.Itoa(i)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", usageError{fmt.Errorf("cannot create run directory: %v", err)}
	}
	return dir, nil
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
	for _, c := range res.Summary.Curves {
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(c.SteadyState)) {
			if strings.HasSuffix(k, "_db") || !hasDB(c.SteadyState, k) {
				parts = append(parts, fmt.Sprintf("%s=%.4g", k, float64(c.SteadyState[k])))
			}
		}
		status := ""
		if c.Diverged {
			status = "  DIVERGED"
		}
		fmt.Fprintf(w, "  %-30s %s%s\n", c.Label, strings.Join(parts, " "), status)
	}
}

func hasDB[V any](m map[string]V, k string) bool { _, ok := m[k+"_db"]; return ok }

func newValidateCommand() *cobra.Command {
	var sets []string
	cmd := &cobra.Command{
		Use:   "validate FILE...",
		Short: "Check scenario files without running them",
		Args:  args(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			for _, path := range a {
				plan, err := scenarios.LoadFile(path, sets)
				if err != nil {
					return err
				}
				if err := run.Check(plan); err != nil {
					return err
				}
				runs := 0
				for _, c := range plan.Curves {
					runs += c.Scenario.Runs
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s: ok (%d curves, %d runs)\n", path, len(plan.Curves), runs)
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&sets, "set", nil, "override a field before validating (repeatable)")
	return cmd
}

type traceFlags struct {
	rounds []int
	actors []string
	types  []string
	runs   []int
	curve  string
	json   bool
}

func newTraceCommand() *cobra.Command {
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
	return cmd
}

func printTrace(w io.Writer, dir string, f *traceFlags) error {
	path := filepath.Join(dir, "trace.jsonl")
	in, err := os.Open(path)
	if err != nil {
		if os.IsNotExist(err) {
			return usageError{fmt.Errorf("%s has no trace: run the scenario with --trace", dir)}
		}
		return usageError{err}
	}
	defer in.Close()
	filter := trace.Filter{Rounds: f.rounds, Actors: f.actors, Types: f.types, Runs: f.runs, Curve: f.curve}
	tw := trace.NewWriter(w)
	err = trace.Read(in, path, func(rec *trace.Record) error {
		if !filter.Match(rec) {
			return nil
		}
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

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print maple's version",
		Args:  args(cobra.NoArgs),
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintf(cmd.OutOrStdout(), "maple %s (%s, %s/%s)\n", run.Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
		},
	}
}
