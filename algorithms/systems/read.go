package systems

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"maple/internal/fileio"
)

// maxTableAgents bounds the agent indices of the files read here, so that a
// typo cannot allocate unbounded memory.
const maxTableAgents = 1 << 24

// MaxTableBytes bounds the size of a file read here (a step-time table, an
// availability trace): 1 GiB holds a row for each of maxTableAgents agents,
// or tens of windows per agent for a million agents. maxTableLine bounds one
// line: a row is a few numbers, a header a few names.
const (
	MaxTableBytes = 1 << 30
	maxTableLine  = 64 << 10
)

// records reads a CSV of fields columns: '#' starts a comment, spaces after
// commas are ignored, and a first line whose first field is not a number is a
// header. It calls row with each record and its line. Input beyond
// MaxTableBytes, or a line beyond maxTableLine (a file linked to /dev/zero),
// is an error.
func records(r io.Reader, name string, fields int, row func(rec []string, line int) error) error {
	cr := csv.NewReader(fileio.LimitLines(fileio.Limit(r, MaxTableBytes, name), maxTableLine, name))
	cr.Comment = '#'
	cr.TrimLeadingSpace = true
	cr.FieldsPerRecord = fields
	first := true
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		var pe *csv.ParseError
		switch {
		case errors.As(err, &pe) && errors.Is(pe.Err, csv.ErrFieldCount):
			return fmt.Errorf("%s:%d: expected %d comma-separated fields, got %d", name, pe.Line, fields, len(rec))
		case errors.As(err, &pe):
			return fmt.Errorf("%s:%d: %v", name, pe.Line, pe.Err)
		case errors.Is(err, fileio.ErrLineTooLong) || errors.Is(err, fileio.ErrTooLarge):
			return err // it names the input
		case err != nil:
			return fmt.Errorf("%s: %v", name, err)
		}
		line, _ := cr.FieldPos(0)
		if first {
			first = false
			if _, err := strconv.Atoi(strings.TrimSpace(rec[0])); err != nil {
				continue // a header
			}
		}
		if err := row(rec, line); err != nil {
			return fmt.Errorf("%s:%d: %v", name, line, err)
		}
	}
}

func parseAgent(s string, agents int) (int, error) {
	k, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || k < 0 || k >= min(agents, maxTableAgents) {
		return 0, fmt.Errorf("agent %q is not an agent index in [0, %d)", s, agents)
	}
	return k, nil
}

func parseSeconds(s, what string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || !(v >= 0) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%s %q is not a non-negative number of seconds", what, s)
	}
	return v, nil
}

// ReadStepTable reads a compute-time table: one agent,seconds row per agent
// 0…agents−1, in any order, optionally after a header line. Every error
// names the input and line.
func ReadStepTable(r io.Reader, name string, agents int) ([]float64, error) {
	table := make([]float64, agents)
	seen := make([]bool, agents)
	err := records(r, name, 2, func(rec []string, _ int) error {
		k, err := parseAgent(rec[0], agents)
		if err != nil {
			return err
		}
		if seen[k] {
			return fmt.Errorf("agent %d is listed twice", k)
		}
		if table[k], err = parseSeconds(rec[1], "time"); err != nil {
			return err
		}
		seen[k] = true
		return nil
	})
	if err != nil {
		return nil, err
	}
	for k, ok := range seen {
		if !ok {
			return nil, fmt.Errorf("%s: agent %d has no compute time (every agent 0…%d needs a row)", name, k, agents-1)
		}
	}
	return table, nil
}

// ReadAvailability reads an availability trace: agent,from,to rows, each a
// window of virtual seconds in which the agent is available. Agents may have
// several windows; agents not listed are always available.
func ReadAvailability(r io.Reader, name string, agents int) (map[int][]Window, error) {
	out := map[int][]Window{}
	err := records(r, name, 3, func(rec []string, _ int) error {
		k, err := parseAgent(rec[0], agents)
		if err != nil {
			return err
		}
		from, err := parseSeconds(rec[1], "from")
		if err != nil {
			return err
		}
		to, err := parseSeconds(rec[2], "to")
		if err != nil {
			return err
		}
		if to < from {
			return fmt.Errorf("window [%v, %v] ends before it starts", from, to)
		}
		out[k] = append(out[k], Window{From: from, To: to})
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, ws := range out {
		sort.Slice(ws, func(i, j int) bool { return ws[i].From < ws[j].From })
	}
	return out, nil
}
