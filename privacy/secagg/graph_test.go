package secagg

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// Harary graphs: degree k everywhere (k + 1 at one vertex for odd k and odd
// n), symmetric, and k-connected — checked as "removing any k − 1 vertices
// leaves it connected" on small graphs, exhaustively.
func TestHararyGraph(t *testing.T) {
	for _, tc := range []struct{ n, k int }{{6, 2}, {7, 2}, {8, 3}, {9, 3}, {9, 4}, {10, 5}, {11, 6}} {
		g, err := HararyGraph(tc.n, tc.k, rand.New(rand.NewPCG(uint64(tc.n), uint64(tc.k))))
		if err != nil {
			t.Fatal(err)
		}
		extra := 0
		for u := range tc.n {
			switch d := g.Degree(u); {
			case d == tc.k:
			case d == tc.k+1 && tc.k%2 == 1 && tc.n%2 == 1:
				extra++
			default:
				t.Errorf("H(%d,%d): vertex %d has degree %d", tc.k, tc.n, u, d)
			}
			for v := range tc.n {
				if g.Adjacent(u, v) != g.Adjacent(v, u) {
					t.Fatalf("H(%d,%d): asymmetric at %d,%d", tc.k, tc.n, u, v)
				}
			}
			if h := g.Holders(u); !slices.Contains(h, u) || len(h) != g.Degree(u)+1 || !slices.IsSorted(h) {
				t.Errorf("holders of %d: %v", u, h)
			}
		}
		if want := tc.k % 2 * tc.n % 2; extra != want {
			t.Errorf("H(%d,%d): %d vertices of degree k+1, want %d", tc.k, tc.n, extra, want)
		}
		if !connectedAfterRemovingAny(g, tc.k-1) {
			t.Errorf("H(%d,%d) is not %d-connected", tc.k, tc.n, tc.k)
		}
	}
}

func connectedAfterRemovingAny(g *Graph, r int) bool {
	n := g.Clients()
	ok := true
	var rec func(start int, removed []int)
	rec = func(start int, removed []int) {
		if !ok {
			return
		}
		if len(removed) == r {
			ok = connected(g, removed)
			return
		}
		for v := start; v < n; v++ {
			rec(v+1, append(removed, v))
		}
	}
	rec(0, nil)
	return ok
}

func connected(g *Graph, removed []int) bool {
	n := g.Clients()
	seen := make([]bool, n)
	for _, v := range removed {
		seen[v] = true
	}
	start := -1
	for v := range n {
		if !seen[v] {
			start = v
			break
		}
	}
	stack, count := []int{start}, 1
	seen[start] = true
	for len(stack) > 0 {
		u := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for v := range n {
			if !seen[v] && g.Adjacent(u, v) {
				seen[v] = true
				count++
				stack = append(stack, v)
			}
		}
	}
	return count == n-len(removed)
}

// The permutation comes from the stream: the same stream gives the same
// graph, and k = n − 1 is the complete graph.
func TestHararyGraphIsReproducible(t *testing.T) {
	a, _ := HararyGraph(30, 4, rand.New(rand.NewPCG(1, 2)))
	b, _ := HararyGraph(30, 4, rand.New(rand.NewPCG(1, 2)))
	c, _ := HararyGraph(30, 4, rand.New(rand.NewPCG(3, 4)))
	if !slices.Equal(a.Holders(0), b.Holders(0)) {
		t.Error("same stream, different graphs")
	}
	same := true
	for u := range 30 {
		same = same && slices.Equal(a.Holders(u), c.Holders(u))
	}
	if same {
		t.Error("different streams, same graph")
	}
	if g, _ := HararyGraph(5, 4, nil); !g.Complete() {
		t.Error("k = n − 1 is not the complete graph")
	}
	for _, bad := range [][2]int{{1, 1}, {5, 0}, {5, 5}} {
		if _, err := HararyGraph(bad[0], bad[1], rand.New(rand.NewPCG(1, 1))); err == nil {
			t.Errorf("H(%d,%d) accepted", bad[1], bad[0])
		}
	}
}
