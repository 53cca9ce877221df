package actors

import (
	"testing"

	"google.golang.org/protobuf/proto"

	"maple/actors/msg"
)

// bouncer answers every Tick with a Tick to its peer until it has handled
// limit of them, then finishes the run: a chain of single deliveries with no
// work in between, the engine's cost per message alone.
type bouncer struct {
	peer    ID
	limit   int
	handled int
	tick    msg.Tick
}

func (p *bouncer) Receive(ctx *Context, _ proto.Message) error {
	if p.handled++; p.handled == p.limit {
		ctx.Finish()
		return nil
	}
	ctx.Send(p.peer, &p.tick)
	return nil
}

// BenchmarkDelivery reports the engine's cost of one delivery (ns/msg, and
// allocations per message): two actors pass one message back and forth, the
// pattern of a random walk's token, so the queue never holds more than one
// message and the time is the delivery path itself.
func BenchmarkDelivery(b *testing.B) {
	const messages = 10000
	system := NewSystem(nil)
	defer system.Close()
	var delivered uint64
	b.ReportAllocs()
	for b.Loop() {
		r := NewRun(Options{System: system})
		a, c := &bouncer{limit: messages}, &bouncer{limit: messages}
		ia, ic := r.Spawn("a", a), r.Spawn("c", c)
		a.peer, c.peer = ic, ia
		if err := r.Execute(ia, &msg.Tick{}); err != nil {
			b.Fatal(err)
		}
		delivered += r.Messages()
		r.Close()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(delivered), "ns/msg")
	b.ReportMetric(float64(delivered)/float64(b.N), "msgs/run")
}

// idle is a behaviour that never receives a message.
type idle struct{}

func (idle) Receive(*Context, proto.Message) error { return nil }

// finisher ends the run on its first message.
type finisher struct{}

func (finisher) Receive(ctx *Context, _ proto.Message) error {
	ctx.Finish()
	return nil
}

// BenchmarkSpawn reports the engine's cost per actor of a run's lifecycle
// (ns/actor): spawning 1000 actors on a reused System, as FedAvg's runs
// spawn their agents, executing a run that delivers one message, and closing
// it, which stops them all.
func BenchmarkSpawn(b *testing.B) {
	const actors = 1000
	system := NewSystem(nil)
	defer system.Close()
	b.ReportAllocs()
	for b.Loop() {
		r := NewRun(Options{System: system})
		for range actors {
			r.Spawn("agent", idle{})
		}
		if err := r.Execute(r.Spawn("finisher", finisher{}), &msg.Tick{}); err != nil {
			b.Fatal(err)
		}
		r.Close()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*(actors+1)), "ns/actor")
}
