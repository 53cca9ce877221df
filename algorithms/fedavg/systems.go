package fedavg

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"maple/algorithms/data"
	"maple/algorithms/loss"
	"maple/internal/enum"
	"maple/privacy/noise"
)

// This file holds what federated averaging does about the systems model
// (package algorithms/systems): how a synchronous server ends a round when
// replies are missing or late, the asynchronous servers FedAsync and FedBuff
// with their staleness weights, and the adversaries.

// Wait is when a synchronous server closes a round.
type Wait int

const (
	// WaitAll waits for every reply: a reply that never comes stalls the
	// run, which then fails naming the agents and the round.
	WaitAll Wait = iota
	// Deadline aggregates what arrived by Collect.Deadline seconds after the
	// broadcast (or earlier, once every reply is in).
	Deadline
	// FirstK aggregates the first Collect.K replies to arrive; the server
	// samples more agents than it needs (over-selection).
	FirstK
)

var waitNames = enum.Of[Wait]("collection policy", "all", "deadline", "first-k")

// String returns the scenario-file name of the policy.
func (w Wait) String() string { return waitNames.String(w) }

// ParseWait returns the policy named s.
func ParseWait(s string) (Wait, error) { return waitNames.Parse(s) }

// Collect is how a synchronous server collects a round's replies.
type Collect struct {
	Wait Wait
	// Deadline is the time, after the broadcast, at which a Deadline round
	// closes; a FirstK round also closes then if it is positive (0: it
	// waits for its K replies).
	Deadline float64
	// K is the number of replies a FirstK round aggregates.
	K int
	// Reweight combines the replies received only (the mean over them);
	// otherwise every missing reply counts as the current model (a zero
	// update), so the aggregate keeps the weights 1/L of the full round.
	Reweight bool
}

