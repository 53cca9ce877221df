package fedavg

import "math/rand/v2"

// AgentStreams returns the streams of an agent whose stream for a purpose
// is stream(purpose): its schedule and batch streams, its noise stream when
// cfg adds noise, and stream itself for the others (Streams.Named). Both
// engines open an agent's streams through it.
func AgentStreams(cfg *Config, stream func(purpose string) *rand.Rand) Streams {
	s := Streams{Schedule: stream("schedule"), Batch: stream("batch"), Named: stream}
	if cfg.NoiseStd > 0 {
		s.Noise = stream("noise")
	}
	return s
}
