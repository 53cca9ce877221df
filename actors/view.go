package actors

// View is one vector per party of a run, filled as the parties report them
// for a round: the network-wide view an Observer hands on once every party
// has reported. It suits runs in which all reports of a round arrive before
// any of the next (a scheduler's barrier).
type View struct {
	// Rows[p] is party p's vector of the round.
	Rows [][]float64

	round, have int
}

// NewView returns an empty view of parties vectors of dimension dim.
func NewView(parties, dim int) *View {
	v := &View{Rows: make([][]float64, parties)}
	for p := range v.Rows {
		v.Rows[p] = make([]float64, dim)
	}
	return v
}

// Add stores party p's vector of round (a report of a new round starts the
// view afresh) and reports whether every party has now reported the round.
func (v *View) Add(p, round int, x []float64) bool {
	if round != v.round {
		v.round, v.have = round, 0
	}
	copy(v.Rows[p], x)
	v.have++
	return v.have == len(v.Rows)
}
