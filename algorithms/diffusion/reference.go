package diffusion

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"maple/algorithms/data"
	"maple/algorithms/loss"
	"maple/privacy/homomorphic"
	"maple/privacy/pairmask"
)

// Problem is what a run learns from: the combination matrix A (A.At(m, p) =
// a_mp, the weight receiver p gives sender m), agent p's dataset Sets[p], the
// loss and the initial model W0 shared by every agent.
type Problem struct {
	// A is the P×P combination matrix.
	A mat.Matrix
	// Sets[p] is agent p's local dataset.
	Sets []*data.Set
	// Loss is the regularized loss every agent minimizes.
	Loss loss.Loss
	// W0 is every agent's initial model.
	W0 []float64
	// Dynamics, if set, makes the graph time-varying: every iteration runs
	// on the live graph LinkProcess draws (same streams as the actor run's
	// scheduler).
	Dynamics *Dynamics
}

// Hooks receive what Reference computes; any may be nil. The slices are the
// reference's state: copy them to keep them.
type Hooks struct {
	// Models receives the P×M iterates W[p] = w_{p,i} after iteration i.
	Models func(i int, W [][]float64)
	// Draws receives the GH draws G[p] = g_p of stage j in iteration i.
	Draws func(i, j int, G [][]float64)
	// Live receives each iteration's live graph (time-varying graphs only).
	Live func(i int, lr *LiveRound)
	// Report receives what the agents' Outbox.Report would, with the
	// reporting agent.
	Report func(i, agent int, key string, v []float64)
	// Share receives every share of stage j in iteration i, sender from →
	// receiver to, as it is sent: the value with its noise or masks, what
	// the trace shows on that link.
	Share func(i, j, from, to int, v []float64)
}

// Reference runs iterations iterations of the whole recursion in matrix form,
// without actors or messages: the P×M state is updated stage by stage, each
// receiver's aggregate Σ_m a_mp·(y_m + noise_mp) formed in ascending m. It is
// the oracle of the actor engine and the flat baseline of its benchmarks:
// written apart from Agent, it draws from the same named streams in the same
// order, so for the same run seed it yields the same iterates. LGH masks come
// from the same derivations (package pairmask) as the agents'.
func Reference(cfg Config, prob Problem, runSeed uint64, iterations int, h Hooks) error {
	return ReferenceContext(context.Background(), cfg, prob, runSeed, iterations, h)
}

// ReferenceContext is Reference, stopping before its next iteration once ctx
// is done, with an error wrapping ctx.Err(); it changes nothing else, so that
// a run that is not interrupted has Reference's iterates.
func ReferenceContext(ctx context.Context, cfg Config, prob Problem, runSeed uint64, iterations int, h Hooks) error {
	r, err := newReference(cfg, prob, SeedStreams(runSeed))
	if err != nil {
		return err
	}
	var links *LinkProcess
	if prob.Dynamics != nil {
		if links, err = NewLinkProcess(prob.A, *prob.Dynamics, SeedStreams(runSeed)); err != nil {
			return err
		}
	}
	for i := 1; i <= iterations; i++ {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("iteration %d: interrupted: %w", i, err)
		}
		r.live = nil
		if links != nil {
			lr := links.Next(i)
			r.live = &lr
			if h.Live != nil {
				h.Live(i, r.live)
			}
		}
		r.iterate(i, h)
		if h.Models != nil {
			h.Models(i, r.state[Stage1])
		}
	}
	return nil
}

// matrix returns the combination matrix of the iteration: the live one on a
// time-varying graph.
func (r *reference) matrix() mat.Matrix {
	if r.live != nil {
		return r.live.A
	}
	return r.a
}

// down reports whether agent p skips the iteration.
func (r *reference) down(p int) bool { return r.live != nil && r.live.Down[p] }

