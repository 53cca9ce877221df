package graphfl

import (
	"context"
	"fmt"
	"math/rand/v2"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"maple/algorithms/data"
	"maple/algorithms/fedavg"
	"maple/algorithms/loss"
	"maple/algorithms/rng"
	"maple/privacy/homomorphic"
	"maple/privacy/pairmask"
)

// Problem is what a run learns from: the P×P combination matrix A of the
// servers (A.At(m, p) = a_mp, the weight server p gives server m), the P·K
// client datasets, Sets[p·K + k] for client k of server p, the loss and the
// initial model W0 of every server.
type Problem struct {
	// A is the combination matrix.
	A mat.Matrix
	// Sets holds the clients' datasets, server by server.
	Sets []*data.Set
	// Loss is the regularized loss every client minimizes.
	Loss loss.Loss
	// W0 is every server's initial model.
	W0 []float64
}

// Hooks receive what Reference computes; any may be nil. The slices are the
// reference's state: copy them to keep them.
type Hooks struct {
	// Uploads receives, for server p in round i, the global indices of the
	// clients drawn (slot order) and what each sent: its model or update,
	// client noise included.
	Uploads func(i, p int, clients []int, replies [][]float64)
	// Aggregates receives Ψ[p] = ψ_{p,i}, the servers' noise-free
	// aggregates of round i, before the exchange.
	Aggregates func(i int, Psi [][]float64)
	// Draws receives G[p] = g_{p,i}, the servers' graph-homomorphic (or
	// broadcast) draws of round i.
	Draws func(i int, G [][]float64)
	// Models receives W[p] = w_{p,i} after round i.
	Models func(i int, W [][]float64)
	// Share receives every message of round i from server from to server
	// to, as it is sent: the aggregate with its noise or masks, what the
	// trace shows on that link.
	Share func(i, from, to int, v []float64)
}

// Reference runs rounds rounds of the whole recursion without actors or
// messages. The federated half of a round uses FedAvg's state machines (a
// fedavg.Server per server, a fedavg.Agent per client), which the FedAvg
// family tests against its own reference; the exchange is computed here in
// matrix form, Z[p] = Σ_m a_mp·(message m → p) in ascending m, written apart
// from Exchange. It draws from the same named streams in the same order as the
// actor engine, so for the same run seed it yields the same iterates; local
// graph-homomorphic masks come from the same derivations (package pairmask).
func Reference(cfg Config, prob Problem, runSeed uint64, rounds int, h Hooks) error {
	return ReferenceContext(context.Background(), cfg, prob, runSeed, rounds, h)
}

