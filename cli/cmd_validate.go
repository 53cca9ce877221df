package cli

import (
	"fmt"

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
