// Package randomwalk runs random-walk SGD and its gossip baseline (package
// algorithms/randomwalk) on the actor engine: one actor per node and a
// scheduler.
//
// Walk protocol:
//
//	env → scheduler          Start
//	scheduler → every node   Tick (round 0): announce yourself
//	node → each neighbour    WalkAnnounce{degree, log_weight}
//	node → scheduler         Done (round 0), once it knows every neighbour
//	scheduler → start node   WalkStart{walk}, per walk, once every node is done
//	node → neighbour         WalkToken{walk, step, model} (round = step), per accepted move
//	node → scheduler         Done (round T), where a walk ends; the last ends the run
//
// A node that holds a token takes SGD steps and Metropolis–Hastings decisions
// until a proposal is accepted; rejections cost no message.
//
// Gossip protocol, per iteration k:
//
//	scheduler → node i       Tick (round k): wake up
//	node i → neighbour j     GossipModel{model}
//	node j → node i          GossipModel{model, reply}
//	node i → scheduler       Done (round k)
//
// Behaviours report to the run's observer (outside the protocol) what the
// metrics need; Collector turns those reports back into calls of an
// algorithms/randomwalk.Observer, so a Tracker sees the same events as under
// the reference. Message sizes are the lengths of the messages' protobuf
// encodings (proto.Size; a token's is computed from its fields, which a test
// checks against proto.Size); WireSizer gives the reference the same sizes.
// A node that receives a token it may reuse (actors.Context.Reuse) sends it
// on, overwritten, rather than a new one.
package randomwalk