// Describe says what the policy is, in words.
func (c *Collect) Describe() string {
	switch c.Wait {
	case Deadline:
		return fmt.Sprintf("deadline %g s after the broadcast", c.Deadline)
	case FirstK:
		if c.Deadline > 0 {
			return fmt.Sprintf("first %d replies or %g s after the broadcast", c.K, c.Deadline)
		}
		return fmt.Sprintf("first %d replies", c.K)
	}
	return "all replies"
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

// StalenessNames lists the staleness functions' names.
func StalenessNames() []string { return stalenessNames.Names() }

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

// AttackKind is what an adversarial agent does to its reply.
type AttackKind int

const (
	// NoAttack is an honest agent.
	NoAttack AttackKind = iota
	// SignFlip sends the opposite of its update, scaled: w0 − s·(w − w0).
	SignFlip
	// Scaled sends its update multiplied by s: w0 + s·(w − w0).
	Scaled
	// GaussianNoise adds N(0, σ²) to every coordinate of its reply.
	GaussianNoise
	// LabelFlip trains honestly on data whose labels are flipped.
	LabelFlip
	// FreeRider returns the model it was sent without training.
	FreeRider
)

var attackNames = enum.Of[AttackKind]("adversary", "none", "sign-flip", "scaled", "gaussian", "label-flip", "free-rider")

// String returns the scenario-file name of the attack.
func (k AttackKind) String() string { return attackNames.String(k) }

// ParseAttack returns the attack named s.
func ParseAttack(s string) (AttackKind, error) { return attackNames.Parse(s) }

// Attack configures the adversaries of a run.
type Attack struct {
	Kind AttackKind
	// Fraction is the share of agents that are adversaries:
	// round(Fraction·K) of them, chosen by Adversaries.
	Fraction float64
	// Scale is s of SignFlip and Scaled; Std is σ of GaussianNoise.
	Scale, Std float64
}

// StreamAttack is the purpose of an adversary's own stream (its Gaussian
// noise); AdversaryOwner and AdversaryPurpose name the stream that chooses
// the adversaries.
const (
	StreamAttack     = "attack"
	AdversaryOwner   = "adversaries"
	AdversaryPurpose = "choose"
)

// Adversaries returns which of agents agents are adversaries: the first
// round(fraction·agents) of a permutation drawn from r, the run's
// (AdversaryOwner, AdversaryPurpose) stream. Nothing is drawn when there
// are none.
func Adversaries(r func() *rand.Rand, agents int, fraction float64) []bool {
	bad := make([]bool, agents)
	n := int(math.Round(fraction * float64(agents)))
	if n == 0 {
		return bad
	}
	for _, k := range r().Perm(agents)[:n] {
		bad[k] = true
	}
	return bad
}

// Apply turns an honest reply into the adversary's, in place: w0 is the
// model it was sent, r its StreamAttack stream (GaussianNoise only). With
// update sharing the reply is ψ = (w0 − w)/μ, so SignFlip and Scaled scale
// it by −s and s; with model sharing they scale w − w0. LabelFlip and
// FreeRider act before training (FlipLabels, and no training), so Apply
// leaves their replies unchanged.
func (a *Attack) Apply(reply, w0 []float64, share Share, r *rand.Rand) {
	var s float64
	switch a.Kind {
	case SignFlip:
		s = -a.Scale
	case Scaled:
		s = a.Scale
	case GaussianNoise:
		noise.Gaussian.Add(reply, a.Std, r)
		return
	default:
		return
	}
	for j := range reply {
		if share == Models {
			reply[j] = w0[j] + s*(reply[j]-w0[j])
		} else {
			reply[j] *= s
		}
	}
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

// validateSystems checks the collection policy, the asynchronous server and
// the adversaries, and refuses their combinations with importance sampling,
// whose estimator weights assume every sampled reply arrives.
func (c *Config) validateSystems() error {
	switch c.Collect.Wait {
	case WaitAll:
	case Deadline:
		if !(c.Collect.Deadline > 0) || math.IsInf(c.Collect.Deadline, 0) {
			return fmt.Errorf("deadline: must be a positive number of seconds, got %v", c.Collect.Deadline)
		}
	case FirstK:
		if c.Collect.K < 1 || c.Collect.K > c.Draws() {
			return fmt.Errorf("first-k: K must lie between 1 and the %d agents drawn per round, got %d", c.Draws(), c.Collect.K)
		}
		if !(c.Collect.Deadline >= 0) || math.IsInf(c.Collect.Deadline, 0) {
			return fmt.Errorf("first-k: the deadline must be a non-negative number of seconds, got %v", c.Collect.Deadline)
		}
	default:
		return fmt.Errorf("invalid collection policy %v", c.Collect.Wait)
	}
	if err := c.Async.Validate(c.Participants); err != nil {
		return err
	}
	if c.Async.Mode != Sync {
		if c.Collect.Wait != WaitAll {
			return fmt.Errorf("collection policy %v only applies to synchronous servers", c.Collect.Wait)
		}
		if c.Participation != WithoutReplacement {
			return fmt.Errorf("asynchronous servers keep %d distinct clients busy: participation must be without-replacement, not %v", c.Participants, c.Participation)
		}
	}
	a := &c.Attack
	if !(a.Fraction >= 0 && a.Fraction <= 1) {
		return fmt.Errorf("adversaries: fraction must lie in [0, 1], got %v", a.Fraction)
	}
	if !(a.Std >= 0) || math.IsNaN(a.Scale) || math.IsInf(a.Scale, 0) {
		return fmt.Errorf("adversaries: scale must be finite and std non-negative, got %v and %v", a.Scale, a.Std)
	}
	if c.Importance.Agents != Uniform || c.Importance.Data != Uniform {
		switch {
		case c.Collect.Wait != WaitAll:
			return fmt.Errorf("importance sampling assumes every sampled reply arrives: collection policy %v does not apply", c.Collect.Wait)
		case c.Async.Mode != Sync:
			return fmt.Errorf("importance sampling is synchronous: server %v does not apply", c.Async.Mode)
		case a.Kind != NoAttack:
			return fmt.Errorf("adversaries are not modelled under importance sampling")
		}
	}
	return nil
}

// Timed reports whether the policy sets a deadline timer at the broadcast.
func (c *Collect) Timed() bool {
	return c.Wait == Deadline || c.Wait == FirstK && c.Deadline > 0
}
