package fedavg

import (
	"fmt"
	"strings"

	"google.golang.org/protobuf/proto"

	"maple/actors"
	"maple/actors/msg"
	"maple/algorithms/compress"
	"maple/algorithms/fedavg"
	"maple/internal/params"
)

// Staleness holds the parameters every asynchronous server shares: its
// staleness weight s(τ) and its timeout.
type Staleness struct {
	Shape   string  `yaml:"staleness" oneof:"constant polynomial hinge" doc:"the staleness weight s(τ): constant 1, polynomial (1+τ)^(−a), or hinge (1 up to τ = b, then 1/(a(τ−b)+1))"`
	A       float64 `yaml:"a" range:"[0, inf)" doc:"exponent of polynomial, slope of hinge"`
	B       float64 `yaml:"b" range:"[0, inf)" doc:"knee of hinge"`
	Timeout float64 `yaml:"timeout" range:"[0, inf)" doc:"seconds after which a client that has not answered is given up on and replaced (0: never)"`
}

// async returns the asynchronous configuration of mode with these
// staleness and timeout parameters.
func (p Staleness) async(mode fedavg.Mode) fedavg.Async {
	kind, _ := fedavg.ParseStaleness(p.Shape) // the loader checked the name (oneof)
	return fedavg.Async{Mode: mode, Staleness: fedavg.Staleness{Kind: kind, A: p.A, B: p.B}, Timeout: p.Timeout}
}

var defaultStaleness = Staleness{Shape: "constant", A: 0.5, B: 4}

// fedAsync is FedAsync's parameters (Xie et al., 2019).
type fedAsync struct {
	Alpha     float64 `yaml:"alpha" range:"(0, 1]" doc:"mixing weight α"`
	Staleness `yaml:",inline"`
}

// Configure implements Configurer.
func (p fedAsync) Configure(cfg *fedavg.Config) {
	cfg.Async = p.async(fedavg.FedAsync)
	cfg.Async.Alpha = p.Alpha
}

// fedBuff is FedBuff's parameters (Nguyen et al., 2022).
type fedBuff struct {
	Buffer    int     `yaml:"buffer" range:"[1, inf)" doc:"updates b per model update (at most algorithm.fedavg.participants)"`
	LR        float64 `yaml:"lr" range:"(0, inf)" doc:"server step η"`
	Staleness `yaml:",inline"`
}

// Configure implements Configurer.
func (p fedBuff) Configure(cfg *fedavg.Config) {
	cfg.Async = p.async(fedavg.FedBuff)
	cfg.Async.Buffer, cfg.Async.ServerRate = p.Buffer, p.LR
}

// Validate implements fedavg.Checker: the buffer fills from the clients
// training at once.
func (p fedBuff) Validate(cfg *fedavg.Config) error {
	if p.Buffer > cfg.Participants {
		return params.Errorf("buffer", "a buffer of %d updates needs at least as many concurrent clients, but %d train at once (the participants)", p.Buffer, cfg.Participants)
	}
	return nil
}

func init() {
	RegisterServer(Server{Name: "fedasync", Doc: "asynchronous FedAvg: every update is mixed in on arrival, w ← (1 − α s(τ)) w + α s(τ) w_k (Xie et al., 2019)",
		Params: fedAsync{Alpha: 0.6, Staleness: defaultStaleness}, Behaviour: newAsyncServer})
	RegisterServer(Server{Name: "fedbuff", Doc: "buffered asynchronous FedAvg: every b updates, w ← w − η (1/b) Σ s(τ_k) Δ_k (Nguyen et al., 2022)",
		Params: fedBuff{Buffer: 10, LR: 1, Staleness: defaultStaleness}, Behaviour: newAsyncServer})
}

func newAsyncServer(p ServerParts) actors.Behaviour {
	return &asyncServer{ServerParts: p, answered: map[int]int32{}}
}

// asyncServer is the behaviour of FedAsync and FedBuff (Config.Async): it
// keeps Config.Participants clients training, each on the model version it
// was sent, applies their updates as they arrive (fedavg.AsyncServer) and
// finishes once the model has had Rounds updates. GlobalModels carry the
// version as their round and a task number as their slot.
type asyncServer struct {
	ServerParts
	core     *fedavg.AsyncServer
	tasks    int32         // tasks sent so far
	answered map[int]int32 // per agent that had an update accepted: the task of its last
	done     bool
}

