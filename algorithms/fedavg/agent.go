package fedavg

import (
	"math/rand/v2"
	"sync"

	"gonum.org/v1/gonum/floats"

	"maple/algorithms/compress"
	"maple/algorithms/data"
	"maple/algorithms/loss"
	"maple/algorithms/sampling"
)

// Agent is one client's state machine: its local data and the local learner
// of eq. 1.30, or of eq. 2.10 under importance sampling.
type Agent struct {
	cfg       *Config
	set       *data.Set
	loss      loss.Loss
	schedule  *rand.Rand // draws E_k and B_k
	batch     *rand.Rand // draws mini-batches
	noise     *rand.Rand // draws privacy noise
	epochs    int
	batchSize int
	idx       []int
	index     int // k, set by the Pool: agent 0 is a many-run audit's canary

	// Importance sampling of data (nil probs: uniform).
	probs   []float64 // p_n^(k), the data policy's state
	norms   []float64 // per-sample gradient norms, scratch
	q, a    []float64 // normalized probability and estimator weight per draw
	drawer  *drawer
	scratch []float64

	client  Client                          // this agent's own (Config.newClient)
	enc     compress.Encoder                // this agent's own (Config.newEncoder), nil for dense replies
	streams func(purpose string) *rand.Rand // Streams.Named
	fresh   func(purpose string) *rand.Rand // Streams.Fresh, or Named
	named   map[string]*rand.Rand           // the streams opened by Local.Rand
	local   Local                           // the training in progress, reused
}

// gradBuffers recycles the agents' gradient buffers: an agent needs one only
// while it trains, and one per agent would be, with 1000 agents and a model
// of 7850 parameters, 63 MB of memory touched once per run. Which buffer an
// agent gets does not change its result (Grad overwrites it).
var gradBuffers = sync.Pool{New: func() any { return new([]float64) }}

// gradBuffer returns a pooled buffer of length n; put it back with
// gradBuffers.Put when done.
func gradBuffer(n int) (*[]float64, []float64) {
	buf := gradBuffers.Get().(*[]float64)
	if cap(*buf) < n {
		*buf = make([]float64, n)
	}
	return buf, (*buf)[:n]
}

// Streams are the random streams an agent owns, by purpose. Noise may be nil
// when the configuration adds no noise. Named, if set, opens the agent's
// stream for any other purpose (its Client's, through Local.Rand). Fresh,
// if set, opens the agent's stream for a purpose from its start on every
// call, where Named may resume it (a Pool's member resumes its streams where
// its last task left them): the canary stream of the DP audit, which must
// give the same draws at every task (audit.go); nil means Named.
type Streams struct {
	Schedule, Batch, Noise *rand.Rand
	Named                  func(purpose string) *rand.Rand
	Fresh                  func(purpose string) *rand.Rand
}

// NewAgent returns the agent learning on set. Under the PerAgent schedule it
// draws E_k and B_k now. Under the Optimal data policy it sets its data
// probabilities from the gradients at w^o (eq. 2.46).
func NewAgent(cfg *Config, set *data.Set, l loss.Loss, s Streams) *Agent {
	dim := l.Dim(set.Dim)
	a := &Agent{
		cfg: cfg, set: set, loss: l,
		schedule: s.Schedule, batch: s.Batch, noise: s.Noise, streams: s.Named, fresh: s.Fresh,
		idx: make([]int, cfg.Batch.Max), client: cfg.newClient(dim), enc: cfg.newEncoder(dim),
	}
	if a.fresh == nil {
		a.fresh = s.Named
	}
	if cfg.Schedule == PerAgent {
		a.drawSchedule()
	}
	imp := &cfg.Importance
	if imp.Data != Uniform || imp.Agents != Uniform && imp.Agents != Fixed {
		a.norms = make([]float64, set.Len())
		a.scratch = make([]float64, dim)
	}
	if imp.Data != Uniform {
		a.probs = make([]float64, set.Len())
		sampling.Uniform(a.probs)
		a.q = make([]float64, cfg.Batch.Max)
		a.a = make([]float64, cfg.Batch.Max)
		a.drawer = newDrawer(set.Len(), cfg.Batch.Max, cfg.BatchWithReplacement, imp.RandomOrder)
	}
	if imp.Data == Optimal {
		sampleNorms(a.norms, l, imp.Optimum, set, a.scratch)
		sampling.Proportional(a.probs, a.norms)
	}
	return a
}

func (a *Agent) drawSchedule() {
	a.epochs = sampling.IntInRange(a.cfg.Epochs.Min, a.cfg.Epochs.Max, a.schedule)
	a.batchSize = sampling.IntInRange(a.cfg.Batch.Min, a.cfg.Batch.Max, a.schedule)
}

