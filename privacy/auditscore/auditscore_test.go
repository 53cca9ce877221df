package auditscore

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// The scores are the log of the ratio of the two hypotheses' densities,
// which gonum evaluates independently: per round the mixture density
// (1 − q)·p(x) + q·p(x − s) over p(x). The sum over 50 rounds of terms of
// order 1 agrees to 1e-12 absolute (each term is a log-sum-exp of order-one
// numbers, exact to a few ulps; 50 of them stay far inside 1e-12).
func TestScoresAreLogLikelihoodRatios(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, q := range []float64{0.05, 0.5, 1} {
		for _, s := range []float64{0.5, 2} {
			x := make([]float64, 50)
			for i := range x {
				x[i] = 2 * r.NormFloat64()
			}
			gauss, lap := distuv.Normal{Sigma: 1.5}, distuv.Laplace{Scale: 0.7}
			var wantG, wantL float64
			for _, v := range x {
				wantG += math.Log(((1-q)*gauss.Prob(v) + q*gauss.Prob(v-s)) / gauss.Prob(v))
				wantL += math.Log(((1-q)*lap.Prob(v) + q*lap.Prob(v-s)) / lap.Prob(v))
			}
			g, err := Gaussian(x, s, 1.5, q)
			if err != nil || math.Abs(g-wantG) > 1e-12 {
				t.Errorf("Gaussian q = %v, s = %v: %v, want %v (%v)", q, s, g, wantG, err)
			}
			l, err := Laplace(x, s, 0.7, q)
			if err != nil || math.Abs(l-wantL) > 1e-12 {
				t.Errorf("Laplace q = %v, s = %v: %v, want %v (%v)", q, s, l, wantL, err)
			}
		}
	}
}

// At q = 1 the Gaussian score is the linear (s·Σx − T·s²/2)/σ², and far in
// the tail a round's term is log q + (s·x − s²/2)/σ² to rounding: the
// log-sum-exp neither overflows (e^999 would) nor loses the term.
func TestGaussianLinearAndTail(t *testing.T) {
	x := []float64{0.3, -1.2, 2.5}
	got, _ := Gaussian(x, 2, 0.5, 1)
	want := (2*(0.3-1.2+2.5) - 3*2) / 0.25
	if math.Abs(got-want) > 1e-13 {
		t.Errorf("q = 1: %v, want %v", got, want)
	}
	got, _ = Gaussian([]float64{1000}, 1, 1, 0.05)
	want = math.Log(0.05) + 999.5
	if math.IsInf(got, 0) || math.Abs(got-want) > 1e-12*want {
		t.Errorf("tail: %v, want %v", got, want)
	}
}

// A Laplace round moves the log ratio by at most |s|/b either way.
func TestLaplaceSaturates(t *testing.T) {
	for _, x := range []float64{-1e6, -3, 0, 0.5, 1, 7, 1e6} {
		v, _ := Laplace([]float64{x}, 1, 0.5, 1)
		if math.Abs(v) > 2+1e-12 {
			t.Errorf("x = %v: %v beyond ±2", x, v)
		}
	}
	if v, _ := Laplace([]float64{5}, 1, 0.5, 1); v != 2 {
		t.Errorf("x beyond the shift: %v, want exactly 2", v)
	}
}

func TestScoreErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"x", second(Gaussian(nil, 1, 1, 1))},
		{"q", second(Gaussian([]float64{1}, 1, 1, 0))},
		{"q", second(Laplace([]float64{1}, 1, 1, 1.5))},
		{"sigma", second(Gaussian([]float64{1}, 1, 0, 1))},
		{"b", second(Laplace([]float64{1}, 1, math.Inf(1), 1))},
		{"s", second(Gaussian([]float64{1}, math.NaN(), 1, 1))},
		{"x[1]", second(Laplace([]float64{1, math.NaN()}, 1, 1, 1))},
	} {
		if tc.err == nil || !strings.HasPrefix(tc.err.Error(), tc.name+":") {
			t.Errorf("want an error naming %s, got %v", tc.name, tc.err)
		}
	}
}

func second[T any](_ T, err error) error { return err }

