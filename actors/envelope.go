package actors

import (
	"fmt"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"maple/actors/msg"
)

// ID identifies an actor within a run. IDs are dense, assigned in spawn order
// from 0; Environment is the run harness.
type ID int32

// Environment is the sender ID of messages injected by the run harness.
const Environment ID = -1

// Envelope is a message in flight with its routing metadata. Payloads are
// treated as immutable once sent.
type Envelope struct {
	// Seq numbers the messages of a run in delivery order, from 1.
	Seq uint64
	// From and To are the sender and receiver.
	From, To ID
	// Round is the round the message belongs to.
	Round int
	// Time is the virtual arrival time in seconds.
	Time float64
	// Body is the payload.
	Body proto.Message

	sent     uint64  // send order, which breaks ties between equal arrival times
	departed float64 // the sender's clock when it sent the message
	cause    uint64  // Seq of the delivery whose handling sent it; 0 for the harness
	tapped   bool    // a wiretap's copy: not the protocol's message
	intended ID      // for a copy, the receiver the message was addressed to
	timer    bool    // a timer (Context.After): due after the messages arriving at the same time
	lost     bool    // lost on its link: traced at its arrival time, never delivered
	copy     bool    // the second copy of a duplicated message
	passed   bool    // its sender gave the body up (Context.Pass), and nothing else refers to it
	target   *cell   // a lazy receiver's cell, woken when the message was sent; nil for the others
}

// Wire returns the protobuf form of the envelope, for crossing processes.
func (e *Envelope) Wire() (*msg.WireEnvelope, error) {
	body, err := anypb.New(e.Body)
	if err != nil {
		return nil, fmt.Errorf("actors: packing %T: %w", e.Body, err)
	}
	return &msg.WireEnvelope{Seq: e.Seq, From: int32(e.From), To: int32(e.To), Round: int64(e.Round), Time: e.Time, Body: body}, nil
}

// FromWire rebuilds an envelope from its protobuf form. The payload type must
// be linked into the program (every type in maple/actors/msg is).
func FromWire(w *msg.WireEnvelope) (*Envelope, error) {
	body, err := w.GetBody().UnmarshalNew()
	if err != nil {
		return nil, fmt.Errorf("actors: unpacking %s: %w", w.GetBody().GetTypeUrl(), err)
	}
	return &Envelope{Seq: w.GetSeq(), From: ID(w.GetFrom()), To: ID(w.GetTo()), Round: int(w.GetRound()), Time: w.GetTime(), Body: body}, nil
}
