// Package cli is maple's command line: the cobra commands, one per
// cmd_*.go file, each adding itself with addCommand; the exit statuses; and
// the handling of panics as internal errors. Command maple (the repository
// root) calls Execute; importing cli links every algorithm family in.
package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"maple/actors"
	_ "maple/families/all" // every algorithm family registers itself
	"maple/scenarios"
	"maple/scenarios/run"
)

// usageError marks a problem with the command line itself.
type usageError struct{ error }

// Exit statuses besides 0 (success) and 2 (usage).
const (
	exitFailure     = 1
	exitUsage       = 2
	exitInternal    = 3
	exitInterrupted = 130 // 128 + SIGINT, as shells report it
)

// internalError is a panic recovered in maple's code: a bug.
type internalError struct {
	value any
	stack string
}

func (e *internalError) Error() string { return fmt.Sprintf("internal error: %v", e.value) }

// exitCode maps an error to the process exit status.
func exitCode(err error) int {
	var u usageError
	var intr *run.Interrupted
	switch {
	case err == nil:
		return 0
	case isInternal(err):
		return exitInternal
	case errors.As(err, &intr):
		return exitInterrupted
	case errors.As(err, &u) || scenarios.IsUserError(err):
		return exitUsage
	}
	return exitFailure
}

// isInternal reports whether err comes from a panic: in the command itself,
// in a runner worker, or in an actor's behaviour. Its stack, if any, is
// returned by stackOf.
func isInternal(err error) bool { return stackOf(err) != "" }

// stackOf returns the stack of the panic behind err, or "".
func stackOf(err error) string {
	var ie *internalError
	var re *run.InternalError
	var f *actors.Failure
	switch {
	case errors.As(err, &ie):
		return ie.stack
	case errors.As(err, &re):
		return re.Stack
	case errors.As(err, &f):
		return f.Stack
	}
	return ""
}

// Execute runs the command line args and returns the exit status. A panic
// anywhere in maple's code becomes exit status 3 and a request for a bug
// report, with the stack trace written to a file rather than the terminal.
func Execute(args []string, stdout, stderr io.Writer) (code int) {
	defer func() {
		if v := recover(); v != nil {
			err := &internalError{value: v, stack: string(debug.Stack())}
			code = report(stderr, args, err)
		}
	}()
	root := newRoot(stdout, stderr)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return 0
	}
	if isInternal(err) {
		return report(stderr, args, err)
	}
	var r reported
	if !errors.As(err, &r) {
		fmt.Fprintln(stderr, "maple:", err)
	}
	return exitCode(err)
}

// reported wraps the error of a command that has already told the user
// about each of its failures (maple validate of several files): Execute
// prints nothing more, and the exit status is that of the error wrapped.
type reported struct{ error }

func (r reported) Unwrap() error { return r.error }

// report tells the user about an internal error: one line with the error,
// one asking for a report, and the stack trace in a file (never on the
// terminal).
func report(stderr io.Writer, args []string, err error) int {
	fmt.Fprintln(stderr, "maple:", firstLine(err.Error()))
	where := "run again with --log-level debug for details"
	if f, ferr := os.CreateTemp("", "maple-crash-*.txt"); ferr == nil {
		fmt.Fprintf(f, "maple %s\nargs: %q\nerror: %v\n\n%s", run.Version, args, err, stackOf(err))
		f.Close()
		where = "the stack trace is in " + f.Name()
	}
	fmt.Fprintf(stderr, "maple: this is a bug in maple, not a problem with your input: please report it with the command line and the scenario (%s)\n", where)
	return exitInternal
}

// firstLine returns s up to its first newline.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
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
	// An unknown command is a usage error (exit status 2), which cobra's
	// own check, for a root without Args, is not; the root then needs a
	// run function, which shows the help as cobra would.
	root.Args = func(cmd *cobra.Command, a []string) error {
		if len(a) == 0 {
			return nil
		}
		msg := fmt.Sprintf("unknown command %q (see maple --help)", a[0])
		if s := cmd.SuggestionsFor(a[0]); len(s) > 0 {
			msg = fmt.Sprintf("unknown command %q: did you mean %s? (see maple --help)", a[0], strings.Join(s, " or "))
		}
		return usageError{errors.New(msg)}
	}
	root.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
	root.SuggestionsMinimumDistance = 2
	for _, c := range commands {
		root.AddCommand(c(g))
	}
	return root
}

// commands lists the constructors of maple's subcommands. Each subcommand
// lives in its own cmd_*.go file and adds itself with addCommand from an init
// function, so adding a command changes no shared line.
var commands []func(g *globalFlags) *cobra.Command

// addCommand registers a subcommand constructor.
func addCommand(c func(g *globalFlags) *cobra.Command) { commands = append(commands, c) }

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
