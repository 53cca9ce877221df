package fedavg

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"maple/algorithms/data"
	"maple/algorithms/loss"
	"maple/internal/enum"
	"maple/internal/params"
	"maple/privacy/noise"
)

// This file holds what federated averaging does about the systems model
// (package algorithms/systems): how a synchronous server ends a round when
// replies are missing or late, the asynchronous servers FedAsync and FedBuff
// with their staleness weights, and the adversaries.

// Collector is a synchronous server's collection policy: when it closes a
// round whose replies are not all in. Both engines consult it (the actor
// server through actors/fedavg.ServerParts, reference.Simulate likewise). A
// Collector is a value; the zero value of a Config's Collect is WaitAll.
type Collector interface {
	// Timer returns the virtual seconds after the broadcast at which the
	// round closes with the replies received, 0 for no deadline.
	Timer() float64
	// Enough reports whether the round closes as soon as received replies
	// are in (before the others).
	Enough(received int) bool
	// Early reports whether a round may close before every reply is in,
	// so that replies can be late and rounds empty.
	Early() bool
	// Reweight reports whether a round closed early combines only the
	// replies received (the mean over them), rather than counting every
	// missing reply as the current model (a zero update), which keeps the
	// weights 1/L of the full round.
	Reweight() bool
	// String names the policy as scenario files do, and Describe says what
	// it is in words.
	String() string
	Describe() string
}

// WaitAll waits for every reply: a reply that never comes stalls the run,
// which then fails naming the agents and the round.
type WaitAll struct{}

// Timer implements Collector.
func (WaitAll) Timer() float64 { return 0 }

// Enough implements Collector.
func (WaitAll) Enough(int) bool { return false }

// Early implements Collector.
func (WaitAll) Early() bool { return false }

// Reweight implements Collector.
func (WaitAll) Reweight() bool { return false }

// String implements Collector.
func (WaitAll) String() string { return "all" }

// Describe implements Collector.
func (WaitAll) Describe() string { return "all replies" }

// Deadline aggregates what arrived by Seconds after the broadcast (or
// earlier, once every reply is in).
type Deadline struct {
	Seconds    float64 `yaml:"seconds" range:"(0, inf)" doc:"virtual seconds after the broadcast at which the round closes"`
	Reweighted bool    `yaml:"reweight" doc:"average over the replies received (true), or count each missing reply as the current model, a zero update (false)"`
}

// Timer implements Collector.
func (d Deadline) Timer() float64 { return d.Seconds }

// Enough implements Collector.
func (Deadline) Enough(int) bool { return false }

// Early implements Collector.
func (Deadline) Early() bool { return true }

// Reweight implements Collector.
func (d Deadline) Reweight() bool { return d.Reweighted }

// String implements Collector.
func (Deadline) String() string { return "deadline" }

// Describe implements Collector.
func (d Deadline) Describe() string {
	return fmt.Sprintf("deadline %g s after the broadcast", d.Seconds)
}

// FirstK aggregates the first K replies to arrive; the server samples more
// agents than it needs (over-selection). A positive Seconds also closes the
// round then.
type FirstK struct {
	K          int     `yaml:"k" range:"[1, inf)" doc:"replies aggregated per round (at most algorithm.fedavg.participants)"`
	Seconds    float64 `yaml:"seconds" range:"[0, inf)" doc:"also close the round this many virtual seconds after the broadcast (0: wait for the k replies)"`
	Reweighted bool    `yaml:"reweight" doc:"average over the replies received (true), or count each missing reply as the current model, a zero update (false)"`
}

// Timer implements Collector.
func (f FirstK) Timer() float64 { return f.Seconds }

// Enough implements Collector.
func (f FirstK) Enough(received int) bool { return received == f.K }

// Early implements Collector.
func (FirstK) Early() bool { return true }

// Reweight implements Collector.
func (f FirstK) Reweight() bool { return f.Reweighted }

