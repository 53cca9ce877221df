package topology

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode"

	"gonum.org/v1/gonum/mat"
)

// maxLineBytes bounds one line of an edge-list or matrix file (a 16 MiB row
// holds about a million matrix entries).
const maxLineBytes = 16 << 20

// ParseError reports a malformed edge-list or matrix file. Its message has the
// form "name:LINE: what was expected", or "name: …" when the problem concerns
// the whole file, so that a user can go straight to the offending line.
type ParseError struct {
	Name string // the file name given to the reader
	Line int    // 1-based line number; 0 when no single line is at fault
	Msg  string // what is wrong
}

// Error implements error, as "name:LINE: msg".
func (e *ParseError) Error() string {
	if e.Line == 0 {
		return e.Name + ": " + e.Msg
	}
	return fmt.Sprintf("%s:%d: %s", e.Name, e.Line, e.Msg)
}

// lineReader yields the data lines of a text file, skipping blank lines and
// '#' comments, and splits each into fields separated by whitespace or commas.
type lineReader struct {
	sc   *bufio.Scanner
	name string
	line int    // number of the line last read
	text string // the last data line, without its comment, trimmed
}

func newLineReader(r io.Reader, name string) *lineReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, maxLineBytes)
	return &lineReader{sc: sc, name: name}
}

// next returns the fields of the next data line, or ok = false at the end of
// the input or on a read error (reported by err).
func (l *lineReader) next() (fields []string, ok bool) {
	for l.sc.Scan() {
		l.line++
		text, _, _ := strings.Cut(l.sc.Text(), "#")
		l.text = strings.TrimSpace(text)
		fields = strings.FieldsFunc(l.text, func(c rune) bool { return c == ',' || unicode.IsSpace(c) })
		if len(fields) > 0 {
			return fields, true
		}
	}
	return nil, false
}

// err returns the read error that stopped next, if any, naming the line.
func (l *lineReader) err() error {
	switch err := l.sc.Err(); {
	case err == nil:
		return nil
	case errors.Is(err, bufio.ErrTooLong):
		return &ParseError{Name: l.name, Line: l.line + 1, Msg: fmt.Sprintf("line longer than %d bytes", maxLineBytes)}
	default:
		return &ParseError{Name: l.name, Line: l.line + 1, Msg: err.Error()}
	}
}

// errorf reports a problem with the current line.
func (l *lineReader) errorf(format string, args ...any) error {
	return &ParseError{Name: l.name, Line: l.line, Msg: fmt.Sprintf(format, args...)}
}

// ReadEdgeList reads an undirected graph in the edge-list format, naming the
// input name in errors. Each data line holds one edge "i j": two 0-based node
// ids separated by whitespace and/or a comma. '#' starts a comment that runs to
// the end of the line; blank lines are ignored. The first data line may instead
// be "nodes N", fixing the node count to N (which allows isolated nodes);
// otherwise the node count is the largest id plus one. Self loops, repeated
// edges (in either orientation), negative ids and ids of N or more are errors,
// returned as a *ParseError naming the line. ReadEdgeList never panics.
func ReadEdgeList(r io.Reader, name string) (*Graph, error) {
	lr := newLineReader(r, name)
	declared := 0 // node count of a "nodes N" line, 0 if there is none
	var edges [][2]int
	var lines []int // lines[k] is the line of edges[k]
	n := 0
	for {
		fields, ok := lr.next()
		if !ok {
			break
		}
		if fields[0] == "nodes" {
			if len(edges) > 0 || declared > 0 {
				return nil, lr.errorf(`"nodes N" must come before every edge, and only once`)
			}
			var err error
			if declared, err = parseNodeCount(fields); err != nil {
				return nil, lr.errorf("%v", err)
			}
			n = declared
			continue
		}
		if len(fields) != 2 {
			return nil, lr.errorf(`expected two node ids "i j", got %q`, lr.text)
		}
		var e [2]int
		for k, f := range fields {
			id, err := parseNodeID(f)
			if err != nil {
				return nil, lr.errorf("%v", err)
			}
			e[k] = id
		}
		if declared == 0 {
			n = max(n, e[0]+1, e[1]+1)
		}
		edges = append(edges, e)
		lines = append(lines, lr.line)
	}
	if err := lr.err(); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, &ParseError{Name: name, Msg: `no edges and no "nodes N" line`}
	}
	g, err := NewGraph(n, edges)
	var bad *edgeError
	if errors.As(err, &bad) {
		msg := bad.describe()
		if bad.problem == outOfRange {
			msg += fmt.Sprintf(` (the file declares "nodes %d")`, declared)
		}
		if bad.problem == duplicate {
			msg += fmt.Sprintf(" (first given on line %d)", lines[bad.first])
		}
		return nil, &ParseError{Name: name, Line: lines[bad.index], Msg: msg}
	}
	return g, err
}

