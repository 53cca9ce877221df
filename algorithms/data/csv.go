package data

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"

	"maple/internal/fileio"
)

// CSVOptions controls ReadCSV.
type CSVOptions struct {
	// Header skips the first record, a line of column names.
	Header bool
	// Targets says what the first column is (as for LIBSVMOptions).
	Targets Targets
	// Classes bounds class labels when Targets is ClassTargets.
	Classes int
}

// ReadCSV reads a dense labelled dataset, one sample per line: the target
// first, then the features, separated by commas,
//
//	target,x1,x2,...,xM
//
// Every line has the same number of fields; a line starting with '#' is a
// comment, and spaces after a comma are ignored. Samples keep the file's
// order. A line may hold at most 64 MiB (a dense row of about four million
// features), so that an endless one (a file linked to /dev/zero) is an error,
// not a record gathered until memory runs out. Every error names the input
// and line as "name:LINE: what was expected, got what".
func ReadCSV(r io.Reader, name string, opt CSVOptions) (*Set, error) {
	cr := csv.NewReader(fileio.LimitLines(r, defaultMaxLineBytes, name))
	cr.Comment = '#'
	cr.TrimLeadingSpace = true
	cr.ReuseRecord = true
	s := &Set{}
	first := true
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		var pe *csv.ParseError
		switch {
		case errors.As(err, &pe) && errors.Is(pe.Err, csv.ErrFieldCount):
			return nil, fmt.Errorf("%s:%d: expected %d fields like the first line, got %d", name, pe.Line, s.Dim+1, len(rec))
		case errors.As(err, &pe):
			return nil, fmt.Errorf("%s:%d: %v", name, pe.Line, pe.Err)
		case errors.Is(err, fileio.ErrLineTooLong):
			return nil, err // it names the input and line
		case err != nil:
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		line, _ := cr.FieldPos(0)
		if first {
			first = false
			if len(rec) < 2 {
				return nil, fmt.Errorf("%s:%d: expected a target and at least one feature, got %d field(s)", name, line, len(rec))
			}
			s.Dim = len(rec) - 1
			if opt.Header {
				continue
			}
		}
		y, err := parseTarget(rec[0], opt.Targets, opt.Classes)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		for j, f := range rec[1:] {
			x, err := strconv.ParseFloat(f, 64)
			if err != nil && !errors.Is(err, strconv.ErrRange) || math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, fmt.Errorf("%s:%d: expected a finite number in column %d, got %s", name, line, j+2, quote(f))
			}
			s.X = append(s.X, x)
		}
		s.Y = append(s.Y, y)
	}
	if s.Len() == 0 {
		return nil, fmt.Errorf("%s: expected at least one sample, got none", name)
	}
	return s, nil
}
