package rundir

import (
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"maple/internal/fileio"
	"maple/scenarios"
)

// Run is a run directory as read back: what maple run wrote into it.
type Run struct {
	// Dir is the directory's path.
	Dir string
	// Scenario is the resolved scenario.yaml, Hash its SHA-256 in
	// hexadecimal and Output its output section.
	Scenario []byte
	Hash     string
	Output   scenarios.Output
	// Summary is summary.json (Numbers written as null read as NaN).
	Summary Summary
	// Metrics are the curves of metrics.csv, in file order.
	Metrics []CurveMetrics
	// Provenance is provenance.json, nil for runs that did not record it.
	Provenance *Provenance
}

// CurveMetrics is one curve's block of metrics.csv.
type CurveMetrics struct {
	// Label names the curve and Iterations are its recorded iterations.
	Label      string
	Iterations []float64
	// Columns holds the cells by CSV column name (empty cells are NaN).
	Columns map[string][]float64
	// Order lists the metric names (without _db, _std), in CSV order.
	Order []string
}

// The largest files of a run directory Read takes. maple writes far smaller
// ones; the bounds stop a file that is not what maple wrote (a link to
// /dev/zero, a file grown by mistake) from being read without end. Every
// file must also be a regular file (fileio): a named pipe or a device is
// refused without being read.
const (
	maxScenarioBytes   = 64 << 20  // the resolved scenario (its source is at most 1 MiB)
	maxSummaryBytes    = 256 << 20 // every curve's summary, w^o and the graph facts included
	maxMetricsBytes    = 1 << 30   // the metrics of every curve
	maxMetricsLine     = 1 << 20   // one row of metrics.csv
	maxProvenanceBytes = 1 << 20
)

// Read reads the run directory dir.
func Read(dir string) (*Run, error) {
	r := &Run{Dir: dir}
	var err error
	if r.Scenario, err = fileio.ReadFile(filepath.Join(dir, ScenarioFile), maxScenarioBytes); err != nil {
		return nil, fmt.Errorf("%s is not a run directory: %w", dir, err)
	}
	sum := sha256.Sum256(r.Scenario)
	r.Hash = hex.EncodeToString(sum[:])
	var sc struct {
		Output scenarios.Output `yaml:"output"`
	}
	if err := yaml.Unmarshal(r.Scenario, &sc); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, ScenarioFile), err)
	}
	r.Output = sc.Output
	js, err := fileio.ReadFile(filepath.Join(dir, SummaryFile), maxSummaryBytes)
	if err != nil {
		return nil, fmt.Errorf("%s is not a complete run directory: %w", dir, err)
	}
	if err := json.Unmarshal(js, &r.Summary); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, SummaryFile), err)
	}
	if r.Metrics, err = ReadMetrics(filepath.Join(dir, MetricsFile)); err != nil {
		return nil, err
	}
	if js, err := fileio.ReadFile(filepath.Join(dir, ProvenanceFile), maxProvenanceBytes); err == nil {
		r.Provenance = &Provenance{}
		if err := json.Unmarshal(js, r.Provenance); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(dir, ProvenanceFile), err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	return r, nil
}

// ReadMetrics parses metrics.csv: one table whose columns are the union of
// the curves' (maple before that wrote blocks of rows per curve, each
// possibly preceded by its own header, which reads the same). A curve has the
// metrics whose cells it fills: a metric left empty on every row of the curve
// is not one of its columns.
func ReadMetrics(path string) ([]CurveMetrics, error) {
	f, err := fileio.Open(path, maxMetricsBytes)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cr := csv.NewReader(fileio.LimitLines(f, maxMetricsLine, path))
	cr.FieldsPerRecord = -1
	rows, err := cr.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var curves []CurveMetrics
	var filled []map[string]bool // per curve, the columns with a non-empty cell
	var header []string
	for n, row := range rows {
		if len(row) >= 2 && row[0] == "curve" && row[1] == "iteration" {
			header = row
			continue
		}
		if header == nil || len(row) != len(header) {
			return nil, fmt.Errorf("%s:%d: %d fields, header has %d", path, n+1, len(row), len(header))
		}
		if len(curves) == 0 || curves[len(curves)-1].Label != row[0] {
			c := CurveMetrics{Label: row[0], Columns: map[string][]float64{}}
			for _, h := range header[2:] {
				if !strings.HasSuffix(h, "_db") && !strings.HasSuffix(h, "_std") {
					c.Order = append(c.Order, h)
				}
			}
			curves = append(curves, c)
			filled = append(filled, map[string]bool{})
		}
		c := &curves[len(curves)-1]
		it, err := strconv.ParseFloat(row[1], 64)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: iteration %q", path, n+1, row[1])
		}
		c.Iterations = append(c.Iterations, it)
		for i, h := range header[2:] {
			v, err := strconv.ParseFloat(row[i+2], 64)
			if err != nil {
				v = math.NaN()
			}
			c.Columns[h] = append(c.Columns[h], v)
			if row[i+2] != "" {
				filled[len(curves)-1][h] = true
			}
		}
	}
	for i := range curves {
		c := &curves[i]
		c.Order = slices.DeleteFunc(c.Order, func(m string) bool {
			if filled[i][m] {
				return false
			}
			for _, suffix := range []string{"", "_std", "_db", "_db_std"} {
				delete(c.Columns, m+suffix)
			}
			return true
		})
	}
	return curves, nil
}

// MetricNames returns the metrics of every curve, in order of first
// appearance.
func (r *Run) MetricNames() []string {
	var names []string
	for _, c := range r.Metrics {
		for _, m := range c.Order {
			if !slices.Contains(names, m) {
				names = append(names, m)
			}
		}
	}
	return names
}
