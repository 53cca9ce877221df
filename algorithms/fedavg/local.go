package fedavg

import (
	"fmt"
	"math/rand/v2"

	"gonum.org/v1/gonum/floats"

	"maple/algorithms/data"
	"maple/algorithms/loss"
	"maple/algorithms/sampling"
)

// Client is an agent's local objective and solver: what it does with the
// global model it receives before replying. Agent.Train hands it a Local —
// the model to train in place, the round's number of steps, mini-batch
// size and step size, and the agent's mini-batch sampler and gradient — and
// turns the trained model into the reply (the model or the update, plus
// privacy noise). Both engines train through Agent.Train, so a Client runs
// alike on both. A Client set as Config.Client is a value that keeps no
// state between rounds, one value serving every agent; a client that
// remembers is a StatefulClient, whose every agent has its own (state.go).
type Client interface {
	Train(t *Local) error
}

// SGD is the local learner of thesis eq. 1.30, the Client of a Config whose
// Client is nil: E_k steps w ← w − μ_k·∇̂J_k(w) on fresh mini-batches of
// B_k samples (importance-weighted under importance sampling of data,
// eq. 2.10).
type SGD struct{}

// Train implements Client. Where the loss fuses them (Loss.Fuses: the
// multi-class models on dense data), its steps are Descend(Gradient(…))
// fused into Loss.Step — the same model, bit for bit, without storing the
// gradient, and θ = θ₀ + w of an MLP kept beside the model rather than
// recomputed for every gradient — except the first under the partial agent
// policy, which reports that gradient's norm.
func (SGD) Train(t *Local) error {
	var theta []float64
	fused := t.Loss.Fuses(t.Set)
	for range t.Epochs {
		idx, weights, err := t.Batch()
		if err != nil {
			return err
		}
		if !fused || t.first && t.agent.cfg.Importance.Agents == Partial {
			t.Descend(t.Gradient(idx, weights))
			continue
		}
		if theta == nil && t.Loss.KeepsParams() {
			buf, th := gradBuffer(len(t.W))
			defer gradBuffers.Put(buf)
			t.Loss.Params(th, t.W)
			theta = th
		}
		t.Loss.Step(t.W, theta, t.Step, t.Set, idx, weights, t.grad)
		t.Charge(len(idx))
		t.first = false
		t.steps++
	}
	return nil
}

// Local is one local training of an agent, as its Client sees it. W is the
// local model, which starts as W0 — the global model w_{i−1} the agent
// received, read-only — and is trained in place. Epochs is the number of
// local steps E_k of this training and BatchSize the mini-batch size B_k;
// Step is the step size of one local step: μ, divided by E_k when steps are
// normalized (eq. 1.30) and by K·p_k under importance sampling of agents
// (eq. 2.10). Set and Loss are the agent's data and loss. FromServer is the
// side vector the server's rule sent with the model (a Broadcaster's, such
// as SCAFFOLD's control variate; nil otherwise), read-only; a client of a
// SideRule's server sets ToServer to the side vector of its reply, a slice
// it gives up (the engines send it as it is).
//
// Batch, Gradient and Descend are the pieces of a local SGD step, and do
// the agent's bookkeeping: importance sampling of data, the report of the
// partial agent policy, and the count of steps and sample gradients that
// the systems model turns into compute time. A Client that computes
// gradients itself charges them with Charge.
type Local struct {
	W, W0     []float64
	Epochs    int
	BatchSize int
	Step      float64
	Set       *data.Set
	Loss      loss.Loss
	// FromServer and ToServer are the side vectors of a rule that exchanges
	// more than the model and the reply (state.go).
	FromServer, ToServer []float64

	agent    *Agent
	grad     []float64
	first    bool    // no gradient has been computed yet
	gradNorm float64 // the first gradient's norm, for the partial agent policy
	steps    int
	charged  int
	record   []float64 // the white-box record of an audited client (RecordStep)
}

// Batch draws the next mini-batch: B_k sample indices, drawn as the
// configuration says (without or with replacement), or by the agent's
// importance-sampling policy for data, in which case weights are their
// estimator weights (eq. 2.10; nil otherwise: the plain mean) and the
// partial policy rewrites the drawn samples' probabilities (eq. 2.54). The
// slices are reused by the next call. It fails when importance sampling
// without replacement is impossible.
func (t *Local) Batch() (idx []int, weights []float64, err error) {
	a := t.agent
	idx = a.idx[:t.BatchSize]
	switch {
	case a.cfg.Importance.Data != Uniform:
		q := a.q[:t.BatchSize]
		if err := a.drawer.draw(idx, q, a.probs, a.batch); err != nil {
			return nil, nil, fmt.Errorf("drawing a mini-batch of %d: %w", t.BatchSize, err)
		}
		weights = a.a[:t.BatchSize]
		estimatorWeights(weights, q, a.set.Len())
		if a.cfg.Importance.Data == Partial {
			// eq. 2.54: rewrite the sampled entries from the norms at w_{i−1}.
			norms := q
			for b, n := range idx {
				norms[b] = sampleNorm(a.loss, t.W0, a.set, n, a.scratch)
			}
			sampling.PartialUpdate(a.probs, idx, norms)
			t.Charge(t.BatchSize)
		}
	case a.cfg.BatchWithReplacement:
		sampling.WithReplacement(idx, a.set.Len(), a.batch)
	default:
		sampling.WithoutReplacement(idx, a.set.Len(), a.batch)
	}
	return idx, weights, nil
}

// Gradient returns ∇̂J_k(W) on the mini-batch idx with estimator weights
// (nil: the mean), the regularized loss's gradient, and charges its sample
// gradients. The first gradient of a training is the one the partial agent
// policy reports (eq. 2.53). The slice is reused by the next call; a Client
// may change it before Descend.
func (t *Local) Gradient(idx []int, weights []float64) []float64 {
	t.Loss.Grad(t.grad, t.W, t.Set, idx, weights)
	t.Charge(len(idx))
	if t.first {
		t.first = false
		if t.agent.cfg.Importance.Agents == Partial {
			t.gradNorm = floats.Norm(t.grad, 2) // ∇̂J_k(w_{i−1})
		}
	}
	return t.grad
}

// Descend takes one local step along g: W ← W − Step·g.
func (t *Local) Descend(g []float64) {
	for j, x := range g {
		t.W[j] -= float64(t.Step * x) // rounded as Loss.Step rounds it, even where Go would fuse
	}
	t.steps++
}

// Charge counts n sample gradients computed by the Client itself, for the
// compute-time model.
func (t *Local) Charge(n int) { t.charged += n }

// Rand returns the agent's random stream for purpose, the same stream on
// every call and in both engines (derived from the run seed, the agent's
// name and purpose). A Client that draws — the noise of DP-SGD, say — draws
// from a purpose of its own.
func (t *Local) Rand(purpose string) *rand.Rand { return t.agent.Rand(purpose) }

// Rand returns the agent's random stream for purpose (Local.Rand): opened
// once through Streams.Named, then the same stream on every call, so that
// both engines draw its values in the same order.
func (a *Agent) Rand(purpose string) *rand.Rand {
	if r, ok := a.named[purpose]; ok {
		return r
	}
	if a.streams == nil {
		panic("fedavg: the agent was created without Streams.Named, so it cannot open the stream " + purpose)
	}
	r := a.streams(purpose)
	if a.named == nil {
		a.named = map[string]*rand.Rand{}
	}
	a.named[purpose] = r
	return r
}
