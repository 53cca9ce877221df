package randomwalk

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	"maple/actors"
	"maple/actors/msg"
	rw "maple/algorithms/randomwalk"
)

// Observation keys under which behaviours report to the run's observer
// (outside the protocol: not messages, not traced). Collector decodes them.
const (
	// KeySetup reports [messages, bytes] a node sent at set-up.
	KeySetup = "setup"
	// KeyStart reports [walk, model…], a walk's initial model.
	KeyStart = "start"
	// KeyStep reports [walk, bytes, model…] after a step (round = step);
	// bytes is the size of the token sent after it, 0 if none.
	KeyStep = "step"
	// KeyGossip and KeyGossipActive report [bytes, model…] at the end of a
	// gossip iteration, from the neighbour and from the woken node.
	KeyGossip       = "gossip"
	KeyGossipActive = "gossip-active"
)

// Node is the behaviour of a walk node.
type Node struct {
	// Core is the node's state machine.
	Core *rw.Node
	// Scheduler is the scheduler's ID; node j's ID is First + j.
	Scheduler, First actors.ID
	// Nodes is N, Walks the number of walks and Iterations the steps of
	// every walk.
	Nodes, Walks, Iterations int
	// StepTime is the virtual compute time of one step.
	StepTime float64

	step   []float64 // the KeyStep report [walk, bytes, model…], whose tail is the model of the walk being stepped
	report []float64 // scratch for the other observations
	out    *msg.WalkToken
	spare  *msg.WalkToken // a received token this node may reuse (Context.Reuse)
	done   msg.Done       // the Done of the set-up and of every walk: empty, immutable
}

// Receive implements actors.Behaviour.
func (n *Node) Receive(ctx *actors.Context, m proto.Message) error {
	switch m := m.(type) {
	case *msg.Tick:
		if ctx.Sender() != n.Scheduler {
			return fmt.Errorf("a Tick from %s, not the scheduler", ctx.Name(ctx.Sender()))
		}
		a := n.Core.Announcement()
		body := announcement(a)
		for _, j := range n.Core.Neighbours() {
			ctx.Send(n.First+actors.ID(j), body)
		}
		n.observe(ctx, KeySetup, float64(len(n.Core.Neighbours())), float64(len(n.Core.Neighbours())*proto.Size(body)))
	case *msg.WalkAnnounce:
		from, err := n.peer(ctx, m)
		if err != nil {
			return err
		}
		complete, err := n.Core.Learn(from, rw.Announcement{Degree: int(m.GetDegree()), LogWeight: m.GetLogWeight()})
		if err != nil {
			return err
		}
		if complete {
			ctx.Send(n.Scheduler, &n.done)
		}
	case *msg.WalkStart:
		if ctx.Sender() != n.Scheduler {
			return fmt.Errorf("a WalkStart from %s, not the scheduler", ctx.Name(ctx.Sender()))
		}
		w := int(m.GetWalk())
		model := n.model()
		n.Core.InitialModel(model, rw.WalkInitPurpose(w))
		n.report = append(append(n.report[:0], float64(w)), model...)
		ctx.Observe(KeyStart, n.report)
		return n.walk(ctx, w, 0)
	case *msg.WalkToken:
		if _, err := n.peer(ctx, m); err != nil {
			return err
		}
		k := int(m.GetStep())
		if k < 1 || k >= n.Iterations {
			return fmt.Errorf("token of walk %d after step %d, outside [1, %d)", m.GetWalk(), k, n.Iterations)
		}
		if len(m.GetModel()) != n.Core.Dim() {
			return fmt.Errorf("token of walk %d with a model of dimension %d, expected %d", m.GetWalk(), len(m.GetModel()), n.Core.Dim())
		}
		copy(n.model(), m.GetModel())
		n.spare, _ = ctx.Reuse().(*msg.WalkToken) // nil unless the token is ours now
		return n.walk(ctx, int(m.GetWalk()), k)
	default:
		return fmt.Errorf("node cannot handle %s", actors.MessageName(m))
	}
	return nil
}

// walk runs walk w's steps after step k at this node and sends the token on
// (or tells the scheduler the walk has ended).
func (n *Node) walk(ctx *actors.Context, w, k int) error {
	if !n.Core.Ready() {
		return fmt.Errorf("walk %d reached the node before every neighbour announced itself", w)
	}
	if w < 0 || w >= n.Walks {
		return fmt.Errorf("walk %d; expected one of %d walks", w, n.Walks)
	}
	next, last := n.Core.Walk(w, k, n.Iterations, n.model(), func(k, next int, model []float64) {
		ctx.Spend(n.StepTime)
		ctx.SetRound(k)
		bytes := 0
		if next >= 0 {
			n.out = n.token(w, k, model)
			bytes = tokenSize(w, k, len(model))
		}
		n.step[0], n.step[1] = float64(w), float64(bytes) // model is n.step[2:]
		ctx.Observe(KeyStep, n.step)
	})
	ctx.SetRound(last)
	if next < 0 {
		ctx.Send(n.Scheduler, &n.done)
		return nil
	}
	ctx.Pass(n.First+actors.ID(next), n.out) // nobody else holds it
	n.out = nil
	return nil
}

// model returns the model of the walk being stepped: the tail of the KeyStep
// report, so that a step is reported without a copy.
func (n *Node) model() []float64 {
	if len(n.step) != 2+n.Core.Dim() {
		n.step = make([]float64, 2+n.Core.Dim())
	}
	return n.step[2:]
}

// token returns the token of walk w after step k: the token this node
// received, if the engine let it reuse it (a walk's token then travels as
// one message from node to node), else a new one.
func (n *Node) token(w, k int, model []float64) *msg.WalkToken {
	t := n.spare
	n.spare = nil
	if t == nil {
		return token(w, k, model)
	}
	t.Walk, t.Step, t.Model = int32(w), int64(k), append(t.Model[:0], model...)
	return t
}

// peer returns the index of the node that sent m, or an error if the sender
// is not a node.
func (n *Node) peer(ctx *actors.Context, m proto.Message) (int, error) {
	from := int(ctx.Sender() - n.First)
	if from < 0 || from >= n.Nodes {
		return 0, fmt.Errorf("%s from %s, which is not a node", actors.MessageName(m), ctx.Name(ctx.Sender()))
	}
	return from, nil
}

func (n *Node) observe(ctx *actors.Context, key string, v ...float64) {
	n.report = append(n.report[:0], v...)
	ctx.Observe(key, n.report)
}