// reference is the state of a Reference run.
type reference struct {
	cfg          Config
	a            mat.Matrix
	prob         Problem
	uses         [3]bool
	batch, noise []*rand.Rand
	state        [3][][]float64 // the input of each stage: w, φ, ψ by stage 1, 0, 2
	draws        [][]float64
	msg, grad    []float64
	idx          []int
	adapt        []AdaptState // each agent's adaptation step's memory
	masks        *referenceMasks
	live         *LiveRound  // the iteration's live graph, or nil
	delta        []float64   // one sender's masks, for Hooks.Report
	terms        []Term      // the terms of a combination other than Linear
	msgs         [][]float64 // their values, one buffer per sender
}

func newReference(cfg Config, prob Problem, streams Streams) (*reference, error) {
	net, err := NewNetwork(prob.A, cfg)
	if err != nil {
		return nil, err
	}
	P, M := net.Agents(), len(prob.W0)
	if len(prob.Sets) != P {
		return nil, fmt.Errorf("%d datasets for %d agents", len(prob.Sets), P)
	}
	r := &reference{cfg: cfg, a: prob.A, prob: prob, uses: cfg.Uses(),
		msg: make([]float64, M), grad: make([]float64, M), idx: make([]int, max(cfg.Batch, 1)), delta: make([]float64, M)}
	for p := range P {
		if err := checkAgent(net, p, prob.Sets[p], prob.Loss, prob.W0); err != nil {
			return nil, err
		}
		r.batch = append(r.batch, streams(AgentName(p), StreamBatch))
		r.noise = append(r.noise, streams(AgentName(p), StreamNoise))
		r.draws = append(r.draws, make([]float64, M))
		r.adapt = append(r.adapt, NewAdaptState(M))
	}
	for j := range r.state {
		r.state[j] = make([][]float64, P)
		for p := range P {
			r.state[j][p] = make([]float64, M)
		}
	}
	for p := range P {
		copy(r.state[Stage1][p], prob.W0)
	}
	if cfg.Privacy.Scheme == LocalGraphHomomorphic {
		r.masks, err = newReferenceMasks(cfg, prob.A, M, streams)
	}
	return r, err
}

// iterate runs iteration i: stage 1 (w → φ), stage 0 (φ → ψ, with the
// adaptation step) and stage 2 (ψ → w).
func (r *reference) iterate(i int, h Hooks) {
	w, phi, psi := r.state[Stage1], r.state[Stage0], r.state[Stage2]
	r.stage(i, Stage1, w, phi, h)
	r.stage(i, Stage0, phi, psi, h)
	for p := range psi {
		if r.down(p) {
			continue
		}
		gradient(r.grad, phi[p], r.prob.Sets[p], r.prob.Loss, &r.cfg, r.idx, r.batch[p])
		r.cfg.adapter().Adapt(psi[p], r.grad, r.cfg.StepSize, &r.adapt[p])
	}
	r.stage(i, Stage2, psi, w, h)
}

// stage sets Z to the stage-j combination of Y: a copy when A_j = I,
// otherwise Z[p] = Σ_m a_mp·(message m → p) for every receiver p.
func (r *reference) stage(i, j int, Y, Z [][]float64, h Hooks) {
	if !r.uses[j] {
		for p := range Y {
			copy(Z[p], Y[p])
		}
		return
	}
	pr := &r.cfg.Privacy
	A := r.matrix()
	if pr.Scheme == GraphHomomorphic {
		for m := range Y {
			if !r.down(m) {
				pr.Mechanism.Fill(r.draws[m], pr.Std, r.noise[m])
			}
		}
		if h.Draws != nil {
			h.Draws(i, j, r.draws)
		}
	}
	for p := range Z {
		if r.down(p) {
			copy(Z[p], Y[p]) // a down agent skips the round
			continue
		}
		if r.masks != nil {
			r.masks.prepare(p, i, j)
			if r.live != nil && h.Report != nil {
				if n := r.masks.uncancelled(p, A); n > 0 {
					h.Report(i, p, KeyUncancelled, []float64{float64(n)})
				}
			}
		}
		clear(Z[p])
		r.terms = r.terms[:0]
		for m := range Y {
			if a := A.At(m, p); a != 0 || m == p && !r.cfg.linear() { // Agent always has its self term
				r.message(Y[m], m, p, A)
				if m != p && h.Share != nil {
					h.Share(i, j, m, p, r.msg)
				}
				if !r.cfg.linear() {
					r.terms = append(r.terms, Term{Weight: a, X: r.keep(m), Self: m == p})
					continue
				}
				floats.AddScaled(Z[p], a, r.msg)
				if r.live != nil && m != p && r.masks != nil && r.masks.plus[p] != nil {
					r.masks.sum(r.delta, m, p, nil)
					r.report(h, i, m, p, j, r.delta)
				}
			}
		}
		if !r.cfg.linear() {
			r.cfg.Combine.Combine(Z[p], r.terms)
		}
		if r.live != nil && r.masks != nil && r.cfg.Privacy.Partner != IgnorePartner && r.masks.uncancelled(p, A) > 0 {
			r.repair(i, j, p, Y, Z[p], A, h)
		}
	}
}

