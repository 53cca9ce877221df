package loss

import (
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"

	"maple/algorithms/data"
)

// Params sets theta to the parameters θ = θ₀ + w of the model w, summed as
// Grad sums them, for Step: a multi-class model with an Origin keeps them
// beside w through its steps instead of recomputing them for every
// gradient. The loss must have an Origin.
func (l Loss) Params(theta, w []float64) {
	floats.AddTo(theta, l.Origin, w)
}

// KeepsParams reports whether Step needs the parameters θ = θ₀ + w beside
// the model: a multi-class model with an Origin.
func (l Loss) KeepsParams() bool { return !l.GLM() && l.Origin != nil }

// Fuses reports whether Step fuses the update into the gradient on the set
// s: for the multi-class models on dense or coded data. Otherwise Step is
// Grad followed by the update, which a caller that has the gradient's
// pieces at hand may as well call itself: on a model of a few parameters
// the extra call and its arguments are a tenth of a step.
func (l Loss) Fuses(s *data.Set) bool { return !l.GLM() && !s.Sparse() && l.Kind != CNN }

// Step takes one step of plain SGD in place, w ← w − μ·g with g =
// Grad(w, s, idx, a): bit for bit the model that Grad into a buffer
// followed by w_j −= μ·g_j gives. For the multi-class models on dense or
// coded data the step is fused into the gradient's last pass — the input
// layer's weights, nearly all of the model, are updated as their gradient
// is summed, which is never stored — and the parameters θ = θ₀ + w are not
// recomputed: when KeepsParams, theta holds them on entry (as Params
// leaves them) and Step keeps them so; otherwise theta is not read (nil
// will do). scratch has the length of w; its contents afterwards are
// unspecified. It does not allocate.
func (l Loss) Step(w, theta []float64, mu float64, s *data.Set, idx []int, a []float64, scratch []float64) {
	if !l.Fuses(s) {
		l.Grad(scratch, w, s, idx, a)
		for j, g := range scratch {
			w[j] -= float64(mu * g)
		}
		if l.KeepsParams() {
			l.Params(theta, w)
		}
		return
	}
	wk := workPool.Get().(*work)
	defer workPool.Put(wk)
	th, th0 := w, []float64(nil)
	if l.Origin != nil {
		th, th0 = theta, l.Origin
	}
	v, g := l.view(th, s.Dim), l.view(scratch, s.Dim)
	in := len(v.w1.Data) // the input layer's weights come first
	clear(scratch[in:])
	wk.idx = append(wk.idx[:0], idx...)
	b := wk.gather(s, wk.idx)
	z := l.forward(wk, &v, &b)
	total := l.deltas(z, s, idx, a)
	r := 2 * l.Rho * total
	d := z
	if l.Kind == MLP {
		d = l.hiddenDeltas(wk, &v, &g, &b, z)
	}
	var th0In, th0Rest []float64
	if th0 != nil {
		th0In, th0Rest = th0[:in], th0[in:]
	}
	stepTN(w[:in], th[:in], th0In, r, mu, d, b.x, scratch[:in])
	sumRows(g.b1, d)
	stepRest(w[in:], th[in:], th0Rest, scratch[in:], r, mu)
}

// deltas turns the probabilities' rows z of the batch idx into the output
// deltas a_i·(p_i − e_{y_i}) (uniform weights 1/len(idx) when a is nil) and
// returns the weights' total, as multiGrad does.
func (l Loss) deltas(z blas64.General, s *data.Set, idx []int, a []float64) (total float64) {
	k := l.Classes
	uniform := 1 / float64(len(idx))
	for i, n := range idx {
		ai := uniform
		if a != nil {
			ai = a[i]
		}
		total += ai
		row := z.Data[i*k : (i+1)*k]
		y := int(s.Y[n])
		softmaxRow(row, y)
		toDeltas(row, y, ai)
	}
	return total
}

// stepTN takes the SGD step on the block w (m×n row-major; th and th0
// alike) whose gradient's data terms are Dᵀ B for the deltas D (k×m) and
// the samples B (k×n): stepRows on each row, its terms the nonzero
// coefficients of D's column in order — gemmTN's sums. A batch longer than
// termBlock takes the unfused path: the gradient in scratch (the length of
// w), then the update.
func stepTN(w, th, th0 []float64, r, mu float64, d, b blas64.General, scratch []float64) {
	m, n, k := d.Cols, b.Cols, d.Rows
	if k > termBlock {
		clear(scratch)
		gemmTN(general(m, n, scratch), d, b)
		stepRest(w, th, th0, scratch, r, mu)
		return
	}
	checkGeneral(d)
	checkGeneral(b)
	var coef [termBlock]float64
	var off [termBlock]int
	for i := range m {
		t := 0
		for l := range k {
			if v := d.Data[l*d.Stride+i]; v != 0 {
				coef[t], off[t] = v, l*b.Stride
				t++
			}
		}
		var o []float64
		if th0 != nil {
			o = th0[i*n : (i+1)*n]
		}
		stepRows(w[i*n:(i+1)*n], th[i*n:(i+1)*n], o, r, mu, coef[:t], off[:t], b.Data)
	}
}
