package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"maple/scenarios"
	"maple/scenarios/run"
)

func init() { addCommand(newValidateCommand) }

func newValidateCommand(*globalFlags) *cobra.Command {
	var sets []string
	cmd := &cobra.Command{
		Use:   "validate FILE...",
		Short: "Check scenario files without running them",
		Long: `Checks each scenario file as 'maple run' would before running it, and reports
on every file: "FILE: ok" on standard output, or the error on standard error.
The exit status is 2 if any file fails (1 if a check itself failed otherwise).`,
		Args: args(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			var first error
			for _, path := range a {
				err := validate(cmd.OutOrStdout(), path, sets)
				if err == nil {
					continue
				}
				if len(a) == 1 {
					return err
				}
				fmt.Fprintln(cmd.ErrOrStderr(), "maple:", err)
				if first == nil || exitCode(err) == exitUsage {
					first = err // the exit status is 2 if any file is a user error
				}
			}
			if first != nil {
				return reported{first}
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&sets, "set", nil, "override a field before validating (repeatable)")
	return cmd
}

// validate checks one scenario file and reports it on out if it is valid.
func validate(out io.Writer, path string, sets []string) error {
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
	fmt.Fprintf(out, "%s: ok (%d curves, %d runs)\n", path, len(plan.Curves), runs)
	return nil
}
