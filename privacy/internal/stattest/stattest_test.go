package stattest

import (
	"math"
	"testing"
)

// The empirical CDF of the midpoints (i − ½)/n of n equal cells is at distance
// exactly 1/(2n) from the uniform CDF, the smallest D any n points can achieve.
func TestKSOfMidpointsIsHalfCell(t *testing.T) {
	const n = 1000
	x := make([]float64, n)
	for i := range x {
		x[n-1-i] = (float64(i) + 0.5) / n // reversed: KS must sort
	}
	d := KS(x, func(v float64) float64 { return v })
	// The two candidates i/n − F and F − (i−1)/n are both 1/(2n) up to one
	// rounding of each of the two divisions: 1e-15 is a few ulps of 0.5/n·n.
	if math.Abs(d-0.5/n) > 1e-15 {
		t.Fatalf("D = %g, want %g", d, 0.5/n)
	}
}

// Every sample at the lower end of [0, 1] leaves the empirical CDF at 1 while
// F is 0 there: D is 1.
func TestKSOfPointMassIsOne(t *testing.T) {
	x := make([]float64, 10)
	if d := KS(x, func(v float64) float64 { return v }); d != 1 {
		t.Fatalf("D = %g, want 1", d)
	}
}

func TestKSCritical(t *testing.T) {
	// c(0.001) = √(ln(2000)/2) = 1.94947…; the tolerance is the rounding of
	// the printed reference value.
	if c := KSCritical(1, 0.001); math.Abs(c-1.94947) > 1e-5 {
		t.Fatalf("c(0.001) = %.6f, want 1.94947", c)
	}
	if r := KSCritical(400, 0.05) / KSCritical(100, 0.05); math.Abs(r-0.5) > 1e-15 {
		t.Fatalf("critical value does not scale as 1/√n: ratio %g", r)
	}
}

func TestMeanVar(t *testing.T) {
	m, v := MeanVar([]float64{1, 2, 3, 4})
	// Exact in binary floating point: 10/4 and 5/3 are the only roundings.
	if m != 2.5 || v != 5.0/3 {
		t.Fatalf("MeanVar = %g, %g; want 2.5, 5/3", m, v)
	}
}

func TestStandardErrors(t *testing.T) {
	if se := MeanSE(2, 100); se != 0.2 {
		t.Fatalf("MeanSE = %g, want 0.2", se)
	}
	// Normal: σ²√(2/n) = 4·√(2/8) = 2.
	if se := VarianceSE(4, 3, 8); se != 2 {
		t.Fatalf("VarianceSE = %g, want 2", se)
	}
}

// P[Binomial(200, 0.05) > c] is 0.0012 at c = 20 and 0.00048 at c = 21
// (the sum of the pmf from c + 1 on): the smallest c at level 0.001 is 21.
// With p = 0 no trial fails; with level 1 any count is allowed.
func TestMaxExceedances(t *testing.T) {
	if c := MaxExceedances(200, 0.05, 0.001); c != 21 {
		t.Errorf("MaxExceedances(200, 0.05, 0.001) = %d, want 21", c)
	}
	if c := MaxExceedances(100, 0, 0.001); c != 0 {
		t.Errorf("p = 0: %d, want 0", c)
	}
	if c := MaxExceedances(100, 0.5, 1); c != 0 {
		t.Errorf("level 1: %d, want 0", c)
	}
}