// keep copies the message of sender m into a buffer of its own, for a
// combination other than Linear, which needs every term at once.
func (r *reference) keep(m int) []float64 {
	if r.msgs == nil {
		r.msgs = make([][]float64, len(r.prob.Sets))
	}
	if r.msgs[m] == nil {
		r.msgs[m] = make([]float64, len(r.msg))
	}
	copy(r.msgs[m], r.msg)
	return r.msgs[m]
}

// report hands a sender's mask report to the hooks.
func (r *reference) report(h Hooks, i, sender, receiver, j int, masks []float64) {
	if h.Report != nil {
		h.Report(i, sender, KeyMaskResidual, append([]float64{float64(receiver), float64(j)}, masks...))
	}
}

// repair applies the dropped-partner policy at receiver p of stage j: under
// drop-mask (and re-key with fewer than two live senders) it removes the
// masks of the absent partners, sender by sender in ascending order; under
// re-key it recomputes the aggregate from shares masked afresh with the
// roles of a new split of the live senders (slot stage + 3).
func (r *reference) repair(i, j, p int, Y [][]float64, z []float64, A mat.Matrix, h Hooks) {
	rm := r.masks
	var live []int
	for m := range Y {
		if m != p && A.At(m, p) != 0 {
			live = append(live, m)
		}
	}
	if r.cfg.Privacy.Partner == DropMask || len(live) < 2 {
		for _, l := range live {
			absent := rm.absent(l, p, A)
			if len(absent) == 0 {
				continue
			}
			rm.sum(r.delta, l, p, absent)
			floats.AddScaled(z, -1, r.delta)
			floats.Scale(-1, r.delta)
			r.report(h, i, l, p, j, r.delta)
		}
		return
	}
	plus, minus, _ := pairmask.SplitRoles(r.cfg.Privacy.Roles, p, live)
	shares := make([][]float64, len(Y))
	fresh := make([]float64, len(z))
	for _, l := range live {
		role, partners := pairmask.Plus, minus
		if slices.Contains(minus, l) {
			role, partners = pairmask.Minus, plus
		}
		share := slices.Clone(Y[l])
		clear(r.delta)
		for _, m := range partners {
			rm.secure[min(l, m)][max(l, m)].Fill(fresh, pairmask.Slot{Receiver: p, Iteration: i, Stage: j + 3}, rm.std)
			pairmask.ApplyMask(share, fresh, role, A.At(l, p))
			floats.AddScaled(r.delta, role.Sign(), fresh)
		}
		shares[l] = share
		old := make([]float64, len(z))
		rm.sum(old, l, p, nil)
		floats.Sub(r.delta, old)
		r.report(h, i, l, p, j, r.delta)
	}
	clear(z)
	for m := range Y {
		if a := A.At(m, p); a != 0 {
			x := Y[m]
			if m != p {
				x = shares[m]
			}
			floats.AddScaled(z, a, x)
		}
	}
}

