package data

import (
	"io"
	"strings"
	"testing"
)

// A CSV file reads as is: the samples in file order, the first column as the
// target, comments and a header skipped.
func TestReadCSV(t *testing.T) {
	in := "y,a,b\n# a comment\n2, 0.5, -1\n0,3,4\n"
	s, err := ReadCSV(strings.NewReader(in), "agent.csv", CSVOptions{Header: true, Targets: ClassTargets, Classes: 3})
	if err != nil {
		t.Fatal(err)
	}
	if s.Dim != 2 || s.Len() != 2 || s.Y[0] != 2 || s.Y[1] != 0 || s.X[1] != -1 || s.X[3] != 4 {
		t.Errorf("got %+v", s)
	}
	real, err := ReadCSV(strings.NewReader("-0.25,1\n1e3,2\n"), "r.csv", CSVOptions{Targets: RealTargets})
	if err != nil || real.Y[0] != -0.25 || real.Y[1] != 1000 {
		t.Errorf("real targets: %v, %v", real, err)
	}
}

func TestReadCSVErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"1,2\n3\n", "a.csv:2: expected 2 fields like the first line, got 1"},
		{"1,2\n1,x\n", `a.csv:2: expected a finite number in column 2, got "x"`},
		{"1,2\n5,1\n", `a.csv:2: expected a class label 0…2, got "5"`},
		{"1\n", "a.csv:1: expected a target and at least one feature"},
		{"# only a comment\n", "a.csv: expected at least one sample"},
		{"1,\"2\n", "a.csv:1:"},
	} {
		_, err := ReadCSV(strings.NewReader(c.in), "a.csv", CSVOptions{Targets: ClassTargets, Classes: 3})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: err = %v, want %q", c.in, err, c.want)
		}
	}
}

// LIBSVM files with real targets (regression) or class indices (multi-class
// files such as mnist.scale) read with the Targets option; the default stays
// ±1 labels.
func TestLIBSVMTargets(t *testing.T) {
	s, err := ReadLIBSVM(strings.NewReader("-2.5 1:1\n0.75 2:3\n"), "r.svm", LIBSVMOptions{Targets: RealTargets})
	if err != nil || s.Y[0] != -2.5 || s.Y[1] != 0.75 {
		t.Errorf("real targets: %v, %v", s, err)
	}
	s, err = ReadLIBSVM(strings.NewReader("9 1:1\n0 2:3\n"), "c.svm", LIBSVMOptions{Targets: ClassTargets, Classes: 10})
	if err != nil || s.Y[0] != 9 || s.Y[1] != 0 {
		t.Errorf("class targets: %v, %v", s, err)
	}
	if _, err := ReadLIBSVM(strings.NewReader("1 1:1\n10 1:1\n"), "c.svm", LIBSVMOptions{Targets: ClassTargets, Classes: 10}); err == nil ||
		!strings.Contains(err.Error(), `c.svm:2: expected a class label 0…9, got "10"`) {
		t.Errorf("class out of range: err = %v", err)
	}
	if _, err := ReadLIBSVM(strings.NewReader("0.5 1:1\n"), "b.svm", LIBSVMOptions{}); err == nil {
		t.Error("a real target was accepted as a binary label")
	}
}

// zeros is n NUL bytes without a newline: what a file linked to /dev/zero
// gives, cut short so that a reader without a line bound still ends.
func zeros(n int64) io.Reader { return io.LimitReader(zeroReader{}, n) }

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// An agent file linked to /dev/zero is one endless line: refused at the
// line bound (64 MiB), not gathered as one CSV record until memory runs out.
func TestReadCSVRefusesAnEndlessLine(t *testing.T) {
	_, err := ReadCSV(zeros(80<<20), "agent-3.csv", CSVOptions{})
	if err == nil || err.Error() != "agent-3.csv:1: line longer than 67108864 bytes" {
		t.Errorf("ReadCSV(zeros): %v", err)
	}
}
