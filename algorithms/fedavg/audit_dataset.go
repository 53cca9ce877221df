package fedavg

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/floats"

	"maple/algorithms/data"
	"maple/algorithms/loss"
	"maple/algorithms/rng"
	"maple/privacy/audit"
)

// This file is the differential-privacy auditor of the thesis's privatized
// FedAvg (eqs. 2.56, 2.59–2.60; ε(i) of eq. 2.69): the neighbouring datasets
// of §2.5 replace agent 0's local dataset D by D′, and the adversary, who
// knows D and D′, the configuration, σ_g and agent 0's schedule and
// mini-batch streams — everything but agent 0's privacy noise —, watches
// agent 0's link to the server: the global model the server sends it and
// its noisy reply, in every round it takes part in. It replays agent 0's
// local training from each model it sees, once on D and once on D′, which
// gives the exact means μ₀ and μ₁ of the reply under either dataset given
// everything it saw, and scores the reply x by the log-likelihood ratio
// log f(x − μ₁) − log f(x − μ₀) of the noise law f, summed over the
// coordinates and the rounds. A many-run audit turns the scores of runs
// with and without the canary into a lower bound on ε.

// WireObserver receives what an observer of one agent's link to a
// synchronous server sees: each task the server sends the agent (the
// global model and, under importance sampling of agents, its probability
// p_k) and the agent's reply to it. A task is identified by its round and
// its slot in the round; the two calls of a task may come in either order,
// and tasks in increasing (round, slot) order.
type WireObserver interface {
	// Agent returns the index of the agent whose link is observed.
	Agent() int
	// Sent is the model w the server sent the agent for the task (round,
	// slot), with its probability p; Replied is the agent's reply x to it.
	// Neither keeps the slices.
	Sent(round, slot int, w []float64, p float64) error
	Replied(round, slot int, x []float64) error
}

// AuditVictim is the agent whose dataset a dataset audit replaces and whose
// link it observes: agent 0, the agent of the accountant's neighbouring
// datasets (thesis §2.5's agent 1).
const AuditVictim = 0

// AuditTask is what the auditor found in one task of the victim: its round,
// its score (the log-likelihood ratio of the reply), the shift μ₁ − μ₀ of the
// reply's mean between the datasets in ℓ2 and ℓ1 — the conditional
// sensitivity of the message — and, if the auditor was given a reference
// point, the distance of the model sent from it.
type AuditTask struct {
	Round          int
	Score          float64
	Shift2, Shift1 float64
	Error          float64
}

// DatasetAuditor scores the victim's replies (a WireObserver). It is a state
// machine fed by either engine; it scores a task once both its halves are in,
// in increasing (round, slot) order, so that both engines give the same
// scores bit for bit.
type DatasetAuditor struct {
	replica [2]*Agent // agent 0 on D and on D′, without noise
	law     audit.Noise
	reveal  bool // no noise: the reply is its mean
	dim     int
	ref     []float64

	pending map[[2]int]*wireTask
	mu      [2][]float64
	d       []float64
	tasks   []AuditTask
	// divergence is the sum of the tasks' divergences (Divergence).
	divergence float64
}

// wireTask is a task whose halves are not both in yet.
type wireTask struct {
	w, x []float64
	p    float64
}