// String implements Collector.
func (FirstK) String() string { return "first-k" }

// Describe implements Collector.
func (f FirstK) Describe() string {
	if f.Seconds > 0 {
		return fmt.Sprintf("first %d replies or %g s after the broadcast", f.K, f.Seconds)
	}
	return fmt.Sprintf("first %d replies", f.K)
}

// Validate implements Checker: the K replies must be among a round's
// draws, whose number must be fixed.
func (f FirstK) Validate(cfg *Config) error {
	if cfg.Participation == Poisson {
		return fmt.Errorf("first-k over-selects a round of fixed size and keeps k of its replies; under participation poisson a round's size is random (Binomial(K, q)), so k may exceed it: use all or deadline")
	}
	if f.K < 1 || f.K > cfg.Draws() {
		return params.Errorf("k", "the first %d replies of a round of %d draws: over-selection samples more agents than it keeps (raise the participants)", f.K, cfg.Draws())
	}
	return nil
}

// Mode is whether the server is synchronous or asynchronous.
type Mode int

const (
	// Sync runs rounds: broadcast, collect, combine.
	Sync Mode = iota
	// FedAsync updates the model on every arriving update, mixing it in
	// with weight α·s(τ) (Xie et al., 2019).
	FedAsync
	// FedBuff buffers updates and applies their staleness-weighted mean
	// every Async.Buffer arrivals (Nguyen et al., 2022).
	FedBuff
)

var modeNames = enum.Of[Mode]("server mode", "sync", "fedasync", "fedbuff")

// String returns the name of the mode.
func (m Mode) String() string { return modeNames.String(m) }

// StalenessKind is the shape of the staleness weight s(τ).
type StalenessKind int

const (
	// Constant is s(τ) = 1.
	Constant StalenessKind = iota
	// Polynomial is s(τ) = (1 + τ)^(−a).
	Polynomial
	// Hinge is s(τ) = 1 for τ ≤ b and 1/(a(τ − b) + 1) beyond.
	Hinge
)

var stalenessNames = enum.Of[StalenessKind]("staleness function", "constant", "polynomial", "hinge")

// String returns the scenario-file name of the function.
func (k StalenessKind) String() string { return stalenessNames.String(k) }

// ParseStaleness returns the staleness function named s.
func ParseStaleness(s string) (StalenessKind, error) { return stalenessNames.Parse(s) }

// Staleness is a staleness weight function s(τ) of FedAsync (Xie et al.,
// 2019, §5.2): τ = t − τ_k is how many model versions the server moved on
// while the update was computed.
type Staleness struct {
	Kind StalenessKind
	// A is the exponent of Polynomial and the slope of Hinge; B the hinge's
	// knee.
	A, B float64
}

// Weight returns s(τ).
func (s Staleness) Weight(tau int) float64 {
	t := float64(tau)
	switch s.Kind {
	case Polynomial:
		return math.Pow(1+t, -s.A)
	case Hinge:
		if t <= s.B {
			return 1
		}
		return 1 / (s.A*(t-s.B) + 1)
	}
	return 1
}

// Async configures an asynchronous server. Config.Participants clients
// train at once; each update received makes its client idle.
type Async struct {
	Mode Mode
	// Alpha is FedAsync's mixing weight α ∈ (0, 1]: w ← (1 − αs)w + αs·w_k.
	Alpha float64
	// Buffer is FedBuff's b: the model is updated every b arrivals, and b
	// new clients are then sent it; ServerRate is its server step η:
	// w ← w − η·(1/b)·Σ s(τ_k)·Δ_k.
	Buffer     int
	ServerRate float64
	// Staleness weighs each update by how stale it is.
	Staleness Staleness
	// Timeout, if positive, gives up on a client that has not answered
	// Timeout seconds after it was sent the model, and sends another idle
	// client the current model instead.
	Timeout float64
}

