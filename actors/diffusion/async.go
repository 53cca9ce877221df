package diffusion

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	"maple/actors"
	"maple/actors/msg"
	"maple/algorithms/diffusion"
	"maple/algorithms/systems"
)

// asyncAgent is the behaviour of an agent of asynchronous ATC diffusion
// (diffusion.AsyncAgent): on Tick it adapts and sends its first iterate; its
// DiffusionWake timer, Wait after each adapt, makes it combine what has
// arrived and start the next step; after Steps steps it sends Done. Its
// device charges the compute time, silences the steps it drops out of and
// stops it for good when it crashes.
type asyncAgent struct {
	core      *diffusion.AsyncAgent
	scheduler actors.ID
	first     actors.ID
	agents    int
	steps     int
	wait      float64
	device    *systems.Device
	gradient  float64 // compute time per sample gradient without a device
	crashed   bool
	box       outbox
	in        diffusion.Message
}

// Receive implements actors.Behaviour.
func (a *asyncAgent) Receive(ctx *actors.Context, m proto.Message) error {
	if a.crashed {
		return nil
	}
	if !a.box.ready {
		a.box.setup(a.first, a.gradient, a.device, a.core.OutDegree())
	}
	a.box.ctx = ctx
	err := a.receive(ctx, m)
	a.box.ctx = nil
	return err
}

// receive is Receive with the outbox open.
func (a *asyncAgent) receive(ctx *actors.Context, m proto.Message) error {
	switch m := m.(type) {
	case *msg.Tick:
		a.adapt(ctx)
	case *msg.StageShare:
		from := int(ctx.Sender() - a.first)
		if from < 0 || from >= a.agents {
			return fmt.Errorf("share from %s, which is not an agent", ctx.Name(ctx.Sender()))
		}
		a.in = diffusion.Message{Kind: diffusion.Share, Peer: from, Stage: int(m.GetStage()), Values: m.GetPayload()}
		err := a.core.Receive(ctx.Round(), &a.in)
		a.box.recycle() // the state machine has copied the values, or ignored them
		return err
	case *msg.DiffusionWake:
		a.core.Combine()
		ctx.SetRound(a.core.Steps())
		ctx.Observe(KeyTime, []float64{ctx.Now()})
		ctx.Observe(KeyModel, a.core.Model())
		if a.core.Steps() == a.steps {
			ctx.SetRound(1)
			ctx.Send(a.scheduler, &msg.Done{})
			return nil
		}
		a.adapt(ctx)
	default:
		return fmt.Errorf("asynchronous agent cannot handle %s", actors.MessageName(m))
	}
	return nil
}

// adapt starts the next step: unless the agent has crashed, it adapts,
// sends (unless it drops out of the step) and sets its timer.
func (a *asyncAgent) adapt(ctx *actors.Context) {
	step := a.core.Steps() + 1
	d := a.device
	if d != nil && d.Crashed(step) {
		a.crashed = true
		for k := step; k <= a.steps; k++ {
			ctx.SetRound(k)
			ctx.Observe(KeyTime, []float64{ctx.Now()})
			ctx.Observe(KeyModel, a.core.Model())
		}
		ctx.SetRound(1)
		ctx.Send(a.scheduler, &msg.Done{})
		return
	}
	silent := d != nil && d.DropsOut()
	ctx.SetRound(step)
	a.core.Adapt(&a.box, silent)
	ctx.After(a.wait, &msg.DiffusionWake{})
}
