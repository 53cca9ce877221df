package ledger

import (
	"math"
	"sync"

	"maple/privacy/accountant/pld"
)

// sequences holds, for every mechanism, discretization and δ a ledger of
// the process has asked about, ε after n rounds of that mechanism alone,
// for the n asked so far: runs of one scenario ask the same questions, and
// each answer costs the PLD accountant a Fourier transform of the composed
// distribution.
var sequences sync.Map // sequenceKey → *sequence

type sequenceKey struct {
	m     pld.Mechanism
	opt   pld.Options
	delta float64
}

type sequence struct {
	mu  sync.Mutex
	eps map[int64]float64
	// infFrom is the fewest rounds found to give +Inf (0: none yet): ε
	// grows with the rounds, so every longer sequence does too, and its
	// composition — wider than the accountant's grid — need not be
	// computed again.
	infFrom int64
	// rounds is the mechanism's discretized round, made at the first
	// question: every count composes the same one.
	rounds *pld.Rounds
}

// sequenceEpsilon returns ε at delta of n rounds of m. Each value is the
// n-fold composition of the one discretized round (pld.Rounds, the same as
// pld.Compose), so it is the same whichever ledger asked first.
func sequenceEpsilon(m pld.Mechanism, opt pld.Options, delta float64, n int64) (float64, error) {
	v, _ := sequences.LoadOrStore(sequenceKey{m, opt, delta}, &sequence{eps: map[int64]float64{}})
	s := v.(*sequence)
	s.mu.Lock()
	defer s.mu.Unlock()
	if eps, ok := s.eps[n]; ok {
		return eps, nil
	}
	if s.infFrom > 0 && n >= s.infFrom {
		return math.Inf(1), nil
	}
	if s.rounds == nil {
		r, err := pld.NewRounds(m, opt)
		if err != nil {
			return 0, err
		}
		s.rounds = r
	}
	d, err := s.rounds.Compose(n)
	if err != nil {
		return 0, err
	}
	eps := d.Epsilon(delta)
	if math.IsNaN(eps) {
		eps = math.Inf(1)
	}
	if math.IsInf(eps, 1) && (s.infFrom == 0 || n < s.infFrom) {
		s.infFrom = n
	}
	s.eps[n] = eps
	return eps, nil
}