// message sets r.msg to what sender m sends receiver p (or uses as its self
// term when m = p). Receivers are visited in ascending order, so each sender's
// noise stream is consumed receiver by receiver, as Agent does.
func (r *reference) message(y []float64, m, p int, A mat.Matrix) {
	pr := &r.cfg.Privacy
	copy(r.msg, y)
	switch {
	case pr.Scheme == Random && (m != p || pr.SelfNoise):
		pr.Mechanism.Add(r.msg, pr.Std, r.noise[m])
	case pr.Scheme == GraphHomomorphic:
		floats.AddScaled(r.msg, homomorphic.EdgeCoefficient(A, pr.Form, m, p), r.draws[m])
	case pr.Scheme == LocalGraphHomomorphic && m != p:
		r.masks.apply(r.msg, m, p, A.At(m, p))
	}
}

// referenceMasks derives the LGH masks of every receiver. The mask of pair
// (ℓ, m) at receiver k is computed once per stage and iteration and added, with
// opposite signs, to both senders' messages.
type referenceMasks struct {
	mode    pairmask.Mode
	osKeys  bool // X25519 key pairs from crypto/rand (Privacy.OSKeys)
	std     float64
	a       mat.Matrix
	params  pairmask.PaperParams
	plus    [][]int                  // per receiver: N₊ (nil if unmaskable)
	minus   [][]int                  // per receiver: N₋
	secure  [][]*pairmask.MaskStream // [ℓ][m] for ℓ < m (secure and oracle)
	paper   [][]*rand.Rand           // [ℓ][k]: PaperStream(k) of agent ℓ
	keys    [][][]pairmask.PaperKeys // [k][ℓ][partner index]
	public  []float64
	current [][][]float64 // masks of the prepared receiver, [plus index][minus index]
}

func newReferenceMasks(cfg Config, A mat.Matrix, dim int, streams Streams) (*referenceMasks, error) {
	P, _ := A.Dims()
	rm := &referenceMasks{mode: cfg.Privacy.Keys, osKeys: cfg.Privacy.OSKeys, std: cfg.Privacy.Std, a: A,
		params: pairmask.PaperParams{T: 1, Sigma: cfg.Privacy.Std},
		plus:   make([][]int, P), minus: make([][]int, P), public: make([]float64, 2*dim)}
	width := 0
	for k := range P {
		var senders []int
		for m := range P {
			if m != k && A.At(m, k) > 0 {
				senders = append(senders, m)
			}
		}
		if plus, minus, ok := pairmask.SplitRoles(cfg.Privacy.Roles, k, senders); ok {
			rm.plus[k], rm.minus[k] = plus, minus
			width = max(width, len(plus), len(minus))
		}
	}
	rm.current = make([][][]float64, width)
	for i := range rm.current {
		rm.current[i] = make([][]float64, width)
		for j := range rm.current[i] {
			rm.current[i][j] = make([]float64, dim)
		}
	}
	return rm, rm.sources(P, dim, streams)
}

// sources opens the mask sources of the key mode.
func (rm *referenceMasks) sources(P, dim int, streams Streams) error {
	switch rm.mode {
	case pairmask.Secure:
		return rm.agreeKeys(P, streams)
	case pairmask.Oracle:
		var err error
		rm.secure, err = pairmask.PairStreams(P, nil, func(l, m int) *rand.Rand { return streams(OracleStream(l, m)) })
		return err
	default:
		rm.paper = make([][]*rand.Rand, P)
		rm.keys = make([][][]pairmask.PaperKeys, P)
		for k := range P {
			rm.keys[k] = make([][]pairmask.PaperKeys, P)
			for _, set := range [2][]int{rm.plus[k], rm.minus[k]} {
				for _, l := range set {
					if rm.paper[l] == nil {
						rm.paper[l] = make([]*rand.Rand, P)
					}
					rm.paper[l][k] = streams(AgentName(l), PaperStream(k))
					for range rm.partners(k, l) {
						rm.keys[k][l] = append(rm.keys[k][l], pairmask.NewPaperKeys(dim))
					}
				}
			}
		}
	}
	return nil
}

// agreeKeys computes every pair's X25519 secret from the agents' key pairs,
// drawn from their key streams or, with OSKeys, from crypto/rand.
func (rm *referenceMasks) agreeKeys(P int, streams Streams) error {
	pairs := make([]*pairmask.KeyPair, P)
	for p := range P {
		kp, err := newKeyPair(rm.osKeys, streams, p)
		if err != nil {
			return err
		}
		pairs[p] = kp
	}
	var err error
	rm.secure, err = pairmask.PairStreams(P, pairs, nil)
	return err
}

