package topology

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"gonum.org/v1/gonum/mat"
)

// formatEdgeList writes g in the edge-list format, with a "nodes N" line so
// that isolated nodes survive.
func formatEdgeList(g *Graph) string {
	var b strings.Builder
	fmt.Fprintf(&b, "nodes %d\n", g.Len())
	for _, e := range g.Edges() {
		fmt.Fprintf(&b, "%d %d\n", e[0], e[1])
	}
	return b.String()
}

// formatMatrix writes A in the matrix format with the shortest decimal that
// parses back to the same float64.
func formatMatrix(A mat.Matrix) string {
	var b strings.Builder
	r, c := A.Dims()
	for m := range r {
		for p := range c {
			if p > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(strconv.FormatFloat(A.At(m, p), 'g', -1, 64))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func TestReadEdgeList(t *testing.T) {
	tests := []struct {
		name  string
		input string
		nodes int
		edges [][2]int
	}{
		{"plain", "0 1\n1 2\n", 3, [][2]int{{0, 1}, {1, 2}}},
		{"commas, comments, CRLF, reversed", "# ring\r\n\r\n2,0  # closing edge\r\n0, 1\r\n1\t2\r\n", 3,
			[][2]int{{0, 1}, {0, 2}, {1, 2}}},
		{"nodes line keeps isolated nodes", "# header\nnodes 5\n0 3\n", 5, [][2]int{{0, 3}}},
		{"nodes only", "nodes 1\n", 1, nil},
		{"no final newline", "0 1", 2, [][2]int{{0, 1}}},
	}
	for _, tt := range tests {
		g, err := ReadEdgeList(strings.NewReader(tt.input), "edges.txt")
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if g.Len() != tt.nodes || !slices.Equal(g.Edges(), tt.edges) {
			t.Errorf("%s: got %d nodes %v, want %d nodes %v", tt.name, g.Len(), g.Edges(), tt.nodes, tt.edges)
		}
	}
}

func TestReadEdgeListErrors(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  string
	}{
		{"one id", "0 1\n1 2\n# c\n3\n", `edges.txt:4: expected two node ids "i j", got "3"`},
		{"three ids", "0 1 2\n", `edges.txt:1: expected two node ids "i j", got "0 1 2"`},
		{"not an integer", "0 1\n1 x\n", `edges.txt:2: node id "x" is not an integer`},
		{"float id", "0 1.5\n", `edges.txt:1: node id "1.5" is not an integer`},
		{"negative", "\n0 -1\n", "edges.txt:2: negative node id -1"},
		{"too large", "0 99999999999999999999\n", `edges.txt:1: node id "99999999999999999999" is not an integer`},
		{"above limit", fmt.Sprintf("0 %d\n", MaxNodes), fmt.Sprintf("edges.txt:1: node id %d is too large", MaxNodes)},
		{"self loop", "0 1\n2 2\n", "edges.txt:2: self loop 2 2"},
		{"duplicate", "0 1\n1 2\n\n1 0\n", "edges.txt:4: duplicate edge 1 0 (first given on line 1)"},
		{"outside declared", "nodes 3\n0 1\n1 3\n", `edges.txt:3: edge 1 3: node 3 is outside [0, 3) (the file declares "nodes 3")`},
		{"late nodes line", "0 1\nnodes 3\n", `edges.txt:2: "nodes N" must come before every edge`},
		{"nodes twice", "nodes 3\nnodes 3\n", `edges.txt:2: "nodes N" must come before every edge, and only once`},
		{"nodes zero", "nodes 0\n", `edges.txt:1: "nodes N" needs an integer N between 1 and`},
		{"nodes words", "nodes a lot\n", `edges.txt:1: expected "nodes N", got "nodes a lot"`},
		{"empty", "", `edges.txt: no edges and no "nodes N" line`},
		{"only comments", "# nothing\n\n", `edges.txt: no edges and no "nodes N" line`},
		{"huge line", "0 " + strings.Repeat("1", maxLineBytes+1), "edges.txt:1: line longer than"},
	}
	for _, tt := range tests {
		g, err := ReadEdgeList(strings.NewReader(tt.input), "edges.txt")
		if err == nil {
			t.Errorf("%s: accepted, got %v", tt.name, g.Edges())
			continue
		}
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Name != "edges.txt" {
			t.Errorf("%s: error %v is not a *ParseError for edges.txt", tt.name, err)
		}
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error\n\t%q\ndoes not contain\n\t%q", tt.name, err, tt.want)
		}
	}
}

func TestReadersReportReadErrors(t *testing.T) {
	broken := iotest.ErrReader(errors.New("disk on fire"))
	if _, err := ReadEdgeList(broken, "edges.txt"); err == nil || !strings.Contains(err.Error(), "edges.txt:1: disk on fire") {
		t.Errorf("ReadEdgeList: error %v, want the read error at line 1", err)
	}
	if _, err := ReadMatrix(broken, "A.txt"); err == nil || !strings.Contains(err.Error(), "A.txt:1: disk on fire") {
		t.Errorf("ReadMatrix: error %v, want the read error at line 1", err)
	}
}

func TestReadMatrix(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  []float64
	}{
		{"whitespace", "0.5 0.5\n0.5 0.5\n", []float64{0.5, 0.5, 0.5, 0.5}},
		{"commas and comments", "# A[m][p]\n1, 0.25 # row 0\n\n0 , 0.75\n", []float64{1, 0.25, 0, 0.75}},
		{"exponents and CRLF", "1e0\t-0\r\n2.5E-1 0x1p-2\r\n", []float64{1, 0, 0.25, 0.25}},
		{"single", "1\n", []float64{1}},
	}
	for _, tt := range tests {
		A, err := ReadMatrix(strings.NewReader(tt.input), "A.txt")
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		n := int(math.Sqrt(float64(len(tt.want))))
		if want := mat.NewDense(n, n, tt.want); !mat.Equal(A, want) {
			t.Errorf("%s: got\n%v\nwant\n%v", tt.name, mat.Formatted(A), mat.Formatted(want))
		}
	}
}

