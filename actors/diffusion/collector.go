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

	w       view
	g       [3]view
	times   map[int]float64 // latest clock reported per round
	pending map[int]*view   // asynchronous rounds in progress
	dim     int
}

// view is one network-wide vector per agent, filled as reports arrive.
type view struct {
	rows  [][]float64
	round int
	have  int
}

// NewCollector returns a collector for agents agents of dimension dim on a
// run that hosts nothing but the scheduler and the agents (First = 1).
func NewCollector(agents, dim int) *Collector {
	c := &Collector{First: 1, Setup: make([]diffusion.SetupCounts, agents), w: newView(agents, dim),
		times: map[int]float64{}, pending: map[int]*view{}, dim: dim}
	for j := range c.g {
		c.g[j] = newView(agents, dim)
	}
	return c
}

func newView(agents, dim int) view {
	v := view{rows: make([][]float64, agents)}
	for p := range v.rows {
		v.rows[p] = make([]float64, dim)
	}
	return v
}

// add stores agent p's vector of round and reports whether the round is now
// complete.
func (v *view) add(p, round int, x []float64) bool {
	if round != v.round {
		v.round, v.have = round, 0
	}
	copy(v.rows[p], x)
	v.have++
	return v.have == len(v.rows)
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
			nv := newView(len(c.Setup), c.dim)
			w = &nv
			w.round = round
			c.pending[round] = w
		}
		if w.add(p, round, v) {
			delete(c.pending, round)
			c.complete(round, w.rows)
		}
	case key == KeyModel:
		if c.w.add(p, round, v) {
			c.complete(round, c.w.rows)
		}
	case key == KeySetup && len(v) == 3:
		s := &c.Setup[p]
		s.Roles += int(v[0])
		s.Keys += int(v[1])
		s.Relays += int(v[2])
	case strings.HasPrefix(key, "gh-noise/"):
		for j := range c.g {
			if key == NoiseKey(j) && c.g[j].add(p, round, v) && c.Draws != nil {
				c.Draws(round, j, c.g[j].rows)
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
