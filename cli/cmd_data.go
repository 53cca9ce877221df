package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"maple/scenarios"
	"maple/scenarios/run"
)

func init() { addCommand(newDataCommand) }

func newDataCommand(*globalFlags) *cobra.Command {
	var (
		sets   []string
		runIdx int
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "data FILE",
		Short: "Show how a scenario's data are dealt out to the agents, without running it",
		Long: `Builds the data of one run of every curve (the files read, the pool drawn and
partitioned, exactly as 'maple run' would) and prints the number of samples and
of classes per agent (min, median, max). Nothing is trained. The plan passes
the checks of 'maple run' first — its estimated memory and time, its data files,
what its algorithm family checks (a random walk solves run 0's optimum to check
that it lies in the ball W) — and --run must name one of its runs.`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			if runIdx < 0 {
				return usageError{fmt.Errorf("--run: must be non-negative, got %d", runIdx)}
			}
			plan, err := scenarios.LoadFile(a[0], sets)
			if err != nil {
				return err
			}
			if n, label := run.PlanRuns(plan); runIdx >= n {
				return usageError{fmt.Errorf("--run: the plan has no run %d: curve %q has %d run(s), numbered from 0", runIdx, label, n)}
			}
			reports, err := run.DescribeData(plan, runIdx)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(reports)
			}
			for _, r := range reports {
				printDataReport(out, r, runIdx)
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&sets, "set", nil, "override a field before building the data (repeatable)")
	cmd.Flags().IntVar(&runIdx, "run", 0, "the Monte-Carlo run whose data to build")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the reports as JSON")
	return cmd
}

// printDataReport writes one report as a small table.
func printDataReport(w io.Writer, r run.DataReport, runIdx int) {
	s := r.Summary
	how := r.Kind
	if r.Partition != "" {
		how += ", partition " + r.Partition
	}
	fmt.Fprintf(w, "%s: %s, run %d (data seed %#x)\n", strings.Join(r.Curves, ", "), how, runIdx, r.Seed)
	fmt.Fprintf(w, "  %d agents, %d training samples, %d test samples, %d features, %d parameters\n",
		s.Agents, s.Train, s.Test, r.Features, r.Parameters)
	fmt.Fprintf(w, "  %-18s %8s %8s %8s\n", "per agent", "min", "median", "max")
	fmt.Fprintf(w, "  %-18s %8g %8g %8g\n", "samples", s.Samples.Min, s.Samples.Median, s.Samples.Max)
	if s.Classes != nil {
		fmt.Fprintf(w, "  %-18s %8g %8g %8g\n", fmt.Sprintf("classes (of %d)", s.Total), s.Classes.Min, s.Classes.Median, s.Classes.Max)
	}
}