// Dispatched returns how many clients an asynchronous server sends the model
// after each model update: 1 for FedAsync, b for FedBuff.
func (a *Async) Dispatched() int {
	if a.Mode == FedBuff {
		return a.Buffer
	}
	return 1
}

// Validate checks an asynchronous configuration.
func (a *Async) Validate(participants int) error {
	switch a.Mode {
	case Sync:
		return nil
	case FedAsync:
		if !(a.Alpha > 0 && a.Alpha <= 1) {
			return fmt.Errorf("FedAsync's mixing weight α must lie in (0, 1], got %v", a.Alpha)
		}
	case FedBuff:
		if a.Buffer < 1 || a.Buffer > participants {
			return fmt.Errorf("FedBuff's buffer must hold between 1 and the %d concurrent clients, got %d", participants, a.Buffer)
		}
		if !(a.ServerRate > 0) || math.IsInf(a.ServerRate, 0) {
			return fmt.Errorf("FedBuff's server step η must be a positive number, got %v", a.ServerRate)
		}
	default:
		return fmt.Errorf("invalid server mode %v", a.Mode)
	}
	if !(a.Staleness.A >= 0 && a.Staleness.B >= 0) || math.IsInf(a.Staleness.A, 0) {
		return fmt.Errorf("staleness parameters a and b must be non-negative, got %v and %v", a.Staleness.A, a.Staleness.B)
	}
	if !(a.Timeout >= 0) {
		return fmt.Errorf("timeout must be a non-negative number of seconds, got %v", a.Timeout)
	}
	return nil
}

// MixAsync applies one FedAsync update to model in place: with model
// sharing w ← (1 − αs)w + αs·reply; with update sharing w ← w − αs·μ·ψ.
func MixAsync(model, reply []float64, share Share, mu, alpha, s float64) {
	a := alpha * s
	for j := range model {
		if share == Models {
			model[j] = (1-a)*model[j] + a*reply[j]
		} else {
			model[j] -= a * mu * reply[j]
		}
	}
}

// BufferedUpdate is one update in FedBuff's buffer: the client's update
// direction Δ (w_sent − w_k, or μψ) and its staleness weight.
type BufferedUpdate struct {
	Agent int
	Delta []float64
	S     float64
}

// ApplyBuffer applies FedBuff's step to model in place:
// w ← w − η·(1/b)·Σ s_k·Δ_k, summed in ascending agent order (then in the
// order of arrival for an agent with two updates in the buffer). buf is
// sorted in place.
func ApplyBuffer(model []float64, buf []BufferedUpdate, eta float64) {
	slices.SortStableFunc(buf, func(a, b BufferedUpdate) int { return a.Agent - b.Agent })
	scale := eta / float64(len(buf))
	for j := range model {
		var sum float64
		for _, u := range buf {
			sum += u.S * u.Delta[j]
		}
		model[j] -= scale * sum
	}
}

// Delta writes into dst the update direction of a reply to the model sent:
// sent − reply for model sharing, μ·reply for update sharing.
func Delta(dst, sent, reply []float64, share Share, mu float64) {
	for j := range dst {
		if share == Models {
			dst[j] = sent[j] - reply[j]
		} else {
			dst[j] = mu * reply[j]
		}
	}
}

// Adversary is what the adversarial agents of a run do: which share of the
// agents they are, what they train on, whether they train at all, and how
// they turn their reply. Both engines apply it (actors/fedavg.Agent and
// reference.Simulate). An Adversary is a value; a nil one, or one whose
// Share is 0, is an honest run.
type Adversary interface {
	// Share is the fraction of the agents that are adversaries:
	// round(Share·K) of them, chosen by Adversaries.
	Share() float64
	// Poison returns the dataset an adversary trains on, for loss l.
	Poison(set *data.Set, l loss.Loss) *data.Set
	// Trains reports whether an adversary trains before replying; one that
	// does not spends no compute time and Corrupt makes its reply.
	Trains() bool
	// Corrupt turns the reply in place into the adversary's: w0 is the
	// model it was sent and r its StreamAttack stream. With update sharing
	// the reply is ψ = (w0 − w)/μ.
	Corrupt(reply, w0 []float64, share Share, r *rand.Rand)
}

