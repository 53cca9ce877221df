//go:build !race

package data

// raceEnabled reports a -race build (see race_test.go).
const raceEnabled = false
