//go:build !noasm && !gccgo && !safe

package loss

// dotLanes is the number of partial sums of gonum's floats.Dot: four in
// its amd64 assembly (see smallNorm's comment block in loss.go).
const dotLanes = 4