// Hand-computed: in-views (1, 5) and (3, 5), out-views (−1, 4) and (−3, 6).
// Means (2, 5) and (−2, 5): difference (4, 0), midpoint (0, 5). The pooled
// variances (divisor 2) are ((1 + 1) + (1 + 1))/2 = 2 and (0 + 2)/2 = 1, so
// whitened w = (2, 0).
func TestFitLinearByHand(t *testing.T) {
	in := [][]float64{{1, 5}, {3, 5}}
	out := [][]float64{{-1, 4}, {-3, 6}}
	plain, err := FitLinear(in, out, false)
	if err != nil {
		t.Fatal(err)
	}
	white, err := FitLinear(in, out, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		l    Linear
		x    []float64
		want float64
	}{
		{plain, []float64{1, 7}, 4}, {plain, []float64{0, 5}, 0}, {white, []float64{1, 7}, 2}, {white, []float64{-1, 0}, -2},
	} {
		if got, err := tc.l.Score(tc.x); err != nil || got != tc.want {
			t.Errorf("score %v with w = %v: %v, want %v (%v)", tc.x, tc.l.w, got, tc.want, err)
		}
	}
}

// Coordinates with unequal noise: the signal (a shift of 1 in each of two
// coordinates) is clear in the quiet one (σ = 0.5) and buried in the noisy
// one (σ = 10). Whitening weights the quiet coordinate by 1/σ² and so
// separates fresh views better: its mean score gap over its spread, the
// quantity a threshold test's power grows with, is at least 1.5 times the
// unwhitened one. (In the limit the whitened gap/spread is
// √(1/0.25 + 1/100) ≈ 2.0 and the unwhitened (1 + 1)/√(0.25 + 100) ≈ 0.2;
// 1.5 leaves room for 2 000 fitted views' estimation error, which is a few
// per cent.)
func TestWhiteningHelpsUnequalNoise(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	draw := func(n int, shift float64) [][]float64 {
		v := make([][]float64, n)
		for i := range v {
			v[i] = []float64{shift + 0.5*r.NormFloat64(), shift + 10*r.NormFloat64()}
		}
		return v
	}
	in, out := draw(1000, 1), draw(1000, 0)
	sep := func(l Linear) float64 {
		a, b := draw(5000, 1), draw(5000, 0)
		var sa, sb, ss float64
		for i := range a {
			x, _ := l.Score(a[i])
			y, _ := l.Score(b[i])
			sa += x
			sb += y
			ss += x*x + y*y
		}
		n := float64(len(a))
		gap := (sa - sb) / n
		spread := math.Sqrt(ss/(2*n) - math.Pow((sa+sb)/(2*n), 2) - gap*gap/4)
		return gap / spread
	}
	plain, _ := FitLinear(in, out, false)
	white, _ := FitLinear(in, out, true)
	if p, w := sep(plain), sep(white); !(w > 1.5*p) {
		t.Errorf("whitened separation %.3f, unwhitened %.3f", w, p)
	}
}

// A coordinate that does not vary within the classes but differs between
// them separated the fitted views perfectly, and the score leans on it; if
// nothing varies the score is the unwhitened difference.
func TestFitLinearZeroVariance(t *testing.T) {
	l, err := FitLinear([][]float64{{1, 0}, {1, 2}}, [][]float64{{0, 1}, {0, 3}}, true)
	if err != nil {
		t.Fatal(err)
	}
	if !(l.w[0] > 1e11*math.Abs(l.w[1])) {
		t.Errorf("w = %v: the constant separating coordinate does not dominate", l.w)
	}
	l, _ = FitLinear([][]float64{{1, 1}, {1, 1}}, [][]float64{{0, 1}}, true)
	if l.w[0] != 1 || l.w[1] != 0 {
		t.Errorf("nothing varies: w = %v, want the difference (1, 0)", l.w)
	}
}

func TestFitLinearErrors(t *testing.T) {
	ok := [][]float64{{1, 2}}
	for _, tc := range []struct {
		name    string
		in, out [][]float64
		whiten  bool
	}{
		{"in", nil, ok, false},
		{"out", ok, nil, false},
		{"in[0]", [][]float64{{}}, ok, false},
		{"out[0]", ok, [][]float64{{1}}, false},
		{"in[0][1]", [][]float64{{1, math.Inf(-1)}}, ok, false},
		{"in, out", ok, ok, true},
	} {
		_, err := FitLinear(tc.in, tc.out, tc.whiten)
		if err == nil || !strings.HasPrefix(err.Error(), tc.name+":") {
			t.Errorf("want an error naming %s, got %v", tc.name, err)
		}
	}
	l, _ := FitLinear(ok, [][]float64{{0, 0}}, false)
	if _, err := l.Score([]float64{1}); err == nil || !strings.HasPrefix(err.Error(), "view:") {
		t.Errorf("wrong dimension: %v", err)
	}
	if _, err := l.Score([]float64{1, math.NaN()}); err == nil || !strings.HasPrefix(err.Error(), "view[1]:") {
		t.Errorf("NaN: %v", err)
	}
}
