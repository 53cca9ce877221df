package topology

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestNewGraphSortsNeighboursAndEdges(t *testing.T) {
	// A path 0–1–2–3 plus the chord 3–0, given in scrambled order and orientation.
	g, err := NewGraph(5, [][2]int{{3, 2}, {1, 0}, {0, 3}, {2, 1}})
	if err != nil {
		t.Fatal(err)
	}
	if g.Len() != 5 {
		t.Errorf("Len = %d, want 5", g.Len())
	}
	wantNeighbors := [][]int{{1, 3}, {0, 2}, {1, 3}, {0, 2}, nil}
	for p, want := range wantNeighbors {
		if got := g.Neighbors(p); !slices.Equal(got, want) {
			t.Errorf("Neighbors(%d) = %v, want %v", p, got, want)
		}
		if g.Degree(p) != len(want) {
			t.Errorf("Degree(%d) = %d, want %d", p, g.Degree(p), len(want))
		}
	}
	wantEdges := [][2]int{{0, 1}, {0, 3}, {1, 2}, {2, 3}}
	if got := g.Edges(); !slices.Equal(got, wantEdges) {
		t.Errorf("Edges = %v, want %v", got, wantEdges)
	}
	if g.MinDegree() != 0 {
		t.Errorf("MinDegree = %d, want 0 (node 4 is isolated)", g.MinDegree())
	}
	if g.Connected() {
		t.Error("Connected = true with isolated node 4")
	}
}

func TestNeighborsReturnsACopy(t *testing.T) {
	g, err := NewGraph(3, [][2]int{{0, 1}, {1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	nb := g.Neighbors(1)
	nb[0] = 99
	if got := g.Neighbors(1); !slices.Equal(got, []int{0, 2}) {
		t.Errorf("modifying the returned slice changed the graph: Neighbors(1) = %v", got)
	}
}

func TestConnected(t *testing.T) {
	tests := []struct {
		name  string
		n     int
		edges [][2]int
		want  bool
	}{
		{"single node", 1, nil, true},
		{"two isolated nodes", 2, nil, false},
		{"path", 4, [][2]int{{0, 1}, {1, 2}, {2, 3}}, true},
		{"two components", 4, [][2]int{{0, 1}, {2, 3}}, false},
	}
	for _, tt := range tests {
		g, err := NewGraph(tt.n, tt.edges)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got := g.Connected(); got != tt.want {
			t.Errorf("%s: Connected = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestNewGraphRejectsInvalidInput(t *testing.T) {
	tests := []struct {
		name  string
		n     int
		edges [][2]int
		want  string
	}{
		{"no nodes", 0, nil, "between 1 and"},
		{"too many nodes", MaxNodes + 1, nil, "between 1 and"},
		{"self loop", 3, [][2]int{{0, 1}, {2, 2}}, "edge #1: self loop 2 2"},
		{"id too large", 3, [][2]int{{0, 3}}, "edge #0: edge 0 3: node 3 is outside [0, 3)"},
		{"negative id", 3, [][2]int{{-1, 2}}, "node -1 is outside [0, 3)"},
		{"duplicate reversed", 3, [][2]int{{0, 1}, {1, 2}, {1, 0}}, "edge #2: duplicate edge 1 0 (same as edge #0)"},
	}
	for _, tt := range tests {
		g, err := NewGraph(tt.n, tt.edges)
		if err == nil || g != nil {
			t.Errorf("%s: NewGraph returned (%v, %v), want an error", tt.name, g, err)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %q does not contain %q", tt.name, err, tt.want)
		}
	}
}

func TestEdgeErrorIsTyped(t *testing.T) {
	_, err := NewGraph(2, [][2]int{{0, 0}})
	var ee *edgeError
	if !errors.As(err, &ee) || ee.problem != selfLoop || ee.index != 0 {
		t.Errorf("error %v is not an *edgeError for the self loop at index 0", err)
	}
}
