package rundir

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"maple/internal/fileio"
)

// metricsFile is metrics.csv as read: its curves, the line of each of their
// rows, and its header.
type metricsFile struct {
	path   string
	curves []CurveMetrics
	// lines[i][k] is the line of row k of curve i.
	lines [][]int
	// header is the last header, on line headerLine, of headers.
	header     []string
	headerLine int
	headers    int
}

// ReadMetrics parses metrics.csv: one table whose columns are the union of
// the curves' (maple before that wrote blocks of rows per curve, each
// possibly preceded by its own header, which reads the same). A curve has the
// metrics whose cells it fills: a metric left empty on every row of the curve
// is not one of its columns.
//
// It refuses, naming the file and the line, what WriteMetrics does not
// write: a file that does not end with a line end (cut in the middle of a
// row), a first line other than the header curve,iteration,…, a row with
// another number of fields than the header, a row without a label, an
// iteration other than a whole number ≥ 0, a curve whose rows do not start
// at iteration 0, increase, and lie every so many iterations but for the
// last, a curve whose rows resume after another's, and a cell other than
// empty, a decimal number, NaN, +Inf or -Inf (strconv's spelling, which a
// diverged run writes).
func ReadMetrics(path string) ([]CurveMetrics, error) {
	mf, err := readMetrics(path)
	if err != nil {
		return nil, err
	}
	return mf.curves, nil
}

// readMetrics is ReadMetrics, keeping the lines and the header.
func readMetrics(path string) (*metricsFile, error) {
	f, err := fileio.Open(path, maxMetricsBytes)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if f.Size() == 0 {
		return nil, fmt.Errorf("%s: empty: maple run writes a header and a row per curve and recorded iteration", path)
	}
	var end [1]byte
	if _, err := f.ReadAt(end[:], f.Size()-1); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	cut := func(line int) error {
		return fmt.Errorf("%s:%d: the row is cut short: the file ends inside it, where maple ends every row with a line end", path, line)
	}
	cr := csv.NewReader(fileio.LimitLines(f, maxMetricsLine, path))
	cr.FieldsPerRecord = -1
	// The rows are read first, so that a file cut short is reported as such
	// rather than by what its last row then lacks.
	var rows [][]string
	var lines []int
	for {
		row, err := cr.Read()
		if err == io.EOF {
			break
		}
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			if end[0] != '\n' {
				return nil, cut(pe.StartLine)
			}
			return nil, fmt.Errorf("%s:%d: %v", path, pe.Line, pe.Err)
		}
		if err != nil {
			return nil, err // LimitLines names the file and the line
		}
		line, _ := cr.FieldPos(0)
		rows, lines = append(rows, row), append(lines, line)
	}
	if end[0] != '\n' {
		line := 1
		if len(lines) > 0 {
			line = lines[len(lines)-1]
		}
		return nil, cut(line)
	}
	mf := &metricsFile{path: path}
	var filled []map[string]bool // per curve, the columns with a non-empty cell
	afterHeader := false
	for r, row := range rows {
		line := lines[r]
		if len(row) >= 2 && row[0] == "curve" && row[1] == "iteration" {
			if err := checkHeader(row); err != nil {
				return nil, fmt.Errorf("%s:%d: %v", path, line, err)
			}
			mf.header, mf.headerLine, afterHeader = row, line, true
			mf.headers++
			continue
		}
		if mf.header == nil {
			return nil, fmt.Errorf("%s:%d: no header: maple run writes curve,iteration,… on the first line", path, line)
		}
		if len(row) != len(mf.header) {
			return nil, fmt.Errorf("%s:%d: %d fields, header has %d", path, line, len(row), len(mf.header))
		}
		label := row[0]
		if label == "" {
			return nil, fmt.Errorf("%s:%d: a row without a curve label", path, line)
		}
		it, err := strconv.Atoi(row[1])
		if err != nil || it < 0 || strconv.Itoa(it) != row[1] {
			return nil, fmt.Errorf("%s:%d: iteration %q: maple writes a whole number ≥ 0", path, line, row[1])
		}
		n := len(mf.curves)
		if n == 0 || mf.curves[n-1].Label != label {
			if k := slices.IndexFunc(mf.curves, func(c CurveMetrics) bool { return c.Label == label }); k >= 0 {
				return nil, fmt.Errorf("%s:%d: rows of curve %q again, after those of curve %q: maple writes each curve's rows together", path, line, label, mf.curves[n-1].Label)
			}
			if it != 0 {
				return nil, fmt.Errorf("%s:%d: curve %q starts at iteration %d: maple records iteration 0 first", path, line, label, it)
			}
			c := CurveMetrics{Label: label, Columns: map[string][]float64{}}
			for _, h := range mf.header[2:] {
				if !strings.HasSuffix(h, "_db") && !strings.HasSuffix(h, "_std") {
					c.Order = append(c.Order, h)
				}
			}
			mf.curves, mf.lines = append(mf.curves, c), append(mf.lines, nil)
			filled = append(filled, map[string]bool{})
			n++
		} else if afterHeader {
			return nil, fmt.Errorf("%s:%d: a header inside the rows of curve %q", path, mf.headerLine, label)
		} else if err := nextIteration(mf.curves[n-1].Iterations, it); err != nil {
			return nil, fmt.Errorf("%s:%d: curve %q: %v", path, line, label, err)
		}
		afterHeader = false
		c := &mf.curves[n-1]
		c.Iterations = append(c.Iterations, float64(it))
		mf.lines[n-1] = append(mf.lines[n-1], line)
		for i, h := range mf.header[2:] {
			v, ok := parseCell(row[i+2])
			if !ok {
				return nil, fmt.Errorf("%s:%d: %s: %q is not a number as maple writes one (a decimal number, NaN, +Inf or -Inf, or nothing)", path, line, h, row[i+2])
			}
			c.Columns[h] = append(c.Columns[h], v)
			if row[i+2] != "" {
				filled[n-1][h] = true
			}
		}
	}
	if len(mf.curves) == 0 {
		return nil, fmt.Errorf("%s: no rows: maple run writes a row per curve and recorded iteration", path)
	}
	for i := range mf.curves {
		c := &mf.curves[i]
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
	return mf, nil
}

