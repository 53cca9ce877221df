package fedavg

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"maple/algorithms/sampling"
)

// AsyncServer is the state machine of an asynchronous server (FedAsync or
// FedBuff, Config.Async). It keeps Config.Participants clients busy: Start
// sends the model to that many agents drawn without replacement; each update
// that arrives makes its client idle and is mixed in (FedAsync) or buffered
// (FedBuff, applied every b arrivals); after every model update, and after
// every client given up on (Abandon), the server sends the current model to
// as many idle agents as it takes to have Participants busy again (Dispatch),
// drawn uniformly from the idle ones with its participation stream. With b =
// Participants and equal compute times every update is fresh and the
// recursion is synchronous FedAvg.
//
// A task is identified by the agent and the model version it was sent; a
// reply for a task the server no longer waits for (given up on, or a second
// copy) is late and ignored.
type AsyncServer struct {
	cfg     *Config
	model   []float64
	version int
	busy    map[int]int // the agents training, with the version they train on
	active  int         // busy agents
	sent    map[int]*sentModel
	buf     []BufferedUpdate
	spare   [][]float64 // recycled Δ buffers
	decoded []float64   // a compressed update, decoded (ArriveCompressed)
	rand    *rand.Rand
	ranked  []int // the busy agents, ascending
	picks   []int
	out     []int
	dry     int // tasks given up on since an update last arrived
}

// sentModel is a model version some client still trains on, kept for the Δ
// of FedBuff with model sharing, and for the model a compressed reply's
// change is decoded against (ArriveCompressed).
type sentModel struct {
	w     []float64
	users int
}

// NewAsyncServer returns an asynchronous server holding a copy of w0 that
// draws clients from r (its "participation" stream).
func NewAsyncServer(cfg *Config, w0 []float64, r *rand.Rand) *AsyncServer {
	return &AsyncServer{cfg: cfg, model: slices.Clone(w0), busy: map[int]int{}, sent: map[int]*sentModel{}, rand: r}
}

// Model returns the current model; copy it before sending it.
func (s *AsyncServer) Model() []float64 { return s.model }

// Version returns the number of model updates so far.
func (s *AsyncServer) Version() int { return s.version }

// Start returns the first clients, ascending: Participants agents drawn
// without replacement. They train on version 0.
func (s *AsyncServer) Start() []int { return s.Dispatch() }

// Dispatch draws idle agents until Participants are busy and marks them busy
// on the current version; it returns them in ascending order (the slice is
// reused). The draw is sampling without replacement among the idle agents
// in ascending order, so that with every agent idle it is the synchronous
// server's draw. The i-th idle agent is found by stepping over the busy
// ones, so that a dispatch costs time in the number of busy agents, not in
// the number of agents.
func (s *AsyncServer) Dispatch() []int {
	n := min(s.cfg.Participants-s.active, s.cfg.Agents-s.active)
	s.out = s.out[:0]
	if n <= 0 {
		return s.out
	}
	s.ranked = s.ranked[:0]
	for k := range s.busy {
		s.ranked = append(s.ranked, k)
	}
	slices.Sort(s.ranked)
	s.picks = slices.Grow(s.picks[:0], n)[:n]
	sampling.WithoutReplacement(s.picks, s.cfg.Agents-s.active, s.rand)
	for _, i := range s.picks {
		k := i // the i-th idle agent: i plus the busy agents up to it
		for _, b := range s.ranked {
			if b > k {
				break
			}
			k++
		}
		s.out = append(s.out, k)
	}
	slices.Sort(s.out)
	for _, k := range s.out {
		s.busy[k] = s.version
		s.active++
	}
	if s.cfg.Share == Models && (s.cfg.Async.Mode == FedBuff || s.cfg.Compressing()) {
		m := s.sent[s.version]
		if m == nil {
			m = &sentModel{w: slices.Clone(s.model)}
			s.sent[s.version] = m
		}
		m.users += len(s.out)
	}
	return s.out
}

