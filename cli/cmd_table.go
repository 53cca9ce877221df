package cli

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"maple/families/fedplt"
	"maple/rundir"
	"maple/scenarios"
	"maple/scenarios/run"
)

func init() { addCommand(newTableCommand) }

type tableFlags struct {
	sets    []string
	format  string
	out     string
	engine  string
	workers int
}

func newTableCommand(g *globalFlags) *cobra.Command {
	f := &tableFlags{}
	cmd := &cobra.Command{
		Use:   "table FILE...",
		Short: "Run a Fed-PLT table scenario and print the table beside the paper's",
		Long: "Run each scenario FILE (a fedplt scenario whose curves carry\n" +
			"algorithm.fedplt.table cells, such as scenarios/fedplt/table2.yaml), write its\n" +
			"run directory as maple run does, and print the table in the paper's layout with\n" +
			"maple's numbers beside the paper's: times to the tolerance (the cost ledger)\n" +
			"with iteration counts in parentheses, or steady-state errors.",
		Args: args(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, a []string) error { return runTables(cmd, g, f, a) },
	}
	cmd.Flags().StringArrayVar(&f.sets, "set", nil, "override a field in every FILE (repeatable)")
	cmd.Flags().StringVar(&f.format, "format", "text", "text, csv or markdown")
	cmd.Flags().StringVar(&f.out, "out", "", "directory the run directories are created in (default runs/)")
	cmd.Flags().StringVar(&f.engine, "engine", "actors", "actors, or reference for the actor-free implementation")
	cmd.Flags().IntVar(&f.workers, "workers", 0, "runs executed in parallel (default: number of CPUs)")
	return cmd
}

