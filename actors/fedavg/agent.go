package fedavg

import (
	"fmt"
	"math/rand/v2"

	"google.golang.org/protobuf/proto"

	"maple/actors"
	"maple/actors/msg"
	"maple/algorithms/fedavg"
	"maple/algorithms/systems"
)

// Observation keys of the systems model, reported to the run's observer
// (outside the protocol) in the round of the message concerned.
const (
	// KeyDropped reports an agent that did not answer a task: it dropped
	// out, had crashed or was unavailable. The value is [agent].
	KeyDropped = "dropped"
	// KeyLate reports a reply that reached the server after its round
	// closed (or, asynchronously, after the server gave up on it), and
	// KeyTimeout a client the asynchronous server gave up on. The value is
	// [agent].
	KeyLate    = "late"
	KeyTimeout = "timeout"
	// KeyTime reports the server's virtual clock when it updates the model,
	// just before the model itself: [seconds].
	KeyTime = "time"
	// KeyEmpty reports a round that closed without any reply: the model is
	// unchanged. The value is [].
	KeyEmpty = "empty"
	// KeyStaleness reports the staleness τ of an update an asynchronous
	// server applied or buffered: [τ].
	KeyStaleness = "staleness"
)

// Agent is the behaviour of a FedAvg client: on GlobalModel it trains with
// its state machine and replies with its local model or update; on
// ImportanceProbe it reports its gradient noise at the probed model. Its
// device decides how long training takes and whether it answers at all;
// an adversary alters what it answers.
type Agent struct {
	// Core is the agent's state machine.
	Core *fedavg.Agent
	// Share selects the reply message (LocalModel or LocalUpdate).
	Share fedavg.Share
	// Server is the server's actor ID.
	Server actors.ID
	// GradientTime is the virtual compute time of one sample gradient when
	// Device is nil.
	GradientTime float64
	// Device, if set, charges the compute time of a task (it then replaces
	// GradientTime) and decides dropouts, crashes and availability.
	Device *systems.Device
	// Adversary, if set, makes the agent an adversary of that kind, and
	// AttackStream is then its fedavg.StreamAttack stream.
	Adversary    fedavg.Adversary
	AttackStream *rand.Rand

	last    task // the last task handled, to ignore a second copy
	started bool // last is set
	dropped int  // the last round it did not answer, for Waiting
	why     string
}

// task identifies a GlobalModel: its round (or model version) and slot (or
// task number). Tasks reach an agent in increasing order, so a task that is
// not greater than the last one handled is a second copy of one.
type task struct{ round, slot int }

// Receive implements actors.Behaviour.
func (a *Agent) Receive(ctx *actors.Context, m proto.Message) error {
	switch m := m.(type) {
	case *msg.GlobalModel:
		t := task{ctx.Round(), int(m.GetSlot())}
		if a.started && (t.round < a.last.round || t.round == a.last.round && t.slot <= a.last.slot) {
			return nil // a second copy of a task already handled
		}
		a.started, a.last = true, t
		return a.train(ctx, m)
	case *msg.ImportanceProbe:
		r, gradients := a.Core.Probe(m.GetWeights())
		ctx.Spend(float64(gradients) * a.GradientTime)
		ctx.Send(a.Server, &msg.ImportanceReport{GradNorm: r.GradNorm, Sigma2: r.Sigma2, Alpha: r.Alpha})
		return nil
	}
	return fmt.Errorf("agent cannot handle %T", m)
}

// train carries out a task: unless the device is down or drops out, it
// trains (unless it is an adversary that does not), spends the compute
// time, and replies (what an adversary makes of its reply).
func (a *Agent) train(ctx *actors.Context, m *msg.GlobalModel) error {
	d := a.Device
	switch {
	case d != nil && d.Crashed(ctx.Round()):
		a.drop(ctx, "crashed")
		return nil
	case d != nil && d.DropsOut():
		a.drop(ctx, "dropped out")
		return nil
	}
	w0 := m.GetWeights()
	reply := make([]float64, len(w0))
	var out fedavg.Outcome
	if a.Adversary == nil || a.Adversary.Trains() {
		var err error
		if out, err = a.Core.Train(reply, w0, m.GetP()); err != nil {
			return err
		}
	}
	compute := float64(out.Gradients) * a.GradientTime
	if d != nil {
		compute = d.ComputeTime(out.Steps, out.Gradients)
		if !d.Available(ctx.Now(), ctx.Now()+compute) {
			a.drop(ctx, "was unavailable")
			return nil
		}
	}
	if a.Adversary != nil {
		a.Adversary.Corrupt(reply, w0, a.Share, a.AttackStream)
	}
	ctx.Spend(compute)
	r := out.Report
	if a.Share == fedavg.Updates {
		ctx.Send(a.Server, &msg.LocalUpdate{Slot: m.GetSlot(), Update: reply, GradNorm: r.GradNorm, Sigma2: r.Sigma2, Alpha: r.Alpha})
	} else {
		ctx.Send(a.Server, &msg.LocalModel{Slot: m.GetSlot(), Weights: reply, GradNorm: r.GradNorm, Sigma2: r.Sigma2, Alpha: r.Alpha})
	}
	return nil
}

// drop records that the agent does not answer its task.
func (a *Agent) drop(ctx *actors.Context, why string) {
	a.dropped, a.why = ctx.Round(), why
	ctx.Observe(KeyDropped, []float64{float64(a.Device.Agent)})
}

// Waiting implements actors.Waiter: an agent that left a task unanswered
// says so, so that a stalled run names it.
func (a *Agent) Waiting() string {
	if a.why == "" {
		return ""
	}
	return fmt.Sprintf("%s in round %d (no reply sent)", a.why, a.dropped)
}
