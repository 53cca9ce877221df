package cli

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	htmlreport "maple/report"
)

func init() { addCommand(newReportCommand) }

func newReportCommand(*globalFlags) *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "report RUN_DIR [RUN_DIR…]",
		Short: "Write one self-contained page of a run's results (RUN_DIR/report.html), or of several runs side by side (compare.html)",
		Long: `Write one self-contained page, viewable offline, of what maple run wrote.

With one run directory: RUN_DIR/report.html, with the steady-state and final
values of every curve, the run's figures as interactive charts (static SVG
without scripts), the sweep figures, the privacy budget, the message counts
per round from the trace, the warnings, the provenance and the scenario.

With several: compare.html in the current directory, overlaying the runs'
curves metric by metric, with a table of their steady states and of the
scenario fields that differ between them.

--out writes the page elsewhere. A directory that is not what maple run
writes (a file missing, malformed, cut short, or disagreeing with the
others) is refused with one line naming the file and line; one that is
complete enough to show but lacks something (a run stopped while drawing its
figures, a directory of an older maple) gets its page, and a warning on
standard error that the page repeats. docs/report.md lists both.`,
		Args: args(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			path := out
			var flags []string
			var err error
			switch {
			case len(a) == 1 && out == "":
				path, flags, err = htmlreport.Write(a[0])
			case len(a) == 1:
				flags, err = htmlreport.WriteTo(a[0], out)
			default:
				if path == "" {
					path = htmlreport.CompareFile
				}
				flags, err = htmlreport.WriteCompare(a, path)
			}
			if err != nil {
				return usageError{err}
			}
			for _, f := range flags {
				fmt.Fprintln(cmd.ErrOrStderr(), "maple: warning: "+f)
			}
			fmt.Fprintln(cmd.OutOrStdout(), filepath.Clean(path))
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "out", "o", "", "write the page to this file (default RUN_DIR/report.html for one run, compare.html for several)")
	return cmd
}