// partners returns the opposite set of sender l at receiver k.
func (rm *referenceMasks) partners(k, l int) []int {
	if slices.Contains(rm.plus[k], l) {
		return rm.minus[k]
	}
	return rm.plus[k]
}

// prepare computes the masks of every pair at receiver k for stage j of
// iteration i.
func (rm *referenceMasks) prepare(k, i, j int) {
	if rm.plus[k] == nil {
		return
	}
	if rm.mode == pairmask.Paper {
		for _, set := range [2][]int{rm.plus[k], rm.minus[k]} {
			for _, l := range set {
				role := pairmask.Plus
				if slices.Contains(rm.minus[k], l) {
					role = pairmask.Minus
				}
				for _, keys := range rm.keys[k][l] {
					keys.Draw(role, rm.paper[l][k])
				}
			}
		}
	}
	for pi, l := range rm.plus[k] {
		for mi, m := range rm.minus[k] {
			dst := rm.current[pi][mi]
			switch rm.mode {
			case pairmask.Secure, pairmask.Oracle:
				rm.secure[min(l, m)][max(l, m)].Fill(dst, pairmask.Slot{Receiver: k, Iteration: i, Stage: j}, rm.std)
			default:
				rm.keys[k][m][pi].Public(rm.public)
				rm.params.Mask(dst, rm.keys[k][l][mi], rm.public)
			}
		}
	}
}

// apply adds sender l's masks at receiver k, which gives it the weight w,
// to msg, partners ascending.
func (rm *referenceMasks) apply(msg []float64, l, k int, w float64) {
	if rm.plus[k] == nil {
		return
	}
	if pi := slices.Index(rm.plus[k], l); pi >= 0 {
		for mi := range rm.minus[k] {
			pairmask.ApplyMask(msg, rm.current[pi][mi], pairmask.Plus, w)
		}
		return
	}
	mi := slices.Index(rm.minus[k], l)
	for pi := range rm.plus[k] {
		pairmask.ApplyMask(msg, rm.current[pi][mi], pairmask.Minus, w)
	}
}

// sum sets dst to the masks sender l adds at receiver k, weighted as k
// combines them: Σ_partners ±g, partners ascending; with only, the sum runs
// over those partners alone.
func (rm *referenceMasks) sum(dst []float64, l, k int, only []int) {
	clear(dst)
	if pi := slices.Index(rm.plus[k], l); pi >= 0 {
		for mi, m := range rm.minus[k] {
			if only == nil || slices.Contains(only, m) {
				floats.AddScaled(dst, pairmask.Plus.Sign(), rm.current[pi][mi])
			}
		}
		return
	}
	mi := slices.Index(rm.minus[k], l)
	for pi, m := range rm.plus[k] {
		if only == nil || slices.Contains(only, m) {
			floats.AddScaled(dst, pairmask.Minus.Sign(), rm.current[pi][mi])
		}
	}
}

// absent returns the partners of sender l at receiver k whose links to k
// are down in A.
func (rm *referenceMasks) absent(l, k int, A mat.Matrix) []int {
	partners := rm.plus[k]
	if slices.Contains(rm.plus[k], l) {
		partners = rm.minus[k]
	}
	var out []int
	for _, m := range partners {
		if A.At(m, k) == 0 {
			out = append(out, m)
		}
	}
	return out
}

// uncancelled counts the pairs at receiver k whose masks cannot cancel on
// the live matrix A: a live sender whose partner's link to k is down.
func (rm *referenceMasks) uncancelled(k int, A mat.Matrix) int {
	if rm.plus[k] == nil {
		return 0
	}
	n := 0
	for _, pair := range [2][2][]int{{rm.plus[k], rm.minus[k]}, {rm.minus[k], rm.plus[k]}} {
		for _, l := range pair[0] {
			if A.At(l, k) == 0 {
				continue
			}
			for _, m := range pair[1] {
				if A.At(m, k) == 0 {
					n++
				}
			}
		}
	}
	return n
}