// Waiting reports whether agent is training on version: a reply from it for
// that version is expected.
func (s *AsyncServer) Waiting(agent, version int) bool {
	v, ok := s.busy[agent]
	return ok && v == version && version >= 0
}

// Busy lists the agents training, ascending, with the versions they train
// on.
func (s *AsyncServer) Busy() (agents, versions []int) {
	for k := range s.busy {
		agents = append(agents, k)
	}
	slices.Sort(agents)
	for _, k := range agents {
		versions = append(versions, s.busy[k])
	}
	return agents, versions
}

// Arrive handles agent's reply for the version it was sent (Waiting must
// hold): FedAsync mixes it in with weight α·s(τ); FedBuff buffers its
// staleness-weighted update and applies the buffer once it holds b. It
// returns whether the model changed (the version then advanced) and the
// staleness τ of the update.
func (s *AsyncServer) Arrive(agent, version int, reply []float64) (updated bool, tau int, err error) {
	if !s.Waiting(agent, version) {
		return false, 0, fmt.Errorf("update from agent %d for version %d, which it is not training on", agent, version)
	}
	if len(reply) != len(s.model) {
		return false, 0, fmt.Errorf("update of dimension %d from agent %d, model has %d", len(reply), agent, len(s.model))
	}
	s.release(agent)
	s.dry = 0
	a := &s.cfg.Async
	tau = s.version - version
	w := a.Staleness.Weight(tau)
	if a.Mode == FedAsync {
		MixAsync(s.model, reply, s.cfg.Share, s.cfg.StepSize, a.Alpha, w)
		s.unuse(version)
		s.version++
		return true, tau, nil
	}
	var delta []float64
	if n := len(s.spare); n > 0 {
		delta, s.spare = s.spare[n-1], s.spare[:n-1]
	} else {
		delta = make([]float64, len(s.model))
	}
	var sent []float64
	if s.cfg.Share == Models {
		sent = s.sent[version].w
	}
	Delta(delta, sent, reply, s.cfg.Share, s.cfg.StepSize)
	s.unuse(version)
	s.buf = append(s.buf, BufferedUpdate{Agent: agent, Delta: delta, S: w})
	if len(s.buf) < a.Buffer {
		return false, tau, nil
	}
	ApplyBuffer(s.model, s.buf, a.ServerRate)
	for _, u := range s.buf {
		s.spare = append(s.spare, u.Delta)
	}
	s.buf = s.buf[:0]
	s.version++
	return true, tau, nil
}

// Abandon gives up on agent's task on version (a timeout): the agent becomes
// idle and a later reply of that task is late. It reports whether the server
// was still waiting for it, and fails when the run cannot progress: more
// tasks given up on in a row, with no update arriving between them, than
// DryLimit — a timeout shorter than every client's round trip, after which
// the server would hand out and give up on tasks forever.
func (s *AsyncServer) Abandon(agent, version int) (bool, error) {
	if !s.Waiting(agent, version) {
		return false, nil
	}
	s.release(agent)
	s.unuse(version)
	if s.dry++; s.dry > s.DryLimit() {
		return true, fmt.Errorf("asynchronous server: %d tasks in a row timed out with no update arriving in between: the timeout of %v s is shorter than the clients' round trips (link latency both ways, transfers and compute); raise algorithm.fedavg.server.timeout", s.dry, s.cfg.Async.Timeout)
	}
	return true, nil
}

// DryLimit is how many tasks in a row the server gives up on, with no
// update arriving, before it declares that the run cannot progress: ten per
// agent, and at least 100 — a client that answers in time even once in ten
// tasks resets the count long before.
func (s *AsyncServer) DryLimit() int { return max(100, 10*s.cfg.Agents) }

func (s *AsyncServer) release(agent int) {
	delete(s.busy, agent)
	s.active--
}

// unuse drops one user of the model sent as version (FedBuff, model sharing).
func (s *AsyncServer) unuse(version int) {
	if m := s.sent[version]; m != nil {
		if m.users--; m.users == 0 {
			delete(s.sent, version)
		}
	}
}