// checkHeader checks a header row: curve, iteration, then distinct,
// non-empty column names.
func checkHeader(row []string) error {
	for i, h := range row[2:] {
		if h == "" || slices.Contains(row[:i+2], h) {
			return fmt.Errorf("the header's column %d, %q, is empty or repeated", i+3, h)
		}
	}
	return nil
}

// nextIteration checks that iteration it may follow a curve's recorded
// iterations its (at least one): maple records 0, every, 2·every, … and the
// last iteration, so it is greater than the last one, and the last one,
// which it makes an inner row, is a multiple of the interval its first two
// rows set.
func nextIteration(its []float64, it int) error {
	last := int(its[len(its)-1])
	if it <= last {
		return fmt.Errorf("iteration %d after %d: maple writes a curve's iterations in increasing order", it, last)
	}
	if k := len(its) - 1; k >= 2 {
		if every := int(its[1]); last != k*every {
			return fmt.Errorf("iteration %d follows iteration %d, which is not %d·%d: maple records every so many iterations, and the last", it, last, k, every)
		}
	}
	return nil
}

// parseCell reads a cell of metrics.csv as WriteMetrics writes it: empty
// (NaN: a column the curve lacks, or the dB of a non-positive value), a
// decimal number, or NaN, +Inf or -Inf (a run that diverged, or a standard
// deviation of one run).
func parseCell(s string) (float64, bool) {
	switch s {
	case "", "NaN":
		return math.NaN(), true
	case "+Inf":
		return math.Inf(1), true
	case "-Inf":
		return math.Inf(-1), true
	}
	if !isDecimal(s) {
		return 0, false
	}
	v, err := strconv.ParseFloat(s, 64)
	return v, err == nil
}

// isDecimal reports whether s is a decimal number: an optional sign, digits
// with at most one point (at least one digit), and an optional exponent.
func isDecimal(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits, point := 0, false
mantissa:
	for ; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '.' && !point:
			point = true
		default:
			break mantissa
		}
	}
	if digits == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == start {
			return false
		}
	}
	return i == len(s)
}
