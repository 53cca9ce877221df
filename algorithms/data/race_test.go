//go:build race

package data

// raceEnabled reports a -race build, under which sync.Pool drops a random
// share of the values put back (by design, to expose misuse) — the
// generators' recycled streams among them — so that allocation counts are
// not meaningful.
const raceEnabled = true
