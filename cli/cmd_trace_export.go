package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"maple/actors/trace"
	"maple/actors/trace/chrometrace"
)

func init() { addTraceCommand(newTraceExportCommand) }

type traceExportFlags struct {
	format string
	out    string
	clock  string
	selectionFlags
	window windowFlags
}

func newTraceExportCommand(*globalFlags) *cobra.Command {
	f := &traceExportFlags{}
	cmd := &cobra.Command{
		Use:   "export --format perfetto RUN_DIR",
		Short: "Export a trace as a timeline that ui.perfetto.dev and chrome://tracing open",
		Long: "Write the trace as Chrome trace-event JSON: one process per run, one track per\n" +
			"actor, a slice per message handling, flow arrows from send to receive and a\n" +
			"bytes-in-flight counter. Open the file at https://ui.perfetto.dev. Filters\n" +
			"keep the export small; arrows to messages outside the selection are dropped.",
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error {
			return exportTrace(cmd.OutOrStdout(), a[0], f)
		},
	}
	cmd.Flags().StringVar(&f.format, "format", "perfetto", "output format: perfetto (Chrome trace-event JSON)")
	cmd.Flags().StringVarP(&f.out, "out", "o", "", "output file (default RUN_DIR/timeline.json; - for standard output)")
	cmd.Flags().StringVar(&f.clock, "clock", "auto", "time axis: virtual, delivery (one microsecond per delivery) or auto (virtual unless the run takes no virtual time)")
	f.selectionFlags.add(cmd)
	f.window.add(cmd)
	return cmd
}

func exportTrace(w io.Writer, dir string, f *traceExportFlags) error {
	if f.format != "perfetto" {
		return usageError{fmt.Errorf("--format: unknown format %q; the formats are \"perfetto\"", f.format)}
	}
	clock, err := chrometrace.ParseClock(f.clock)
	if err != nil {
		return usageError{fmt.Errorf("--clock: %v", err)}
	}
	filter := f.filter()
	t, values, err := openSelection(dir, filter)
	if err != nil {
		return err
	}
	defer t.Close()
	if err := f.window.apply(&filter, values); err != nil {
		return err
	}
	path := f.out
	if path == "" {
		path = filepath.Join(dir, "timeline.json")
	}
	var out io.Writer = w
	var file *os.File
	if path != "-" {
		if file, err = os.Create(path); err != nil {
			return usageError{err}
		}
		defer file.Close()
		out = file
	}
	e := chrometrace.NewExporter(out, clock)
	n := 0
	err = t.Scan(filter, func(rec *trace.Record) error {
		if f.window.limit > 0 && n == f.window.limit {
			return trace.ErrStop
		}
		n++
		return e.Add(rec)
	})
	if err != nil {
		return usageError{err}
	}
	if err := e.Close(); err != nil {
		return err
	}
	if file != nil {
		if err := file.Close(); err != nil {
			return err
		}
		fmt.Fprintf(w, "%s: %d messages, %d events; open it at https://ui.perfetto.dev\n", path, n, e.Events())
	}
	return nil
}
