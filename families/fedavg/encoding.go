package fedavg

import (
	"fmt"
	"math"
	"slices"

	"maple/algorithms/fedavg"
	"maple/privacy/fixedpoint"
)

// This file measures what secure aggregation's grid does to the clients'
// inputs (fedavg.ObsSecAggEncoding, reported by each client outside the
// protocol: the server sees only the sum), and says so when the grid is
// coarser than the updates or clips them. A grid step above the updates
// used to round every one of them to zero without an error anywhere; the
// inputs are now rounded without bias, and the summary and the warnings
// give the error that rounding costs.

// encodingLog sums each round's encodings in slot order and keeps the
// per-round totals.
type encodingLog struct {
	pending []pendingEncoding // the observations of rounds not yet closed
	closed  int               // the last round closed: later reports of it are late
	rounds  []roundEncoding   // the closed rounds with encodings, in order
	// inputs and clipped count every input reported, late ones included,
	// and the coordinates clipped in them (the summary's range_errors).
	inputs, clipped float64
}

type pendingEncoding struct {
	round, slot     int
	error2, update2 float64
}

// roundEncoding is a round's sums over its clients' inputs: ‖x̃ − x‖²,
// ‖update‖² and the number of inputs.
type roundEncoding struct {
	round           int
	error2, update2 float64
	inputs          int
}

// observe records one client's fedavg.Encoding.Observation.
func (l *encodingLog) observe(round int, v []float64) {
	l.inputs++
	l.clipped += v[3]
	if round <= l.closed {
		return // a client that trained after its round closed: not in the sum
	}
	l.pending = append(l.pending, pendingEncoding{round: round, slot: int(v[0]), error2: v[1], update2: v[2]})
}

// close sums the encodings of the rounds up to round, each in ascending
// slot order (never in arrival order, so that both engines give the same
// bits): the server reports a round's costs when it ends.
func (l *encodingLog) close(round int) {
	slices.SortStableFunc(l.pending, func(a, b pendingEncoding) int {
		if a.round != b.round {
			return a.round - b.round
		}
		return a.slot - b.slot
	})
	n := 0
	for n < len(l.pending) && l.pending[n].round <= round {
		p := l.pending[n]
		if len(l.rounds) == 0 || l.rounds[len(l.rounds)-1].round != p.round {
			l.rounds = append(l.rounds, roundEncoding{round: p.round})
		}
		r := &l.rounds[len(l.rounds)-1]
		r.error2 += p.error2
		r.update2 += p.update2
		r.inputs++
		n++
	}
	l.pending = slices.Delete(l.pending, 0, n)
	l.closed = max(l.closed, round)
}

// encodingSummary is what a run's encodings amount to.
type encodingSummary struct {
	// relative is ‖x̃ − x‖/‖update‖ over every input of the closed rounds,
	// worst the largest of a round's (at worstRound); rms is the updates'
	// root-mean-square coordinate, and above the number of rounds in which
	// the grid step exceeded the round's own.
	relative, worst, rms float64
	worstRound, above    int
	measured             bool // some update was not zero
}

// summary computes the run's figures for a model of dim coordinates and
// the grid step.
func (l *encodingLog) summary(dim int, step float64) encodingSummary {
	l.close(math.MaxInt)
	var s encodingSummary
	var e2, u2, inputs float64
	for _, r := range l.rounds {
		e2, u2, inputs = e2+r.error2, u2+r.update2, inputs+float64(r.inputs)
		if r.update2 == 0 {
			continue
		}
		if rel := math.Sqrt(r.error2 / r.update2); rel > s.worst || s.worstRound == 0 {
			s.worst, s.worstRound = rel, r.round
		}
		if step > math.Sqrt(r.update2/(float64(r.inputs)*float64(dim))) {
			s.above++
		}
	}
	if u2 > 0 {
		s.measured = true
		s.relative = math.Sqrt(e2 / u2)
		s.rms = math.Sqrt(u2 / (inputs * float64(dim)))
	}
	return s
}

// clippingWarnsAt is the encoding's measured error, relative to the
// updates' norm, from which coordinates clipped to the encoder's range are
// warned of: a tenth. Fewer are counted (range_errors) without a warning —
// secagg/costs.yaml clips 5 of 20 000 coordinates at n = 200, an error of
// 3 % — and a run that clips its updates wholesale (a diverging local
// training, whose inputs used to be clipped round after round without a
// word) is far above it.
const clippingWarnsAt = 0.1

// encodingWarnings returns what a run's encodings warn of: a grid step
// above the clients' typical update (the root mean square of the updates'
// coordinates), and — but under distributed DP, whose own warning says
// why it matters there — coordinates clipped to the encoder's range when
// the encoding's error reaches clippingWarnsAt.
func encodingWarnings(l *encodingLog, cfg *fedavg.Config, enc fixedpoint.Encoder, dim int) []string {
	var out []string
	s := l.summary(dim, enc.Step())
	sa := cfg.SecAgg
	if s.measured && enc.Step() > s.rms {
		out = append(out, fmt.Sprintf("privacy.secure_aggregation: the grid step clip/L = %.2g (clip %v, L = %d for %d bits and %d clients per round) exceeds the clients' typical update, %.2g per coordinate (root mean square): the inputs the server sums differ from the clients' by %.2g times the updates' norm (1 when every update is lost to the rounding); raise bits or lower clip (summary: details.secure_aggregation.quantization_error)",
			enc.Step(), sa.Clip, enc.Levels(), sa.Bits, cfg.Draws(), s.rms, s.relative))
	}
	if l.clipped > 0 && cfg.DP.Mode != fedavg.DistributedDP && (!s.measured || s.relative >= clippingWarnsAt) {
		out = append(out, fmt.Sprintf("privacy.secure_aggregation: %v of the %v coordinates the clients encoded (%.3g %%) exceeded the clip %v and were clipped to it, which biases the sum toward zero (the inputs the server sums differ from the clients' by %.2g times the updates' norm); raise the clip (summary: details.secure_aggregation.range_errors)",
			l.clipped, l.inputs*float64(dim), 100*l.clipped/(l.inputs*float64(dim)), sa.Clip, s.relative))
	}
	return out
}

// encodingDetails describes the rounding and its measured error in the
// summary.
func encodingDetails(l *encodingLog, cfg *fedavg.Config, enc fixedpoint.Encoder, dim int) (rounding string, quantization map[string]any) {
	rounding = "unbiased randomized rounding: each coordinate, clipped to [-clip, clip], goes to one of its two neighbouring levels with the probabilities that make its expectation the coordinate (each agent's secagg-rounding stream)"
	if cfg.DP.Mode == fedavg.DistributedDP {
		rounding = "conditional randomized rounding of distributed DP (unbiased, redrawn until the rounded update's norm is within the bound; each agent's dp stream), then the discrete Gaussian noise"
	}
	s := l.summary(dim, enc.Step())
	q := map[string]any{
		"definition": "‖x̃ − x‖/‖d‖ over a round's inputs: x the input before the encoding, x̃ the grid point encoded (before distributed DP's noise), d the update x carries (x under update sharing, x minus the round's model under model sharing); each client measures its own, outside the protocol, and the server never sees it",
	}
	if !s.measured {
		q["relative"] = "not measured: every update was zero"
		return rounding, q
	}
	q["relative"] = s.relative
	q["worst_round"] = s.worstRound
	q["worst_round_relative"] = s.worst
	q["update_rms_coordinate"] = s.rms
	q["rounds_step_above_update"] = s.above
	return rounding, q
}
