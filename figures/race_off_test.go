//go:build !race

package figures

// raceEnabled is set when the race detector is on, which makes drawing
// about thirty times slower: the property test then draws fewer cases,
// and the figure of a million points a tenth of them.
const raceEnabled = false
