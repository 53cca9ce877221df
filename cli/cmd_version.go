package cli

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"maple/scenarios/run"
)

func init() { addCommand(newVersionCommand) }

func newVersionCommand(*globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print maple's version",
		Args:  args(cobra.NoArgs),
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintf(cmd.OutOrStdout(), "maple %s (%s, %s/%s)\n", run.Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
		},
	}
}