// NewDatasetAuditor returns the auditor of the victim's link in a run of cfg
// with seed runSeed: sets[0] is the victim's dataset D, sets[1] its
// neighbour D′, l the loss. It replays the victim's training with the
// victim's own schedule and batch streams (rng.New(runSeed,
// AgentName(AuditVictim), purpose)), without noise. ref, if not nil, is the
// point whose distance from each model sent the auditor records (the
// optimum of the dataset the run trains on, for the thesis's event
// ‖w̃_i‖ ≤ B of eq. 2.64). It refuses what would make the replay differ from
// the victim's training or the wire differ from its reply: DP-FedAvg,
// secure aggregation, a differentially private client, adversaries,
// asynchronous servers and rounds that close early.
func NewDatasetAuditor(cfg *Config, sets [2]*data.Set, l loss.Loss, runSeed uint64, ref []float64) (*DatasetAuditor, error) {
	_, private := cfg.client().(PrivateClient)
	switch {
	case cfg.DP.Mode != NoDP:
		return nil, errors.New("the dataset audit is of the privatized replies of thesis eqs. 2.56 and 2.59; DP-FedAvg's are audited with canary clients")
	case cfg.SecAgg != nil:
		return nil, errors.New("under secure aggregation the victim's link carries masked shares, not its reply")
	case private:
		return nil, errors.New("the replay would need the noise of the differentially private client")
	case cfg.Eventful():
		return nil, errors.New("the auditor replays a synchronous server that waits for every reply, with honest agents")
	case sets[0] == nil || sets[1] == nil || sets[0].Dim != sets[1].Dim:
		return nil, errors.New("the victim's two datasets are missing or of different dimensions")
	}
	plain := *cfg
	plain.NoiseStd = 0
	a := &DatasetAuditor{dim: l.Dim(sets[0].Dim), pending: map[[2]int]*wireTask{}}
	if ref != nil {
		if len(ref) != a.dim {
			return nil, fmt.Errorf("a reference point of dimension %d for models of %d", len(ref), a.dim)
		}
		a.ref = slices.Clone(ref)
	}
	name := AgentName(AuditVictim)
	for h, set := range sets {
		s := AgentStreams(&plain, func(purpose string) *rand.Rand { return rng.New(runSeed, name, purpose) })
		a.replica[h] = NewAgent(&plain, set, l, s)
		a.replica[h].index = AuditVictim
		a.mu[h] = make([]float64, a.dim)
	}
	a.d = make([]float64, a.dim)
	if cfg.NoiseStd == 0 {
		a.reveal = true
	} else {
		a.law = audit.MechanismNoise(cfg.Noise, cfg.NoiseStd)
	}
	return a, nil
}

// Agent implements WireObserver: the auditor observes the victim's link.
func (a *DatasetAuditor) Agent() int { return AuditVictim }

// Sent implements WireObserver.
func (a *DatasetAuditor) Sent(round, slot int, w []float64, p float64) error {
	t, err := a.task(round, slot, w)
	if err != nil {
		return err
	}
	if t.w != nil {
		return fmt.Errorf("audit: a second model for the victim's task %d of round %d", slot, round)
	}
	t.w, t.p = slices.Clone(w), p
	return a.drain()
}

// Replied implements WireObserver.
func (a *DatasetAuditor) Replied(round, slot int, x []float64) error {
	t, err := a.task(round, slot, x)
	if err != nil {
		return err
	}
	if t.x != nil {
		return fmt.Errorf("audit: a second reply to the victim's task %d of round %d", slot, round)
	}
	t.x = slices.Clone(x)
	return a.drain()
}

// task returns the pending task (round, slot), opened if need be, after
// checking v's dimension.
func (a *DatasetAuditor) task(round, slot int, v []float64) (*wireTask, error) {
	if len(v) != a.dim {
		return nil, fmt.Errorf("audit: a vector of dimension %d on the victim's link, models have %d", len(v), a.dim)
	}
	if n := len(a.tasks); n > 0 && round < a.tasks[n-1].Round {
		return nil, fmt.Errorf("audit: a message of round %d after round %d was scored", round, a.tasks[n-1].Round)
	}
	key := [2]int{round, slot}
	t := a.pending[key]
	if t == nil {
		t = &wireTask{}
		a.pending[key] = t
	}
	return t, nil
}