// parseNodeCount parses the fields of a "nodes N" line.
func parseNodeCount(fields []string) (int, error) {
	if len(fields) != 2 {
		return 0, fmt.Errorf(`expected "nodes N", got %q`, strings.Join(fields, " "))
	}
	n, err := strconv.Atoi(fields[1])
	if err != nil || n < 1 || n > MaxNodes {
		return 0, fmt.Errorf(`"nodes N" needs an integer N between 1 and %d, got %q`, MaxNodes, fields[1])
	}
	return n, nil
}

// parseNodeID parses one node id of an edge.
func parseNodeID(s string) (int, error) {
	id, err := strconv.Atoi(s)
	switch {
	case err != nil:
		return 0, fmt.Errorf("node id %q is not an integer", s)
	case id < 0:
		return 0, fmt.Errorf("negative node id %d (node ids start at 0)", id)
	case id >= MaxNodes:
		return 0, fmt.Errorf("node id %d is too large (at most %d nodes)", id, MaxNodes)
	}
	return id, nil
}

// ReadMatrix reads a square combination matrix, naming the input name in
// errors. Line m (counting data lines from 0) holds row m, so the entry in
// column p is a_mp, the weight receiver p gives sender m — the layout of
// A.At(m, p). Entries are decimal numbers separated by whitespace and/or
// commas; '#' starts a comment and blank lines are ignored. Non-numbers, NaN,
// infinities, rows of the wrong length and non-square or empty input are
// errors, returned as a *ParseError naming the line, row and column (0-based).
// ReadMatrix only checks the shape: use CheckLeftStochastic and friends for
// the weights themselves. It never panics.
func ReadMatrix(r io.Reader, name string) (*mat.Dense, error) {
	lr := newLineReader(r, name)
	var data []float64
	rows, cols := 0, 0
	for {
		fields, ok := lr.next()
		if !ok {
			break
		}
		switch {
		case rows == 0:
			cols = len(fields)
		case rows == cols:
			return nil, lr.errorf("row %d is one row too many: the rows have %d entries and a combination matrix is square", rows, cols)
		case len(fields) != cols:
			return nil, lr.errorf("row %d has %d entries, expected %d", rows, len(fields), cols)
		}
		for p, f := range fields {
			v, err := parseEntry(f)
			if err != nil {
				return nil, lr.errorf("row %d, column %d: %v", rows, p, err)
			}
			data = append(data, v)
		}
		rows++
	}
	if err := lr.err(); err != nil {
		return nil, err
	}
	if rows == 0 {
		return nil, &ParseError{Name: name, Msg: "no matrix rows (the input is empty or only comments)"}
	}
	if rows != cols {
		return nil, &ParseError{Name: name, Line: lr.line, Msg: fmt.Sprintf(
			"the matrix has %d rows of %d entries; a combination matrix must be square", rows, cols)}
	}
	return mat.NewDense(rows, cols, data), nil
}

// parseEntry parses one finite matrix entry.
func parseEntry(s string) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	switch {
	case errors.Is(err, strconv.ErrRange):
		return 0, fmt.Errorf("%q is out of the float64 range", s)
	case err != nil:
		return 0, fmt.Errorf("%q is not a number", s)
	case math.IsNaN(v) || math.IsInf(v, 0):
		return 0, fmt.Errorf("%q is not a finite number", s)
	}
	return v, nil
}
