package audit

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/integrate/quad"

	"maple/privacy/noise"
)

// The sum of two Laplace variables of scale b has the density
// (1 + |x|/b)·e^{−|x|/b}/(4b) (the n = 2 case of the Gamma-difference
// form), and one Laplace variable the density e^{−|x|/b}/(2b); the Gaussian
// law is the normal density. Tolerance: 1e-13 relative, a few roundings of
// the log-domain sum.
func TestLogDensityClosedForms(t *testing.T) {
	const std = 0.7
	b := std / math.Sqrt2
	for _, x := range []float64{0, 1e-300, 0.3, -1.2, 5, -40} {
		u := math.Abs(x) / b
		for _, c := range []struct {
			law  Noise
			want float64
		}{
			{LaplaceNoise(std), -u - math.Log(2*b)},
			{LaplaceSumNoise(2, std, 1), math.Log1p(u) - u - math.Log(4*b)},
			{LaplaceSumNoise(2, std, 3).Scaled(1.0 / 3), math.Log1p(u) - u - math.Log(4*b)},
			{GaussianNoise(std), -x*x/(2*std*std) - math.Log(std*math.Sqrt(2*math.Pi))},
		} {
			if got := c.law.LogDensity(x); math.Abs(got-c.want) > 1e-13*math.Max(1, math.Abs(c.want)) {
				t.Errorf("%v at %v: log density %v, want %v", c.law, x, got, c.want)
			}
		}
	}
}

// Every law's density integrates to 1 and has the variance of its
// construction: n·c²·std² for c times a sum of n Laplace variables.
// Tolerance: 1e-10, the quadrature's error on these smooth panels.
func TestDensitiesAreNormalized(t *testing.T) {
	for _, c := range []struct {
		law      Noise
		variance float64
	}{
		{LaplaceNoise(0.5), 0.25},
		{LaplaceSumNoise(3, 0.5, 2), 3 * 4 * 0.25},
		{LaplaceSumNoise(7, 0.2, 1.5), 7 * 2.25 * 0.04},
		{GaussianNoise(0.5).Scaled(-2), 1},
	} {
		R := 200 * math.Sqrt(c.variance)
		integral := func(g func(float64) float64) float64 {
			var s float64
			for _, iv := range [][2]float64{{-R, 0}, {0, R}} {
				const panels = 64
				w := (iv[1] - iv[0]) / panels
				for p := range panels {
					s += quad.Fixed(g, iv[0]+float64(p)*w, iv[0]+float64(p+1)*w, 20, nil, 0)
				}
			}
			return s
		}
		mass := integral(func(x float64) float64 { return math.Exp(c.law.LogDensity(x)) })
		v := integral(func(x float64) float64 { return x * x * math.Exp(c.law.LogDensity(x)) })
		if math.Abs(mass-1) > 1e-10 || math.Abs(v-c.variance) > 1e-10*c.variance {
			t.Errorf("%v: mass %v, variance %v (want 1, %v)", c.law, mass, v, c.variance)
		}
	}
}

// LogRatio is the difference of the log densities, and the closed forms of
// one Laplace or Gaussian term agree with it. Tolerance: 1e-12 absolute on
// ratios of order 1–30.
func TestLogRatioIsTheDifferenceOfLogDensities(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, law := range []Noise{LaplaceNoise(0.3), GaussianNoise(0.3), LaplaceSumNoise(4, 0.3, 2)} {
		for range 100 {
			x, mu0, mu1 := 2*r.NormFloat64(), r.NormFloat64(), r.NormFloat64()
			want := law.LogDensity(x-mu1) - law.LogDensity(x-mu0)
			if got := law.LogRatio(x, mu0, mu1); math.Abs(got-want) > 1e-12*math.Max(1, math.Abs(want)) {
				t.Fatalf("%v: LogRatio(%v, %v, %v) = %v, want %v", law, x, mu0, mu1, got, want)
			}
		}
	}
}

// The numerical divergence agrees with the closed forms of the Laplace law,
// |d|/b + e^{−|d|/b} − 1, and of the Gaussian, d²/2σ², over shifts from a
// hundredth to twenty scales. Tolerance: 1e-9 relative, the quadrature's
// error on panels that avoid the kinks.
func TestNumericalDivergenceMatchesTheClosedForms(t *testing.T) {
	for _, law := range []Noise{LaplaceNoise(0.4), GaussianNoise(0.4)} {
		for _, d := range []float64{0.004, -0.1, 0.4, 3, -8} {
			got, want := law.divergence(d), law.Divergence(d)
			if math.Abs(got-want) > 1e-9*want {
				t.Errorf("%v, shift %v: numerical KL %v, closed form %v", law, d, got, want)
			}
		}
	}
}

// The divergence is the mean log-likelihood ratio under the shifted law:
// a Monte-Carlo check for a sum of Laplace masks drawn as package noise
// draws them. Tolerance: 4 standard errors of the mean of 2·10⁵ ratios.
func TestDivergenceIsTheMeanLogRatio(t *testing.T) {
	const std, n, c, d = 0.5, 3, 1.7, 0.9
	law := LaplaceSumNoise(n, std, c)
	r := rand.New(rand.NewPCG(3, 4))
	const N = 200000
	var sum, sum2 float64
	for range N {
		x := d
		for range n {
			x += c * noise.LaplaceFromUint64(r.Uint64(), noise.LaplaceScale(std))
		}
		l := law.LogRatio(x, 0, d)
		sum += l
		sum2 += l * l
	}
	mean := sum / N
	se := math.Sqrt((sum2/N - mean*mean) / N)
	if want := law.Divergence(d); math.Abs(mean-want) > 4*se {
		t.Errorf("mean log ratio %v ± %v, divergence %v", mean, se, want)
	}
}

// A link's worth in draws: 1 for the scheme's own noise, a for masks
// weighted 1/a whatever their number (the log-Lipschitz constant of a sum of
// Laplace terms is a term's), 1/c² for a Gaussian draw times c. Exact up to
// the rounding of one division (1e-15 relative).
func TestDraws(t *testing.T) {
	const std = 0.3
	for _, c := range []struct {
		laws []Noise
		want float64
	}{
		{[]Noise{LaplaceNoise(std), LaplaceNoise(std)}, 2},
		{[]Noise{LaplaceSumNoise(3, std, 1/0.25), LaplaceSumNoise(1, std, 1/0.5)}, 0.75},
		{[]Noise{GaussianNoise(std).Scaled(2)}, 0.25},
	} {
		if got := Draws(c.laws, std); math.Abs(got-c.want) > 1e-15*c.want {
			t.Errorf("%v: %v draws, want %v", c.laws, got, c.want)
		}
	}
	y := make([]float64, 2)
	SolveMultiples(y, []float64{1 + 0.5*3, 2 - 0.5}, []float64{1 + 2*3, 2 - 2*1}, 0.5, 2)
	if y[0] != 1 || y[1] != 2 {
		t.Errorf("solved %v, want [1 2]", y)
	}
}