// drain scores the pending tasks in (round, slot) order while the first is
// complete.
func (a *DatasetAuditor) drain() error {
	for len(a.pending) > 0 {
		var first [2]int
		started := false
		for k := range a.pending {
			if !started || k[0] < first[0] || k[0] == first[0] && k[1] < first[1] {
				first, started = k, true
			}
		}
		t := a.pending[first]
		if t.w == nil || t.x == nil {
			return nil
		}
		delete(a.pending, first)
		if err := a.score(first[0], t); err != nil {
			return err
		}
	}
	return nil
}

// score replays the victim's training on task t under both datasets and
// scores its reply.
func (a *DatasetAuditor) score(round int, t *wireTask) error {
	for h, r := range a.replica {
		if _, err := r.Train(a.mu[h], t.w, nil, t.p); err != nil {
			return fmt.Errorf("audit: replaying the victim's training of round %d: %w", round, err)
		}
	}
	mu0, mu1 := a.mu[0], a.mu[1]
	rec := AuditTask{Round: round}
	if a.reveal {
		rec.Score = audit.RevealedScore(t.x, mu0, mu1)
	} else {
		rec.Score = audit.IndependentScore([]audit.Noise{a.law}, [][]float64{t.x}, mu0, mu1)
	}
	floats.SubTo(a.d, mu1, mu0)
	rec.Shift2, rec.Shift1 = floats.Norm(a.d, 2), floats.Norm(a.d, 1)
	switch {
	case !a.reveal:
		a.divergence += audit.IndependentDivergence([]audit.Noise{a.law}, a.d)
	case rec.Shift2 > 0:
		a.divergence = math.Inf(1)
	}
	if a.ref != nil {
		rec.Error = floats.Distance(t.w, a.ref, 2)
	}
	a.tasks = append(a.tasks, rec)
	return nil
}

// Finish checks, once the run is over, that every task the auditor saw was
// scored: a model sent without a reply, or a reply to no model, is an error.
func (a *DatasetAuditor) Finish() error {
	for k, t := range a.pending {
		if t.x == nil {
			return fmt.Errorf("audit: the victim was sent a model in round %d (slot %d) and never replied", k[0], k[1])
		}
		return fmt.Errorf("audit: the victim replied in round %d (slot %d) to no model the auditor saw", k[0], k[1])
	}
	return nil
}

// Tasks returns the tasks scored, in order. The slice must not be changed.
func (a *DatasetAuditor) Tasks() []AuditTask { return a.tasks }

// Score returns the score after round i: the sum of the scores of the tasks
// of rounds 1…i.
func (a *DatasetAuditor) Score(i int) float64 {
	var s float64
	for _, t := range a.tasks {
		if t.Round > i {
			break
		}
		s += t.Score
	}
	return s
}

// Revealed reports whether the replies carry no noise, so that each reveals
// its mean: the likelihood ratio is then infinite, and the score
// ½(‖x − μ₀‖² − ‖x − μ₁‖²) has its sign.
func (a *DatasetAuditor) Revealed() bool { return a.reveal }

// Law returns the noise law of a reply's coordinates (meaningless when
// Revealed).
func (a *DatasetAuditor) Law() audit.Noise { return a.law }

// Divergence returns the Kullback–Leibler divergence, summed over the tasks
// scored, of the law of the victim's replies under D′ from that under D
// given what the auditor saw: the expected score of a run with the canary
// given its path, and minus that of a run without. It is +Inf where the
// replies are revealed and differ.
func (a *DatasetAuditor) Divergence() float64 { return a.divergence }

// Statistic describes the score in words, for the run's summary.
func (a *DatasetAuditor) Statistic() string {
	if a.reveal {
		return "the replies carry no noise, so each reveals its mean: the likelihood ratio is infinite, and the score ½(‖x − μ(D)‖² − ‖x − μ(D′)‖²), summed over the victim's tasks, has its sign"
	}
	return fmt.Sprintf("log-likelihood ratio of the victim's replies under D′ against D, each coordinate %v about the mean the replay of its training from the model it was sent gives (exact), summed over the coordinates and the victim's tasks", a.law)
}
