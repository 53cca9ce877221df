package systems

import (
	"io"
	"strings"
	"testing"
)

func TestReadStepTableAndAvailability(t *testing.T) {
	table, err := ReadStepTable(strings.NewReader("agent,seconds\n1, 0.5\n# comment\n0,2\n"), "steps.csv", 2)
	if err != nil || len(table) != 2 || table[0] != 2 || table[1] != 0.5 {
		t.Errorf("ReadStepTable = %v, %v", table, err)
	}
	if _, err := ReadStepTable(strings.NewReader("0,1\n"), "steps.csv", 2); err == nil || !strings.Contains(err.Error(), "steps.csv: agent 1 has no compute time") {
		t.Errorf("missing agent: %v", err)
	}
	avail, err := ReadAvailability(strings.NewReader("1,5,6\n1,0,2\n"), "avail.csv", 3)
	if err != nil || len(avail[1]) != 2 || avail[1][0] != (Window{0, 2}) || avail[1][1] != (Window{5, 6}) {
		t.Errorf("ReadAvailability = %v, %v", avail, err)
	}
}

// zeros is n NUL bytes without a newline: what a file linked to /dev/zero
// gives, cut short so that a reader without a line bound still ends.
func zeros(n int64) io.Reader { return io.LimitReader(zeroReader{}, n) }

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// A table linked to /dev/zero is one endless line: refused once the line
// exceeds its bound, instead of gathered as one CSV record until memory
// runs out.
func TestTablesRefuseAnEndlessLine(t *testing.T) {
	const n = 100 << 20 // far beyond the line bound; a reader without one gathers it all
	if _, err := ReadStepTable(zeros(n), "/dev/zero", 4); err == nil || err.Error() != "/dev/zero:1: line longer than 65536 bytes" {
		t.Errorf("ReadStepTable(zeros): %v", err)
	}
	if _, err := ReadAvailability(zeros(n), "/dev/zero", 4); err == nil || err.Error() != "/dev/zero:1: line longer than 65536 bytes" {
		t.Errorf("ReadAvailability(zeros): %v", err)
	}
}