// Population is the share of adversaries every Adversary declares.
type Population struct {
	Fraction float64 `yaml:"fraction" range:"[0, 1]" doc:"share of the agents that are adversaries, chosen at random per run"`
}

// Share implements Adversary.
func (p Population) Share() float64 { return p.Fraction }

// Poison implements Adversary: the adversaries' own data.
func (Population) Poison(set *data.Set, _ loss.Loss) *data.Set { return set }

// Trains implements Adversary: adversaries train.
func (Population) Trains() bool { return true }

// Corrupt implements Adversary: the honest reply.
func (Population) Corrupt([]float64, []float64, Share, *rand.Rand) {}

// Honest is the run without adversaries.
type Honest struct{}

// Share implements Adversary.
func (Honest) Share() float64 { return 0 }

// Poison implements Adversary.
func (Honest) Poison(set *data.Set, _ loss.Loss) *data.Set { return set }

// Trains implements Adversary.
func (Honest) Trains() bool { return true }

// Corrupt implements Adversary.
func (Honest) Corrupt([]float64, []float64, Share, *rand.Rand) {}

// SignFlip sends the opposite of its update, scaled: w0 − s·(w − w0).
type SignFlip struct {
	Population `yaml:",inline"`
	Scale      float64 `yaml:"scale" range:"[0, inf)" doc:"factor of the flipped update"`
}

// Corrupt implements Adversary.
func (a SignFlip) Corrupt(reply, w0 []float64, share Share, _ *rand.Rand) {
	scaleUpdate(reply, w0, share, -a.Scale)
}

// Scaled sends its update multiplied by s: w0 + s·(w − w0).
type Scaled struct {
	Population `yaml:",inline"`
	Scale      float64 `yaml:"scale" doc:"factor of the update"`
}

// Corrupt implements Adversary.
func (a Scaled) Corrupt(reply, w0 []float64, share Share, _ *rand.Rand) {
	scaleUpdate(reply, w0, share, a.Scale)
}

// scaleUpdate multiplies the update a reply carries by s: w − w0 for model
// sharing, ψ for update sharing.
func scaleUpdate(reply, w0 []float64, share Share, s float64) {
	for j := range reply {
		if share == Models {
			reply[j] = w0[j] + s*(reply[j]-w0[j])
		} else {
			reply[j] *= s
		}
	}
}

// GaussianNoise adds N(0, Std²) to every coordinate of its reply.
type GaussianNoise struct {
	Population `yaml:",inline"`
	Std        float64 `yaml:"std" range:"[0, inf)" doc:"standard deviation per coordinate"`
}

// Corrupt implements Adversary.
func (a GaussianNoise) Corrupt(reply, _ []float64, _ Share, r *rand.Rand) {
	noise.Gaussian.Add(reply, a.Std, r)
}

// LabelFlip trains honestly on data whose labels are flipped (FlipLabels).
type LabelFlip struct {
	Population `yaml:",inline"`
}

// Poison implements Adversary.
func (LabelFlip) Poison(set *data.Set, l loss.Loss) *data.Set { return FlipLabels(set, l) }

// FreeRider returns the model it was sent without training (FreeRide).
type FreeRider struct {
	Population `yaml:",inline"`
}

// Trains implements Adversary.
func (FreeRider) Trains() bool { return false }

// Corrupt implements Adversary.
func (FreeRider) Corrupt(reply, w0 []float64, share Share, _ *rand.Rand) { FreeRide(reply, w0, share) }

// StreamAttack is the purpose of an adversary's own stream (its Gaussian
// noise); AdversaryOwner and AdversaryPurpose name the stream that chooses
// the adversaries.
const (
	StreamAttack     = "attack"
	AdversaryOwner   = "adversaries"
	AdversaryPurpose = "choose"
)