func runTables(cmd *cobra.Command, g *globalFlags, f *tableFlags, files []string) error {
	if f.format != "text" && f.format != "csv" && f.format != "markdown" {
		return usageError{fmt.Errorf("--format: expected text, csv or markdown, got %q", f.format)}
	}
	engine := run.Engine(f.engine)
	if engine != run.Actors && engine != run.Reference {
		return usageError{fmt.Errorf("--engine: expected actors or reference, got %q", f.engine)}
	}
	logger, err := g.newLogger(cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	defer logger.Sync() //nolint:errcheck // stderr sync errors are not actionable
	plans := make([]*scenarios.Plan, len(files))
	for i, file := range files {
		if plans[i], err = scenarios.LoadFile(file, f.sets); err != nil {
			return err
		}
		if _, err := tableCells(plans[i]); err != nil {
			return err
		}
	}
	if f.workers < 0 {
		return usageError{fmt.Errorf("--workers: must be a positive number of parallel runs (or 0 for one per CPU), got %d", f.workers)}
	}
	opts := run.Options{Engine: engine, Workers: f.workers, Logger: logger}
	for _, plan := range plans {
		if err := run.CheckWith(plan, opts); err != nil {
			return err
		}
	}
	root := f.out
	if root == "" {
		root = "runs"
	}
	ctx, abort, stop := interruption(cmd.Context(), cmd.ErrOrStderr())
	defer stop()
	opts.Abort = abort
	var csvHeader bool
	for i, plan := range plans {
		dir, err := rundir.CreateDir("", root, plan.Base.Name, false)
		if err != nil {
			return usageError{err}
		}
		res, err := run.ExecuteContext(ctx, plan, dir.Path, opts)
		if err != nil {
			dir.Discard()
			return err
		}
		tables := buildTables(plan, res.Summary)
		w := cmd.OutOrStdout()
		switch f.format {
		case "csv":
			if err := writeTableCSV(w, tables, !csvHeader); err != nil {
				return err
			}
			csvHeader = true
			fmt.Fprintf(cmd.ErrOrStderr(), "%s: run directory %s\n", files[i], dir.Path)
		case "markdown":
			writeTableMarkdown(w, tables)
			fmt.Fprintf(w, "Run directory: `%s`.\n\n", dir.Path)
		default:
			writeTableText(w, tables)
			fmt.Fprintf(w, "run directory: %s\n\n", dir.Path)
		}
	}
	return nil
}

// tableCells returns the table cell of every curve of a plan, refusing a
// plan that is not a fedplt table.
func tableCells(plan *scenarios.Plan) ([]*fedplt.PLTTableCell, error) {
	cells := make([]*fedplt.PLTTableCell, len(plan.Curves))
	for i, c := range plan.Curves {
		p, ok := c.Scenario.Algorithm.Params.(*fedplt.FedPLT)
		if !ok {
			return nil, &scenarios.Error{File: plan.File, Field: "algorithm.kind", Msg: "maple table needs fedplt scenarios, got " + c.Scenario.Algorithm.Kind}
		}
		if p.Table == nil {
			return nil, &scenarios.Error{File: plan.File, Field: "algorithm.fedplt.table", Msg: fmt.Sprintf("curve %q has no table cell", c.Label)}
		}
		cells[i] = p.Table
	}
	return cells, nil
}

// paperTable is one table: its rows and columns in order of first
// appearance, and its cells.
type paperTable struct {
	title       string
	rows, cols  []string
	cells       map[[2]string]tableValue
	quantityFor map[string]bool
}

// tableValue is one cell: maple's value and the paper's.
type tableValue struct {
	quantity          string
	maple, mapleIters float64
	converged         float64 // fraction of runs that met the tolerance
	paper, paperIters float64
}

func buildTables(plan *scenarios.Plan, s *rundir.Summary) []*paperTable {
	cells, _ := tableCells(plan)
	var tables []*paperTable
	byTitle := map[string]*paperTable{}
	for i, cell := range cells {
		t := byTitle[cell.Title]
		if t == nil {
			t = &paperTable{title: cell.Title, cells: map[[2]string]tableValue{}, quantityFor: map[string]bool{}}
			byTitle[cell.Title] = t
			tables = append(tables, t)
		}
		if !slices.Contains(t.rows, cell.Row) {
			t.rows = append(t.rows, cell.Row)
		}
		if !slices.Contains(t.cols, cell.Column) {
			t.cols = append(t.cols, cell.Column)
		}
		cs := s.Curves[i]
		v := tableValue{quantity: cell.Quantity, paper: cell.Paper, paperIters: cell.PaperIterations,
			mapleIters: float64(cs.Final["rounds"]), converged: float64(cs.Final["converged"])}
		switch cell.Quantity {
		case "time":
			v.maple = float64(cs.Final["cost"])
		case "iterations":
			v.maple = v.mapleIters
		case "error":
			v.maple = float64(cs.SteadyState["gradient_norm"])
		}
		if cs.Diverged {
			v.maple = math.NaN()
		}
		t.cells[[2]string{cell.Row, cell.Column}] = v
		t.quantityFor[cell.Quantity] = true
	}
	return tables
}

// compact formats a time as the paper does: 13.5k, 2.04M.
func compact(v float64) string {
	switch {
	case math.IsNaN(v):
		return "diverged"
	case math.Abs(v) >= 1e6:
		return strconv.FormatFloat(v/1e6, 'g', 4, 64) + "M"
	case math.Abs(v) >= 1e3:
		return strconv.FormatFloat(v/1e3, 'g', 4, 64) + "k"
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// cellText renders one side of a cell; maple's side flags runs that did not
// reach the tolerance.
func (v tableValue) cellText(maple bool) string {
	value, iters := v.paper, v.paperIters
	if maple {
		value, iters = v.maple, v.mapleIters
	}
	if !maple && value == 0 {
		return "--"
	}
	var s string
	switch v.quantity {
	case "error":
		if math.IsNaN(value) {
			return "diverged"
		}
		return strconv.FormatFloat(value, 'e', 3, 64)
	case "iterations":
		s = strconv.FormatFloat(value, 'g', 3, 64)
	default:
		s = compact(value)
		if iters > 0 && !math.IsNaN(value) {
			s += " (" + strconv.FormatFloat(iters, 'g', 3, 64) + ")"
		}
	}
	if maple && v.converged < 1 && !math.IsNaN(value) {
		s += fmt.Sprintf(" [%.0f%% converged]", 100*v.converged)
	}
	return s
}

func (t *paperTable) caption() string {
	c := t.title
	switch {
	case t.quantityFor["time"]:
		c += " — time to ‖Σ∇f_i(x̄)‖² ≤ tolerance (ledger: t_G per gradient, t_C per round trip, all agents); iterations in parentheses"
	case t.quantityFor["error"]:
		c += " — asymptotic error: steady-state ‖Σ∇f_i(x̄)‖"
	case t.quantityFor["iterations"]:
		c += " — iterations to the tolerance"
	}
	return c
}

func writeTableText(w io.Writer, tables []*paperTable) {
	for _, t := range tables {
		fmt.Fprintln(w, t.caption())
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		head, sub := "", ""
		for _, c := range t.cols {
			head += "\t" + c + "\t"
			sub += "\tmaple\tpaper"
		}
		fmt.Fprintln(tw, head)
		fmt.Fprintln(tw, sub)
		for _, r := range t.rows {
			line := r
			for _, c := range t.cols {
				v, ok := t.cells[[2]string{r, c}]
				if !ok {
					line += "\t\t"
					continue
				}
				line += "\t" + v.cellText(true) + "\t" + v.cellText(false)
			}
			fmt.Fprintln(tw, line)
		}
		tw.Flush()
		fmt.Fprintln(w)
	}
}

func writeTableMarkdown(w io.Writer, tables []*paperTable) {
	for _, t := range tables {
		fmt.Fprintf(w, "**%s**\n\n", t.caption())
		head, rule := "| |", "|---|"
		for _, c := range t.cols {
			head += " " + c + ": maple | " + c + ": paper |"
			rule += "---|---|"
		}
		fmt.Fprintln(w, head)
		fmt.Fprintln(w, rule)
		for _, r := range t.rows {
			line := "| " + r + " |"
			for _, c := range t.cols {
				v, ok := t.cells[[2]string{r, c}]
				if !ok {
					line += " | |"
					continue
				}
				line += " " + v.cellText(true) + " | " + v.cellText(false) + " |"
			}
			fmt.Fprintln(w, line)
		}
		fmt.Fprintln(w)
	}
}

func writeTableCSV(w io.Writer, tables []*paperTable, header bool) error {
	cw := csv.NewWriter(w)
	if header {
		if err := cw.Write([]string{"table", "row", "column", "quantity", "maple", "maple_iterations", "converged", "paper", "paper_iterations"}); err != nil {
			return err
		}
	}
	num := func(v float64) string {
		if v == 0 {
			return ""
		}
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	for _, t := range tables {
		for _, r := range t.rows {
			for _, c := range t.cols {
				v, ok := t.cells[[2]string{r, c}]
				if !ok {
					continue
				}
				rec := []string{t.title, r, c, v.quantity, strconv.FormatFloat(v.maple, 'g', -1, 64),
					strconv.FormatFloat(v.mapleIters, 'g', -1, 64), strconv.FormatFloat(v.converged, 'g', -1, 64),
					num(v.paper), num(v.paperIters)}
				if err := cw.Write(rec); err != nil {
					return err
				}
			}
		}
	}
	cw.Flush()
	return cw.Error()
}
