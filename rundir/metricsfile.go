package rundir

import (
	"bytes"
	"encoding/csv"
	"strconv"

	"maple/scenarios"
)

// Curve is the result of a curve's runs: what metrics.csv holds of it and
// the figures draw — its columns, the number of runs averaged, their mean
// and their standard deviation.
type Curve struct {
	// Spec is the curve and Cols its columns; Mean and Std hold the mean and
	// the standard deviation of its Runs runs.
	Spec *scenarios.CurveSpec
	Cols []Column
	Runs int
	Mean *Table
	Std  *Table
}

// Value returns column col of row r of the mean, in dB if db is set.
func (c *Curve) Value(r, col int, db bool) float64 {
	v := c.Mean.Get(r, col)
	if db {
		return Decibel(v)
	}
	return v
}

// UnionColumns returns the columns of every curve, in order of first
// appearance: the metrics of metrics.csv, in its column order.
func UnionColumns(curves []Curve) []Column {
	var union []Column
	seen := map[string]bool{}
	for _, c := range curves {
		for _, col := range c.Cols {
			if !seen[col.Name] {
				seen[col.Name] = true
				union = append(union, col)
			}
		}
	}
	return union
}

// csvHeader lists the CSV columns of cols: each metric, its standard
// deviation across runs, and its dB form for mean-square deviations.
func csvHeader(cols []Column) []string {
	h := []string{"curve", "iteration"}
	for _, c := range cols {
		h = append(h, c.Name, c.Name+"_std")
		if c.Decibel {
			h = append(h, c.Name+"_db")
		}
	}
	return h
}

// WriteMetrics writes metrics.csv: one table whose columns are the union of
// the curves' columns, in order of first appearance. Curves of one plan
// usually share their columns; a curve without some column (a noise-free
// curve has no noise metric, say) leaves its cells empty.
func WriteMetrics(path string, curves []Curve) error {
	union := UnionColumns(curves)
	index := map[string]int{}
	for u, col := range union {
		index[col.Name] = u
	}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	if err := w.Write(csvHeader(union)); err != nil {
		return err
	}
	for _, c := range curves {
		// at[u] is the curve's column of union column u, or -1.
		at := make([]int, len(union))
		for u := range at {
			at[u] = -1
		}
		for k, col := range c.Cols {
			at[index[col.Name]] = k
		}
		for r, it := range c.Mean.Iterations {
			row := []string{c.Spec.Label, strconv.Itoa(it)}
			for u, col := range union {
				k := at[u]
				if k < 0 {
					row = append(row, "", "")
					if col.Decibel {
						row = append(row, "")
					}
					continue
				}
				row = append(row, formatFloat(c.Value(r, k, false)), formatFloat(c.Std.Get(r, k)))
				if col.Decibel {
					row = append(row, decibelCell(c.Value(r, k, false)))
				}
			}
			if err := w.Write(row); err != nil {
				return err
			}
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return err
	}
	return WriteFileAtomic(path, buf.Bytes())
}

// decibelCell writes the dB form of a linear mean-square value v: empty when
// v is finite but not positive (exactly 0 when every agent starts at the same
// model, say), whose logarithm is −∞ or undefined, so that metrics.csv holds
// no -Inf; ±Inf and NaN only where v itself is not finite (a diverged run).
func decibelCell(v float64) string {
	if v <= 0 {
		return ""
	}
	return formatFloat(Decibel(v))
}

// formatFloat writes the shortest representation that reads back exactly.
func formatFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
