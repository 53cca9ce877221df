//go:build !race

package cli

// raceEnabled is set when the tests run under the race detector, which
// slows them about tenfold: the longest end-to-end tests then cover a
// sample.
const raceEnabled = false