func TestReadMatrixErrors(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  string
	}{
		{"not a number", "1 0\n0 one\n", `A.txt:2: row 1, column 1: "one" is not a number`},
		{"NaN", "NaN 0\n0 1\n", `A.txt:1: row 0, column 0: "NaN" is not a finite number`},
		{"Inf", "1 0\n# c\n-Inf 1\n", `A.txt:3: row 1, column 0: "-Inf" is not a finite number`},
		{"overflow", "1e400\n", `A.txt:1: row 0, column 0: "1e400" is out of the float64 range`},
		{"ragged", "1 0 0 0 0\n0 1 0 0 0\n0 0 1 0 0\n0 0 0 1\n", "A.txt:4: row 3 has 4 entries, expected 5"},
		{"too many rows", "1 0\n0 1\n0 0\n", "A.txt:3: row 2 is one row too many"},
		{"too few rows", "1 0 0\n0 1 0\n# end\n", "A.txt:3: the matrix has 2 rows of 3 entries; a combination matrix must be square"},
		{"empty", "", "A.txt: no matrix rows"},
		{"only comments", "# A\n\n   \n", "A.txt: no matrix rows"},
	}
	for _, tt := range tests {
		A, err := ReadMatrix(strings.NewReader(tt.input), "A.txt")
		if err == nil {
			t.Errorf("%s: accepted\n%v", tt.name, mat.Formatted(A))
			continue
		}
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Name != "A.txt" {
			t.Errorf("%s: error %v is not a *ParseError for A.txt", tt.name, err)
		}
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error\n\t%q\ndoes not contain\n\t%q", tt.name, err, tt.want)
		}
	}
}

func TestGeneratedGraphsRoundTrip(t *testing.T) {
	graphs := testGraphs(t)
	for _, name := range sortedKeys(graphs) {
		g := graphs[name]
		back, err := ReadEdgeList(strings.NewReader(formatEdgeList(g)), name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if back.Len() != g.Len() || !slices.Equal(back.Edges(), g.Edges()) {
			t.Errorf("%s: the graph changed on a round trip", name)
		}
		A := Averaging(g)
		B, err := ReadMatrix(strings.NewReader(formatMatrix(A)), name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !mat.Equal(A, B) { // shortest round-trip formatting is exact
			t.Errorf("%s: the matrix changed on a round trip", name)
		}
	}
}

func FuzzReadEdgeList(f *testing.F) {
	for _, seed := range []string{
		"0 1\n1 2\n", "nodes 4\n0 3\n", "# c\n2,0\r\n0, 1 # x\n", "0 0\n", "0 1\n1 0\n",
		"nodes 2\n0 5\n", "-1 2\n", "3\n", "nodes 0\n", "", "1 +2\n", "nodes 1\nnodes 1\n",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, input string) {
		g, err := ReadEdgeList(strings.NewReader(input), "fuzz.txt")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.txt:") {
				t.Fatalf("error %q does not start with the file name", err)
			}
			return
		}
		text := formatEdgeList(g)
		back, err := ReadEdgeList(strings.NewReader(text), "again.txt")
		if err != nil {
			t.Fatalf("accepted graph does not read back: %v\n%s", err, text)
		}
		if back.Len() != g.Len() || !slices.Equal(back.Edges(), g.Edges()) {
			t.Fatalf("graph changed on a round trip:\n%s", text)
		}
		for p := range g.Len() {
			nb := g.Neighbors(p)
			if !slices.IsSorted(nb) || slices.Contains(nb, p) {
				t.Fatalf("Neighbors(%d) = %v is unsorted or contains %d", p, nb, p)
			}
		}
	})
}

func FuzzReadMatrix(f *testing.F) {
	for _, seed := range []string{
		"0.5 0.5\n0.5 0.5\n", "1\n", "# c\n1, 0\r\n0 1 # x\n", "1 0\n0\n", "NaN\n", "1e400\n",
		"1 0\n0 1\n0 0\n", "", "0x1p-2 -0\n1 1\n", "inf 1\n1 1\n",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, input string) {
		A, err := ReadMatrix(strings.NewReader(input), "fuzz.txt")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.txt:") {
				t.Fatalf("error %q does not start with the file name", err)
			}
			return
		}
		r, c := A.Dims()
		if r != c || r == 0 {
			t.Fatalf("accepted a %d×%d matrix", r, c)
		}
		for _, v := range A.RawMatrix().Data {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("accepted a non-finite entry %g", v)
			}
		}
		text := formatMatrix(A)
		back, err := ReadMatrix(strings.NewReader(text), "again.txt")
		if err != nil {
			t.Fatalf("accepted matrix does not read back: %v\n%s", err, text)
		}
		if !mat.Equal(A, back) {
			t.Fatalf("matrix changed on a round trip:\n%s", text)
		}
	})
}
