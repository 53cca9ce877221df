package audittap

import (
	"errors"
	"testing"

	"google.golang.org/protobuf/proto"

	"maple/actors"
	"maple/actors/msg"
)

// countingAuditor sees the link 0 → 1 only and scores a round per message,
// its score the number of messages so far.
type countingAuditor struct{ seen []int }

func (a *countingAuditor) InView(from, to int) bool { return from == 0 && to == 1 }
func (a *countingAuditor) Scored() int              { return len(a.seen) }
func (a *countingAuditor) Score(i int) float64      { return float64(i) }

// sender sends three messages to its neighbour (ID + 1) in rounds 1, 2, 3,
// and finishes the run when the neighbour's answer to the third (a message
// the view leaves out) comes back.
type sender struct{}

func (sender) Receive(ctx *actors.Context, m proto.Message) error {
	if _, ok := m.(*msg.Start); !ok {
		ctx.Finish()
		return nil
	}
	for r := 1; r <= 3; r++ {
		ctx.SetRound(r)
		ctx.Send(ctx.Self()+1, &msg.Tick{})
	}
	return nil
}

// echo answers its sender's message of round 3.
type echo struct{}

func (echo) Receive(ctx *actors.Context, m proto.Message) error {
	if ctx.Round() == 3 {
		ctx.Send(ctx.Sender(), &msg.Tick{})
	}
	return nil
}

type keyObserver struct{ got [][2]float64 }

func (o *keyObserver) Observe(_ actors.ID, _ int, key string, v []float64) {
	if key == Key {
		o.got = append(o.got, [2]float64{v[0], v[1]})
	}
}

// The tap numbers the links from First, sees only its auditor's view, and
// reports every round scored once, in order; an error of Observe fails the
// run.
func TestTapFeedsTheViewAndReportsEachRound(t *testing.T) {
	obs := &keyObserver{}
	r := actors.NewRun(actors.Options{RunSeed: 1, Observer: obs})
	defer r.Close()
	r.Spawn("idle", echo{}) // ID 0: the protocol's actors start at 1
	first := r.Spawn("a", sender{})
	r.Spawn("b", echo{})
	a := &countingAuditor{}
	var rounds []int
	tap := &Tap{Auditor: a, First: first, Observe: func(round, from, to int, _ proto.Message) error {
		if from != 0 || to != 1 {
			t.Errorf("the tap was handed link %d → %d, out of the view", from, to)
		}
		rounds = append(rounds, round)
		a.seen = append(a.seen, round)
		return nil
	}}
	tap.Spawn(r)
	if err := r.Execute(first, &msg.Start{}); err != nil {
		t.Fatal(err)
	}
	if len(rounds) != 3 || rounds[0] != 1 || rounds[2] != 3 {
		t.Errorf("rounds handed to the auditor: %v, want [1 2 3]", rounds)
	}
	want := [][2]float64{{1, 1}, {2, 2}, {3, 3}}
	if len(obs.got) != len(want) {
		t.Fatalf("reported %v, want %v", obs.got, want)
	}
	for i := range want {
		if obs.got[i] != want[i] {
			t.Errorf("report %d is %v, want %v", i, obs.got[i], want[i])
		}
	}

	r2 := actors.NewRun(actors.Options{RunSeed: 1})
	defer r2.Close()
	first = r2.Spawn("a", sender{})
	r2.Spawn("b", echo{})
	refuse := errors.New("refused")
	(&Tap{Auditor: &countingAuditor{}, First: first, Observe: func(int, int, int, proto.Message) error { return refuse }}).Spawn(r2)
	if err := r2.Execute(first, &msg.Start{}); !errors.Is(err, refuse) {
		t.Errorf("Execute returned %v, want the auditor's error", err)
	}
}
