package auditscore

import (
	"fmt"
	"math"
)

// Linear is the score w·(x − c) of a view x, fitted by FitLinear on runs
// with the canary in and out: w is the difference of the two classes' means
// (optionally divided coordinate-wise by their pooled variance) and c the
// midpoint of the means, so that a view at the in-class mean scores higher
// than one at the out-class mean.
//
// It is the score to use when the auditor does not know the distribution of
// what it observes — any family's messages or released models. Fit it on one
// part of the runs and score the others: a many-run audit is honest only if
// the runs it counts did not shape the score, so fit on the runs
// privacy/manyrun uses to choose its threshold (the first
// manyrun.SelectCount(n) of each sample) and let it count the rest.
type Linear struct {
	w, c []float64
}

// FitLinear fits the score on the views of runs with the canary in and out
// (each view a vector of one common dimension). Without whitening, w is the
// difference of the means: the log-likelihood ratio's direction when the
// views are the two means plus isotropic Gaussian noise (the Gaussian
// mechanism). With whitening, w_j is divided by the pooled within-class
// variance of coordinate j: the likelihood ratio's direction when the
// coordinates are independent Gaussians whose variances differ between
// coordinates but not between the classes (a diagonal Fisher discriminant).
// A coordinate with no within-class variance is divided by 10⁻¹² times the
// largest variance instead — it separated the fitted runs perfectly, and
// the score leans on it accordingly — and if no coordinate varies, w is the
// unwhitened difference. Whitening needs at least three views in all.
func FitLinear(in, out [][]float64, whiten bool) (Linear, error) {
	dim, err := checkViews(in, out)
	if err != nil {
		return Linear{}, err
	}
	if whiten && len(in)+len(out) < 3 {
		return Linear{}, fmt.Errorf("in, out: whitening needs at least 3 views in all, got %d", len(in)+len(out))
	}
	mIn, mOut := mean(in, dim), mean(out, dim)
	l := Linear{w: make([]float64, dim), c: make([]float64, dim)}
	for j := range dim {
		l.w[j] = mIn[j] - mOut[j]
		l.c[j] = (mIn[j] + mOut[j]) / 2
	}
	if !whiten {
		return l, nil
	}
	v := make([]float64, dim)
	for _, s := range []struct {
		x [][]float64
		m []float64
	}{{in, mIn}, {out, mOut}} {
		for _, x := range s.x {
			for j, xj := range x {
				d := xj - s.m[j]
				v[j] += d * d
			}
		}
	}
	var vmax float64
	for j := range v {
		v[j] /= float64(len(in) + len(out) - 2)
		vmax = max(vmax, v[j])
	}
	if vmax == 0 {
		return l, nil
	}
	floor := 1e-12 * vmax
	for j := range l.w {
		l.w[j] /= max(v[j], floor)
	}
	return l, nil
}

// Score returns w·(x − c) for a view of the fitted dimension.
func (l Linear) Score(x []float64) (float64, error) {
	if len(x) != len(l.w) {
		return 0, fmt.Errorf("view: dimension %d, the score was fitted on %d", len(x), len(l.w))
	}
	var s float64
	for j, xj := range x {
		if math.IsNaN(xj) || math.IsInf(xj, 0) {
			return 0, fmt.Errorf("view[%d]: must be finite, got %v", j, xj)
		}
		s += l.w[j] * (xj - l.c[j])
	}
	return s, nil
}

// checkViews returns the common dimension of the views, or the first one
// that is missing, of another dimension or not finite.
func checkViews(in, out [][]float64) (int, error) {
	if len(in) == 0 {
		return 0, fmt.Errorf("in: no views")
	}
	if len(out) == 0 {
		return 0, fmt.Errorf("out: no views")
	}
	dim := len(in[0])
	if dim == 0 {
		return 0, fmt.Errorf("in[0]: empty view")
	}
	for _, s := range []struct {
		name string
		x    [][]float64
	}{{"in", in}, {"out", out}} {
		for i, x := range s.x {
			if len(x) != dim {
				return 0, fmt.Errorf("%s[%d]: dimension %d, in[0] has %d", s.name, i, len(x), dim)
			}
			for j, xj := range x {
				if math.IsNaN(xj) || math.IsInf(xj, 0) {
					return 0, fmt.Errorf("%s[%d][%d]: must be finite, got %v", s.name, i, j, xj)
				}
			}
		}
	}
	return dim, nil
}

func mean(x [][]float64, dim int) []float64 {
	m := make([]float64, dim)
	for _, xi := range x {
		for j, v := range xi {
			m[j] += v
		}
	}
	for j := range m {
		m[j] /= float64(len(x))
	}
	return m
}
