package fedavg

import (
	"fmt"
	"strings"

	"google.golang.org/protobuf/proto"

	"maple/actors"
	"maple/actors/msg"
	"maple/algorithms/fedavg"
	"maple/internal/params"
)

// stalenessParams are the parameters every asynchronous server shares.
var stalenessParams = []params.Param{
	{Name: "staleness", Type: params.String, Default: "constant", OneOf: fedavg.StalenessNames(),
		Doc: "the staleness weight s(τ): constant 1, polynomial (1+τ)^(−a), or hinge (1 up to τ = b, then 1/(a(τ−b)+1))"},
	{Name: "a", Type: params.Float, Default: 0.5, Range: "[0, inf)", Doc: "exponent of polynomial, slope of hinge"},
	{Name: "b", Type: params.Float, Default: 4.0, Range: "[0, inf)", Doc: "knee of hinge"},
	{Name: "timeout", Type: params.Float, Default: 0.0, Range: "[0, inf)",
		Doc: "seconds after which a client that has not answered is given up on and replaced (0: never)"},
}

func init() {
	RegisterServerSpec(params.Spec{
		Name: "fedasync", Doc: "asynchronous FedAvg: every update is mixed in on arrival, w ← (1 − α s(τ)) w + α s(τ) w_k (Xie et al., 2019)",
		Params: append([]params.Param{{Name: "alpha", Type: params.Float, Default: 0.6, Range: "(0, 1]", Doc: "mixing weight α"}}, stalenessParams...),
	}, newAsyncServer)
	RegisterServerSpec(params.Spec{
		Name: "fedbuff", Doc: "buffered asynchronous FedAvg: every b updates, w ← w − η (1/b) Σ s(τ_k) Δ_k (Nguyen et al., 2022)",
		Params: append([]params.Param{
			{Name: "buffer", Type: params.Int, Default: 10, Range: "[1, inf)", Doc: "updates b per model update (at most algorithm.fedavg.participants)"},
			{Name: "lr", Type: params.Float, Default: 1.0, Range: "(0, inf)", Doc: "server step η"},
		}, stalenessParams...),
	}, newAsyncServer)
}

// AsyncConfig returns the asynchronous configuration a server of the
// fedasync or fedbuff behaviour with parameters p runs, for the
// configuration and the reference; Mode is Sync for other servers.
func AsyncConfig(server string, p params.Values) (fedavg.Async, error) {
	var a fedavg.Async
	switch server {
	case "fedasync":
		a.Mode, a.Alpha = fedavg.FedAsync, p.Float("alpha")
	case "fedbuff":
		a.Mode, a.Buffer, a.ServerRate = fedavg.FedBuff, p.Int("buffer"), p.Float("lr")
	default:
		return a, nil
	}
	kind, err := fedavg.ParseStaleness(p.String("staleness"))
	a.Staleness = fedavg.Staleness{Kind: kind, A: p.Float("a"), B: p.Float("b")}
	a.Timeout = p.Float("timeout")
	return a, err
}

func newAsyncServer(p ServerParts) actors.Behaviour {
	return &asyncServer{ServerParts: p, answered: make([]int32, len(p.Agents))}
}

// asyncServer is the behaviour of FedAsync and FedBuff (Config.Async): it
// keeps Config.Participants clients training, each on the model version it
// was sent, applies their updates as they arrive (fedavg.AsyncServer) and
// finishes once the model has had Rounds updates. GlobalModels carry the
// version as their round and a task number as their slot.
type asyncServer struct {
	ServerParts
	core     *fedavg.AsyncServer
	tasks    int32   // tasks sent so far
	answered []int32 // per agent: the task of its last accepted update
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
		return s.arrive(ctx, m.GetSlot(), m.GetWeights())
	case *msg.LocalUpdate:
		return s.arrive(ctx, m.GetSlot(), m.GetUpdate())
	case *msg.FedAvgTimeout:
		if !s.done && s.core.Abandon(int(m.GetAgent()), ctx.Round()) {
			ctx.Observe(KeyTimeout, []float64{float64(m.GetAgent())})
			s.dispatch(ctx)
		}
	default:
		return fmt.Errorf("asynchronous server cannot handle %T", m)
	}
	return nil
}

func (s *asyncServer) arrive(ctx *actors.Context, task int32, v []float64) error {
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
	updated, tau, err := s.core.Arrive(k, ctx.Round(), v)
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
		ctx.Send(s.Agents[k], &msg.GlobalModel{Slot: s.tasks, Weights: model})
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
