package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	htmlreport "maple/report"
)

func init() { addCommand(newReportCommand) }

func newReportCommand(*globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "report RUN_DIR",
		Short: "Write RUN_DIR/report.html: one self-contained page with the run's curves, tables, privacy budget, message statistics and provenance",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			path, err := htmlreport.Write(a[0])
			if err != nil {
				return usageError{err}
			}
			fmt.Fprintln(cmd.OutOrStdout(), path)
			return nil
		},
	}
}