// ChooseAdversaries returns which of agents agents are the configuration's
// adversaries (Adversaries with its share); nil for an honest run.
func (c *Config) ChooseAdversaries(r func() *rand.Rand, agents int) []bool {
	if !c.Adversarial() {
		return nil
	}
	return Adversaries(r, agents, c.Adversary.Share())
}

// Adversaries returns which of agents agents are adversaries: the first
// round(fraction·agents) of the permutation rand.Rand.Perm draws from r, the
// run's (AdversaryOwner, AdversaryPurpose) stream (held in int32 while it is
// drawn, 4 bytes per agent). It returns nil, and draws nothing, when there
// are none.
func Adversaries(r func() *rand.Rand, agents int, fraction float64) []bool {
	n := int(math.Round(fraction * float64(agents)))
	if n == 0 {
		return nil
	}
	perm := make([]int32, agents)
	for i := range perm {
		perm[i] = int32(i)
	}
	r().Shuffle(agents, func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
	bad := make([]bool, agents)
	for _, k := range perm[:n] {
		bad[k] = true
	}
	return bad
}

// FreeRide writes the reply of a free-rider sent w0 into dst: w0 itself, or
// the zero update.
func FreeRide(dst, w0 []float64, share Share) {
	if share == Models {
		copy(dst, w0)
	} else {
		clear(dst)
	}
}

// FlipLabels returns a copy of set whose labels are flipped for loss l: the
// target negated for least squares and binary classification (±1 labels),
// class c → K−1−c for the multi-class models. The features are shared.
func FlipLabels(set *data.Set, l loss.Loss) *data.Set {
	out := *set
	out.Y = make([]float64, len(set.Y))
	for n, y := range set.Y {
		if l.Classes > 1 {
			out.Y[n] = float64(l.Classes-1) - y
		} else {
			out.Y[n] = -y
		}
	}
	return &out
}

// validateSystems checks the asynchronous server and refuses the
// combinations of the collection policy, the asynchronous servers and the
// adversaries with each other and with importance sampling, whose estimator
// weights assume every sampled reply arrives.
func (c *Config) validateSystems() error {
	if err := c.Async.Validate(c.Participants); err != nil {
		return err
	}
	early := c.Collect != nil && c.Collect.Early()
	if c.Async.Mode != Sync {
		if early {
			return fmt.Errorf("collection policy %v only applies to synchronous servers", c.Collect)
		}
		if c.Participation != WithoutReplacement {
			return fmt.Errorf("asynchronous servers keep %d distinct clients busy: participation must be without-replacement, not %v", c.Participants, c.Participation)
		}
	}
	if c.Importance.Agents != Uniform || c.Importance.Data != Uniform {
		switch {
		case early:
			return fmt.Errorf("importance sampling assumes every sampled reply arrives: collection policy %v does not apply", c.Collect)
		case c.Async.Mode != Sync:
			return fmt.Errorf("importance sampling is synchronous: server %v does not apply", c.Async.Mode)
		case c.Adversarial():
			return fmt.Errorf("adversaries are not modelled under importance sampling")
		}
	}
	return nil
}

// Collection returns the collection policy, WaitAll when Collect is nil.
func (c *Config) Collection() Collector {
	if c.Collect == nil {
		return WaitAll{}
	}
	return c.Collect
}

// Adversarial reports whether the run has adversaries.
func (c *Config) Adversarial() bool { return c.Adversary != nil && c.Adversary.Share() > 0 }

// Eventful reports whether a run of the configuration needs the
// event-driven reference (reference.Simulate) rather than the flat one
// (reference.Reference): rounds may close early, the server is asynchronous
// or some agents are adversaries.
func (c *Config) Eventful() bool {
	return c.Collection().Early() || c.Async.Mode != Sync || c.Adversarial()
}