// ReferenceContext is Reference, stopping before its next round once ctx is
// done, with an error wrapping ctx.Err(); it changes nothing else, so that a
// run that is not interrupted has Reference's iterates.
func ReferenceContext(ctx context.Context, cfg Config, prob Problem, runSeed uint64, rounds int, h Hooks) error {
	net, err := NewNetwork(prob.A, cfg)
	if err != nil {
		return err
	}
	P, K, M := net.Servers(), cfg.Clients.Agents, len(prob.W0)
	if len(prob.Sets) != P*K {
		return fmt.Errorf("%d datasets for %d servers of %d clients", len(prob.Sets), P, K)
	}
	streams := func(owner, purpose string) *rand.Rand { return rng.New(runSeed, owner, purpose) }
	fed := cfg.Clients
	servers := make([]*fedavg.Server, P)
	clients := make([]*fedavg.Agent, P*K)
	noiseStreams := make([]*rand.Rand, P)
	for p := range P {
		servers[p] = fedavg.NewServer(&fed, prob.W0, streams(ServerName(p, P), StreamParticipation))
		if cfg.Privacy.Scheme != None {
			noiseStreams[p] = streams(ServerName(p, P), StreamNoise)
		}
		for k := range K {
			clients[p*K+k] = fedavg.NewAgent(&fed, prob.Sets[p*K+k], prob.Loss, ClientStreams(&fed, ClientName(p, k, K), streams))
		}
	}
	var masks *referenceMasks
	if cfg.Privacy.Scheme == LocalGraphHomomorphic {
		if masks, err = newReferenceMasks(net, M, streams); err != nil {
			return err
		}
	}
	psi, W, G := matrix(P, M), matrix(P, M), matrix(P, M)
	replies := matrix(fed.Draws(), M) // reused: each server's replies are combined before the next server's
	drawn := make([]int, fed.Draws())
	msg := make([]float64, M)
	pr := &cfg.Privacy
	for i := 1; i <= rounds; i++ {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("round %d: interrupted: %w", i, err)
		}
		for p, srv := range servers {
			for slot, k := range srv.Begin() {
				clients[p*K+k].Respond(replies[slot], srv.Model())
				if _, err := srv.Accept(slot, k, replies[slot]); err != nil {
					return err
				}
				drawn[slot] = p*K + k
			}
			if h.Uploads != nil {
				h.Uploads(i, p, drawn, replies)
			}
			srv.Combine()
			copy(psi[p], srv.Model())
		}
		if h.Aggregates != nil {
			h.Aggregates(i, psi)
		}
		if pr.Scheme == GraphHomomorphic || pr.Scheme == RandomBroadcast {
			for p := range G {
				pr.Mechanism.Fill(G[p], pr.Std, noiseStreams[p])
			}
			if h.Draws != nil {
				h.Draws(i, G)
			}
		}
		for p := range W {
			clear(W[p])
			for m := range P {
				a := net.Weight(m, p)
				if a == 0 {
					continue
				}
				copy(msg, psi[m])
				switch {
				case pr.Scheme == Random && (m != p || pr.SelfNoise):
					pr.Mechanism.Add(msg, pr.Std, noiseStreams[m])
				case pr.Scheme == RandomBroadcast && m != p:
					floats.Add(msg, G[m])
				case pr.Scheme == GraphHomomorphic:
					floats.AddScaled(msg, homomorphic.EdgeCoefficient(prob.A, pr.Form, m, p), G[m])
				case pr.Scheme == LocalGraphHomomorphic && m != p:
					masks.apply(msg, m, p, i)
				}
				if m != p && h.Share != nil {
					h.Share(i, m, p, msg)
				}
				floats.AddScaled(W[p], a, msg)
			}
		}
		for p, srv := range servers {
			copy(srv.Model(), W[p])
		}
		if h.Models != nil {
			h.Models(i, W)
		}
	}
	return nil
}

func matrix(rows, cols int) [][]float64 {
	m := make([][]float64, rows)
	for r := range m {
		m[r] = make([]float64, cols)
	}
	return m
}

// referenceMasks derives the local graph-homomorphic masks of every pair of
// servers, from one mask stream per unordered pair. With OSKeys its key pairs
// are its own draws from the operating system, not the actors': the masks
// differ, but they cancel at every receiver all the same.
type referenceMasks struct {
	net     *Network
	streams [][]*pairmask.MaskStream // [lo][hi]
	mask    []float64
}

func newReferenceMasks(net *Network, dim int, streams Streams) (*referenceMasks, error) {
	P, pr := net.Servers(), &net.cfg.Privacy
	rm := &referenceMasks{net: net, mask: make([]float64, dim)}
	var keys []*pairmask.KeyPair
	if pr.Keys == pairmask.Secure {
		for p := range P {
			kp, err := pairmask.NodeKeyPair(pr.OSKeys, func() *rand.Rand { return streams(ServerName(p, P), StreamKey) })
			if err != nil {
				return nil, err
			}
			keys = append(keys, kp)
		}
	}
	var err error
	rm.streams, err = pairmask.PairStreams(P, keys, func(l, m int) *rand.Rand { return streams(OracleStream(l, m)) })
	if err != nil {
		return nil, err
	}
	return rm, nil
}

// apply adds sender l's masks at receiver k in round i to msg, partners
// ascending.
func (rm *referenceMasks) apply(msg []float64, l, k, i int) {
	as, _ := rm.net.plan.Assignment(l, k)
	w := rm.net.Weight(l, k)
	for _, m := range as.Partners { // ascending, as SplitRoles returns them
		rm.streams[min(l, m)][max(l, m)].Fill(rm.mask, pairmask.Slot{Receiver: k, Iteration: i}, rm.net.cfg.Privacy.Std)
		pairmask.ApplyMask(msg, rm.mask, as.Role, w)
	}
}
