package diffusion

import (
	"fmt"
	"math/rand/v2"
	"strconv"

	"maple/algorithms/rng"
)

// Names of the random streams (package rng) the recursion draws from. Each is
// owned by one agent, named AgentName(p), except the oracle LGH streams, which
// belong to a pair.
const (
	// StreamBatch draws the samples of the sample and batch gradient oracles.
	StreamBatch = "batch"
	// StreamNoise draws the random and graph-homomorphic privacy noise.
	StreamNoise = "noise"
	// StreamKey draws the 32 bytes of the agent's X25519 private key (LGH
	// secure mode).
	StreamKey = "lgh-key"
)

// AgentName returns the actor name and random-stream owner of agent p.
func AgentName(p int) string { return "agent/" + strconv.Itoa(p) }

// PaperStream returns the purpose of the stream from which an agent draws its
// paper-mode LGH keys for receiver k. One stream per receiver keeps the draws
// independent of the order in which the receivers' role announcements arrive.
func PaperStream(k int) string { return "lgh-paper/" + strconv.Itoa(k) }

// OracleStream names the stream from which agents a and b draw their
// oracle-mode pair secret (pairmask.OracleSecret): owner "lgh-pair/lo/hi" (the
// unordered pair), purpose "oracle". Both agents open their own copy; the
// masks then come from the secret as in the secure mode.
func OracleStream(a, b int) (owner, purpose string) {
	return fmt.Sprintf("lgh-pair/%d/%d", min(a, b), max(a, b)), "oracle"
}

// Streams returns the random stream named (owner, purpose). The actor engine
// passes actors.Run.Rand; SeedStreams gives the same streams from a run seed.
type Streams func(owner, purpose string) *rand.Rand

// SeedStreams returns the streams of the run with seed runSeed.
func SeedStreams(runSeed uint64) Streams {
	return func(owner, purpose string) *rand.Rand { return rng.New(runSeed, owner, purpose) }
}
