package fedavg

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	"maple/actors"
	"maple/actors/msg"
	"maple/algorithms/fedavg"
)

// Agent is the behaviour of a FedAvg client: on GlobalModel it trains with
// its state machine and replies with its local model or update.
type Agent struct {
	// Core is the agent's state machine.
	Core *fedavg.Agent
	// Share selects the reply message (LocalModel or LocalUpdate).
	Share fedavg.Share
	// Server is the server's actor ID.
	Server actors.ID
	// GradientTime is the virtual compute time of one sample gradient.
	GradientTime float64
}

// Receive implements actors.Behaviour.
func (a *Agent) Receive(ctx *actors.Context, m proto.Message) error {
	gm, ok := m.(*msg.GlobalModel)
	if !ok {
		return fmt.Errorf("agent cannot handle %T", m)
	}
	reply := make([]float64, len(gm.GetWeights()))
	n := a.Core.Respond(reply, gm.GetWeights())
	ctx.Spend(float64(n) * a.GradientTime)
	if a.Share == fedavg.Updates {
		ctx.Send(a.Server, &msg.LocalUpdate{Slot: gm.GetSlot(), Update: reply})
	} else {
		ctx.Send(a.Server, &msg.LocalModel{Slot: gm.GetSlot(), Weights: reply})
	}
	return nil
}
