package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"maple/actors/trace"
	"maple/actors/trace/stats"
)

func init() { addTraceCommand(newTraceStatsCommand) }

type traceStatsFlags struct {
	selectionFlags
	totals bool
	json   bool
}

func newTraceStatsCommand(*globalFlags) *cobra.Command {
	f := &traceStatsFlags{}
	cmd := &cobra.Command{
		Use:   "stats RUN_DIR",
		Short: "Summarize a trace: messages, bytes and mean norms per round and type; sent, received and idle time per actor",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			return printTraceStats(cmd.OutOrStdout(), a[0], f)
		},
	}
	f.selectionFlags.add(cmd)
	cmd.Flags().BoolVar(&f.totals, "totals", false, "print the totals per type and per actor, not every round")
	cmd.Flags().BoolVar(&f.json, "json", false, "print the statistics as JSON")
	return cmd
}

func printTraceStats(w io.Writer, dir string, f *traceStatsFlags) error {
	t, _, err := openSelection(dir, f.filter())
	if err != nil {
		return err
	}
	defer t.Close()
	s, err := stats.Collect(t, f.filter())
	if err != nil {
		return usageError{err}
	}
	if f.json {
		js, err := json.MarshalIndent(s, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", js)
		return err
	}
	return writeStats(w, t, s, f.totals)
}

// writeStats prints the statistics as aligned tables.
func writeStats(w io.Writer, t *trace.Trace, s *stats.Stats, totals bool) error {
	kind := "JSON lines"
	if t.Indexed() {
		kind = "compressed, indexed"
	}
	fmt.Fprintf(w, "%s (%s): %d messages in %d runs, virtual duration %s s\n", t.Path, kind, s.Records, s.Runs, num(s.Duration))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	row := func(cells ...string) {
		for _, c := range cells {
			fmt.Fprint(tw, c, "\t")
		}
		fmt.Fprintln(tw)
	}
	types := func(title string, rows []stats.RoundType) {
		fmt.Fprintf(tw, "\n%s\n", title)
		row("round", "type", "count", "bytes", "mean norm")
		for _, r := range rows {
			round := "all"
			if r.Round >= 0 {
				round = strconv.Itoa(r.Round)
			}
			norm := "-"
			if r.Vectors > 0 {
				norm = num(r.MeanNorm)
			}
			row(round, r.Type, strconv.Itoa(r.Count), strconv.FormatInt(r.Bytes, 10), norm)
		}
	}
	types("messages per type", s.Types)
	if !totals {
		types("messages per round and type", s.Rounds)
	}
	fmt.Fprintf(tw, "\nper actor (virtual times in seconds, summed over runs)\n")
	row("actor", "sent", "received", "bytes sent", "bytes received", "busy", "idle")
	for _, a := range s.Actors {
		row(a.Name, strconv.Itoa(a.Sent), strconv.Itoa(a.Received), strconv.FormatInt(a.BytesSent, 10),
			strconv.FormatInt(a.BytesReceived, 10), num(a.Busy), num(a.Idle))
	}
	return tw.Flush()
}

// num prints a float briefly: 6 significant digits, no trailing zeros.
func num(x float64) string { return strconv.FormatFloat(x, 'g', 6, 64) }
