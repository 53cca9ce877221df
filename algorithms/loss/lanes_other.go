//go:build !amd64 || noasm || gccgo || safe

package loss

// dotLanes is the number of partial sums of gonum's floats.Dot: one, the
// coordinate order, in its pure-Go version (see smallNorm's comment block in
// loss.go).
const dotLanes = 1