// Receive implements actors.Behaviour.
func (s *asyncServer) Receive(ctx *actors.Context, m proto.Message) error {
	switch m := m.(type) {
	case *msg.Tick:
		if s.core != nil {
			return fmt.Errorf("second Tick: an asynchronous server runs one round")
		}
		s.core = fedavg.NewAsyncServer(s.Config, s.Core.Model(), ctx.Rand("participation"))
		s.dispatch(ctx)
	case *msg.LocalModel:
		ctx.Recycle() // for an agent's next reply (its vector stays the server's to keep)
		return s.arrive(ctx, m.GetSlot(), m.GetWeights(), compressedOf(s.Config, m))
	case *msg.LocalUpdate:
		ctx.Recycle()
		return s.arrive(ctx, m.GetSlot(), m.GetUpdate(), compressedOf(s.Config, m))
	case *msg.FedAvgTimeout:
		if s.done {
			return nil
		}
		abandoned, err := s.core.Abandon(int(m.GetAgent()), ctx.Round())
		if err != nil {
			return err
		}
		if abandoned {
			ctx.Observe(KeyTimeout, []float64{float64(m.GetAgent())})
			s.dispatch(ctx)
		}
	default:
		return fmt.Errorf("asynchronous server cannot handle %T", m)
	}
	return nil
}

// arrive handles an update: v, or the compressed c (nil for a dense one).
func (s *asyncServer) arrive(ctx *actors.Context, task int32, v []float64, c *compress.Compressed) error {
	k, ok := s.agentIndex(ctx.Sender())
	switch {
	case !ok:
		return fmt.Errorf("update from %s, which is not an agent", ctx.Name(ctx.Sender()))
	case s.done:
		return nil
	case s.answered[k] == task:
		return nil // a second copy of an update
	case !s.core.Waiting(k, ctx.Round()):
		ctx.Observe(KeyLate, []float64{float64(k)})
		return nil
	}
	s.answered[k] = task
	var updated bool
	var tau int
	var err error
	if c != nil {
		updated, tau, err = s.core.ArriveCompressed(k, ctx.Round(), c)
	} else {
		updated, tau, err = s.core.Arrive(k, ctx.Round(), v)
	}
	if err != nil {
		return err
	}
	ctx.Observe(KeyStaleness, []float64{float64(tau)})
	if !updated {
		return nil
	}
	ctx.SetRound(s.core.Version())
	ctx.Observe(KeyTime, []float64{ctx.Now()})
	ctx.Observe("model", s.core.Model())
	if s.core.Version() == s.Rounds {
		s.done = true
		ctx.SetRound(1) // the scheduler's only round
		ctx.Send(s.Scheduler, &msg.Done{})
		return nil
	}
	s.dispatch(ctx)
	return nil
}

// dispatch sends the current model to idle agents until Participants are
// busy, each with its timeout timer.
func (s *asyncServer) dispatch(ctx *actors.Context) {
	agents := s.core.Dispatch()
	if len(agents) == 0 {
		return
	}
	ctx.SetRound(s.core.Version())
	model := append([]float64(nil), s.core.Model()...) // shared, immutable once sent
	for _, k := range agents {
		s.tasks++
		ctx.Send(s.Agents.ID(k), &msg.GlobalModel{Slot: s.tasks, Weights: model})
		if t := s.Config.Async.Timeout; t > 0 {
			ctx.After(t, &msg.FedAvgTimeout{Agent: int32(k)})
		}
	}
}

// Waiting implements actors.Waiter: the clients the server still waits for.
func (s *asyncServer) Waiting() string {
	if s.done || s.core == nil {
		return ""
	}
	agents, versions := s.core.Busy()
	if len(agents) == 0 {
		return ""
	}
	parts := make([]string, len(agents))
	for i, k := range agents {
		parts[i] = fmt.Sprintf("%s (version %d)", fedavg.AgentName(k), versions[i])
	}
	return fmt.Sprintf("version %d waits for the updates of %s and has no timeout to give up on them", s.core.Version(), strings.Join(parts, ", "))
}
