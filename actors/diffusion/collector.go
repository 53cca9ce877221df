package diffusion

import (
	"strings"

	"maple/actors"
	"maple/algorithms/diffusion"
)

// Collector is an actors.Observer that reassembles what the agents of one run
// report into network-wide views: once every agent has reported its model of a
// round it calls Models with the P×M iterates, once every agent has reported
// its GH draw of a stage it calls Draws, and it adds up the LGH set-up counts.
// All reports of a round arrive before any of the next (the scheduler's
// barrier), so a round is complete when P reports have arrived.
type Collector struct {
	// Models, if set, receives W[p] = w_{p,i} after round i.
	Models func(round int, W [][]float64)
	// Draws, if set, receives G[p] = g_p of stage j in round i.
	Draws func(round, stage int, G [][]float64)
	// Setup[p] accumulates the set-up messages agent p sent.
	Setup []diffusion.SetupCounts
	// Links, if set, receives the live graph the scheduler of a
	// time-varying graph reports each round (KeyLinks).
	Links func(round int, v []float64)
	// Reports, if set, receives what agents report through
	// diffusion.Outbox.Report, with the reporting agent.
	Reports func(round, agent int, key string, v []float64)
	// Time, if set, receives the virtual time of round i once every agent
	// has reported its model of it: the latest of their clocks (KeyTime).
	Time func(round int, t float64)
	// Async collects the rounds of asynchronous agents, whose reports of
	// different rounds interleave: each round is kept until all its reports
	// have arrived. Otherwise all reports of a round arrive before any of
	// the next.
	Async bool
	// First is the ID of agent/0: the scheduler's ID + 1 (see Spawn), so 1
	// when the run hosts nothing else. The observer must exist before Spawn
	// returns the scheduler's ID, so set First after spawning if needed.
	First actors.ID

	w       *actors.View
	g       [3]*actors.View
	times   map[int]float64      // latest clock reported per round
	pending map[int]*actors.View // asynchronous rounds in progress
	dim     int
}

// NewCollector returns a collector for agents agents of dimension dim on a
// run that hosts nothing but the scheduler and the agents (First = 1).
func NewCollector(agents, dim int) *Collector {
	c := &Collector{First: 1, Setup: make([]diffusion.SetupCounts, agents), w: actors.NewView(agents, dim),
		times: map[int]float64{}, pending: map[int]*actors.View{}, dim: dim}
	for j := range c.g {
		c.g[j] = actors.NewView(agents, dim)
	}
	return c
}

// Observe implements actors.Observer. Reports from other actors, and keys
// it does not know, are ignored.
func (c *Collector) Observe(from actors.ID, round int, key string, v []float64) {
	if key == KeyLinks && c.Links != nil {
		c.Links(round, v)
		return
	}
	p := int(from - c.First)
	if p < 0 || p >= len(c.Setup) {
		return
	}
	switch {
	case key == diffusion.KeyMaskResidual || key == diffusion.KeyUncancelled:
		if c.Reports != nil {
			c.Reports(round, p, key, v)
		}
	case key == KeyTime:
		if t, ok := c.times[round]; !ok || v[0] > t {
			c.times[round] = v[0]
		}
	case key == KeyModel && c.Async:
		w := c.pending[round]
		if w == nil {
			w = actors.NewView(len(c.Setup), c.dim)
			c.pending[round] = w
		}
		if w.Add(p, round, v) {
			delete(c.pending, round)
			c.complete(round, w.Rows)
		}
	case key == KeyModel:
		if c.w.Add(p, round, v) {
			c.complete(round, c.w.Rows)
		}
	case key == KeySetup && len(v) == 3:
		s := &c.Setup[p]
		s.Roles += int(v[0])
		s.Keys += int(v[1])
		s.Relays += int(v[2])
	case strings.HasPrefix(key, "gh-noise/"):
		for j := range c.g {
			if key == NoiseKey(j) && c.g[j].Add(p, round, v) && c.Draws != nil {
				c.Draws(round, j, c.g[j].Rows)
			}
		}
	}
}

// complete hands on a round all of whose models have arrived, with its time.
func (c *Collector) complete(round int, W [][]float64) {
	if c.Time != nil {
		c.Time(round, c.times[round])
	}
	delete(c.times, round)
	if c.Models != nil {
		c.Models(round, W)
	}
}