// Probe answers the server's question of the Optimal and Adaptive agent
// policies (eqs. 2.48, 2.51): its gradient noise at the model w, with the full
// local gradient ∇J_k(w) and σ²_{s,k} evaluated with the data probabilities
// its policy would use at w. It changes no state. It also returns the number
// of sample gradients computed.
func (a *Agent) Probe(w []float64) (Report, int) {
	// The sample-gradient norms and the full local gradient ∇J_k(w) in one
	// pass over the data (a pooled buffer holds the gradient, see
	// gradBuffers).
	buf, g := gradBuffer(len(w))
	defer gradBuffers.Put(buf)
	a.loss.NormsAndFullGrad(a.norms, g, w, a.set, a.scratch)
	if a.cfg.Importance.Data == Adaptive {
		// The policy's probabilities at w (eq. 2.50). Respond recomputes
		// them from its own model before using them, so they are not state.
		sampling.Proportional(a.probs, a.norms)
	}
	return Report{
		GradNorm: floats.Norm(g, 2),
		Sigma2:   dataVariance(a.norms, a.probs, a.epochs, a.batchSize),
		Alpha:    alpha(a.epochs, a.batchSize),
	}, 2 * a.set.Len()
}

// Outcome is what Respond reports besides the reply vector.
type Outcome struct {
	// Steps is the number of local steps E_k taken and Gradients the number
	// of sample gradients computed, for the compute-time model.
	Steps     int
	Gradients int
	// Report is the agent's gradient noise at w_{i−1} for the Partial agent
	// policy (eq. 2.53): the norm of the first mini-batch's importance-
	// weighted gradient, σ²_{s,k} and α_k. Zero under other policies.
	Report Report
	// AuditSteps is the white-box record of an audited client's training
	// (ObsAuditSteps): for each local step, the model it started from and
	// its noisy sum of clipped gradients; nil otherwise.
	AuditSteps []float64
	// ToServer is the side vector the client sends with its reply
	// (Local.ToServer, for a SideRule's server), nil if it wrote none.
	ToServer []float64
}

// Respond trains from the global model w0 and writes the reply into dst: the
// local model w_{k,E_k} or the update (w0 − w_{k,E_k})/μ, plus privacy noise.
// It returns the number of sample gradients computed, for the compute-time
// model. It is Train for configurations without importance sampling, which
// cannot fail; it panics if Train fails.
func (a *Agent) Respond(dst, w0 []float64) (gradients int) {
	out, err := a.Train(dst, w0, nil, 0)
	if err != nil {
		panic("fedavg: Respond with an importance-sampling policy that failed: " + err.Error())
	}
	return out.Gradients
}

// Train is Respond under any policy: it runs the agent's Client (local SGD
// by default) from w0 in dst, then turns the local model into the reply.
// fromServer is the side vector the server sent with the model (Server.Side,
// nil for most rules), which the client reads as Local.FromServer; what the
// client writes in Local.ToServer comes back as Outcome.ToServer. p is the
// agent's normalized inclusion probability p_k sent by the server (used
// unless the agent policy is Uniform). It fails when the Client does, and
// when importance sampling without replacement is impossible: fewer samples
// with a positive probability than the mini-batch.
func (a *Agent) Train(dst, w0, fromServer []float64, p float64) (Outcome, error) {
	var out Outcome
	if a.cfg.Schedule == PerRound {
		a.drawSchedule()
	}
	if a.cfg.DP.Audit.Active() && a.canary(dst) { // audit.go
		return out, nil
	}
	// The local model is trained in dst itself and the gradient in a pooled
	// buffer, rather than in buffers owned by every agent (see gradBuffers).
	buf, grad := gradBuffer(len(w0))
	defer gradBuffers.Put(buf)
	copy(dst, w0)
	step := a.cfg.StepSize
	if a.cfg.Normalized {
		step /= float64(a.epochs)
	}
	imp := &a.cfg.Importance
	if imp.Agents != Uniform {
		step /= float64(a.cfg.Agents) * p // 1/(K p_k), eq. 2.10
	}
	if imp.Data == Adaptive {
		sampleNorms(a.norms, a.loss, w0, a.set, a.scratch) // eq. 2.50 at w_{i−1}
		sampling.Proportional(a.probs, a.norms)
		out.Gradients += a.set.Len()
	}
	if imp.Agents == Partial {
		if imp.Data != Adaptive {
			sampleNorms(a.norms, a.loss, w0, a.set, a.scratch)
			out.Gradients += a.set.Len()
		}
		out.Report = Report{Sigma2: dataVariance(a.norms, a.probs, a.epochs, a.batchSize), Alpha: alpha(a.epochs, a.batchSize)}
	}
	t := &a.local
	*t = Local{W: dst, W0: w0, Epochs: a.epochs, BatchSize: a.batchSize, Step: step, Set: a.set, Loss: a.loss,
		FromServer: fromServer, agent: a, grad: grad, first: true}
	err := a.client.Train(t)
	out.Gradients += t.charged
	out.Steps = t.steps
	out.AuditSteps = t.record
	out.ToServer = t.ToServer
	if imp.Agents == Partial {
		out.Report.GradNorm = t.gradNorm
	}
	a.local = Local{} // drop the references to this training's buffers
	if err != nil {
		return out, err
	}
	if a.cfg.Share == Updates {
		for j := range dst {
			dst[j] = (w0[j] - dst[j]) / a.cfg.StepSize
		}
	}
	if a.cfg.NoiseStd > 0 {
		a.cfg.Noise.Add(dst, a.cfg.NoiseStd, a.noise)
	}
	return out, nil
}
