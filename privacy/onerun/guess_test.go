package onerun

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"maple/privacy/accountant"
	"maple/privacy/auditscore"
	"maple/privacy/internal/stattest"
)

// Six canaries ranked by score 0.9 (in), 0.8 (out), 0.5 (in), 0.5 (out),
// 0.1 (out), −2 (in), the tie at 0.5 broken by index (canary 2 before 3).
// Two in and two out: the top two are canary 0 (right) and 1 (wrong), the
// bottom two canaries 4 (right) and 5 (wrong). Three in and none out: the
// third is canary 2, right.
func TestGuessByHand(t *testing.T) {
	scores := []float64{0.9, 0.8, 0.5, 0.5, 0.1, -2}
	inc := []bool{true, false, true, false, false, true}
	for _, tc := range []struct {
		g    Guesses
		want Outcome
	}{{Guesses{2, 2}, Outcome{6, 4, 2}}, {Guesses{3, 0}, Outcome{6, 3, 2}}, {Guesses{0, 1}, Outcome{6, 1, 0}}} {
		o, err := Guess(scores, inc, tc.g)
		if err != nil || o != tc.want {
			t.Errorf("%v: %+v, want %+v (%v)", tc.g, o, tc.want, err)
		}
	}
}

// AuditBest is the largest LowerBound over the grid at the per-candidate
// level 1 − (1 − c)/G, and Audit is the grid of one at the full confidence.
func TestAuditBestIsTheUnionBound(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	m := 500
	scores, inc := make([]float64, m), make([]bool, m)
	for i := range m {
		inc[i] = r.Uint64()&1 == 1
		scores[i] = r.NormFloat64()
		if inc[i] {
			scores[i] += 1.5
		}
	}
	grid := []Guesses{{10, 10}, {50, 50}, {100, 0}, {150, 150}}
	res, err := AuditBest(scores, inc, grid, 1e-5, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	if want := 1 - 0.05/4; math.Abs(res.Level-want) > 1e-15 || res.Candidates != 4 {
		t.Errorf("level %v over %d candidates, want %v over 4", res.Level, res.Candidates, want)
	}
	best := -1.0
	for _, g := range grid {
		o, _ := Guess(scores, inc, g)
		e, _ := LowerBound(o, 1e-5, res.Level)
		best = max(best, e)
	}
	if res.Epsilon != best || best <= 0 {
		t.Errorf("AuditBest %v, the grid's best %v", res.Epsilon, best)
	}
	one, _ := Audit(scores, inc, Guesses{50, 50}, 1e-5, 0.95)
	o, _ := Guess(scores, inc, Guesses{50, 50})
	if e, _ := LowerBound(o, 1e-5, 0.95); one.Epsilon != e || one.Level != 0.95 || one.Candidates != 1 {
		t.Errorf("Audit %+v, LowerBound %v", one, e)
	}
	if !strings.Contains(res.Description, "union bound") || strings.Contains(one.Description, "union bound") {
		t.Errorf("descriptions: %q / %q", res.Description, one.Description)
	}
}

// ExpectedBound is LowerBound at ⌊precision·r⌋ right guesses, and Plan
// picks the candidate whose expected bound is largest: with every guess
// right the bound grows with the guesses, so the largest candidate wins.
func TestPlan(t *testing.T) {
	e, _ := ExpectedBound(1000, Guesses{30, 20}, 0.9, 1e-5, 0.95)
	want, _ := LowerBound(Outcome{1000, 50, 45}, 1e-5, 0.95)
	if e != want {
		t.Errorf("ExpectedBound %v, LowerBound of 45/50 %v", e, want)
	}
	e, _ = ExpectedBound(1000, Guesses{30, 20}, 0.99, 1e-5, 0.95) // ⌊49.5⌋ = 49
	want, _ = LowerBound(Outcome{1000, 50, 49}, 1e-5, 0.95)
	if e != want {
		t.Errorf("ExpectedBound at 0.99 %v, LowerBound of 49/50 %v", e, want)
	}
	grid := []Guesses{{5, 5}, {50, 50}, {20, 20}}
	g, b, err := Plan(1000, grid, func(Guesses) float64 { return 1 }, 1e-5, 0.95)
	if want, _ := ExpectedBound(1000, Guesses{50, 50}, 1, 1e-5, 0.95); err != nil || g != (Guesses{50, 50}) || b != want {
		t.Errorf("Plan: %v with %v (%v), want 50/50 with %v", g, b, err, want)
	}
	if _, _, err := Plan(1000, grid, func(Guesses) float64 { return 1.2 }, 1e-5, 0.95); err == nil ||
		!strings.Contains(err.Error(), "precision:") {
		t.Errorf("precision 1.2: %v", err)
	}
}

func TestGuessErrors(t *testing.T) {
	s, inc := []float64{1, 2, 3}, []bool{true, false, true}
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"scores", second(Guess(nil, nil, Guesses{1, 0}))},
		{"included", second(Guess(s, inc[:2], Guesses{1, 0}))},
		{"scores[1]", second(Guess([]float64{1, math.NaN(), 3}, inc, Guesses{1, 0}))},
		{"guesses", second(Guess(s, inc, Guesses{2, 2}))},
		{"guesses", second(Guess(s, inc, Guesses{0, 0}))},
		{"guesses", second(Guess(s, inc, Guesses{-1, 2}))},
		{"guesses", second(AuditBest(s, inc, nil, 0, 0.95))},
		{"delta", second(Audit(s, inc, Guesses{1, 1}, 1, 0.95))},
		{"delta", second(Audit(s, inc, Guesses{1, 1}, math.NaN(), 0.95))},
		{"confidence", second(Audit(s, inc, Guesses{1, 1}, 0, 1))},
		{"confidence", second(Audit(s, inc, Guesses{1, 1}, 0, 0))},
		{"precision", second(ExpectedBound(3, Guesses{1, 1}, math.NaN(), 0, 0.95))},
	} {
		if tc.err == nil || !strings.HasPrefix(tc.err.Error(), tc.name+":") {
			t.Errorf("want an error naming %s, got %v", tc.name, tc.err)
		}
	}
}

func second[T any](_ T, err error) error { return err }

// laplaceCanaries draws m canaries, each in with probability ½, scored by
// one release of the Laplace mechanism with ε = eps: x ~ Lap(±½, 1/eps),
// + when in. For x ≥ ½ the density ratio is exactly e^ε, so a canary
// guessed "in" from there is right with probability e^ε/(1 + e^ε)
// independently of the others, whatever the rest of the ranking: an audit
// that guesses only in the tails is ε-randomized response, on which the
// bound is tight.
func laplaceCanaries(r *rand.Rand, m int, eps float64) ([]float64, []bool) {
	scores, inc := make([]float64, m), make([]bool, m)
	for i := range m {
		inc[i] = r.Uint64()&1 == 1
		u := r.Float64() - 0.5
		scores[i] = -math.Copysign(math.Log1p(-2*math.Abs(u)), u) / eps
		if inc[i] {
			scores[i] += 0.5
		} else {
			scores[i] -= 0.5
		}
	}
	return scores, inc
}

// Coverage with abstention where the bound is tight: m = 1000 canaries of
// the Laplace mechanism with ε = 1 (pure DP, δ = 0), guessing only on the
// 100 highest and 100 lowest scores (about 340 canaries score above ½ and
// as many below −½, so every guess is in the exact-ratio tail). The number
// of right guesses is then Binomial(200, e/(1 + e)) and the bound exceeds ε
// with probability just under 5 % (the binomial's discreteness). Over 400
// audits at 95 % the exceedances are Binomial(400, ≤ 0.05); more than
// stattest.MaxExceedances(400, 0.05, 0.001) = 35 happen with probability
// below 0.1 %.
//
// The best of a grid of eight guess counts (in only or out only, 10 to 100
// of each), each at 1 − 0.05/8 (AuditBest), must pass the same check. The
// check has power: the naive maximum of the same eight bounds each at 95 %
// — the multiple test AuditBest's union bound corrects — exceeds ε in 74 of
// these 400 audits (18 %; the fixed guesses 16, the union bound 6) and
// fails it by five of its standard deviations.
func TestAbstentionCoverageIsTight(t *testing.T) {
	const audits, m, eps = 400, 1000, 1.0
	grid := []Guesses{{10, 0}, {0, 10}, {25, 0}, {0, 25}, {50, 0}, {0, 50}, {100, 0}, {0, 100}}
	allowed := stattest.MaxExceedances(audits, 0.05, 0.001)
	var fixed, best, naive int
	for a := range audits {
		scores, inc := laplaceCanaries(rand.New(rand.NewPCG(uint64(a), 4)), m, eps)
		res, err := Audit(scores, inc, Guesses{100, 100}, 0, 0.95)
		if err != nil {
			t.Fatal(err)
		}
		if res.Epsilon > eps {
			fixed++
		}
		if res, _ := AuditBest(scores, inc, grid, 0, 0.95); res.Epsilon > eps {
			best++
		}
		// LowerBound exceeds ε exactly when the p-value at ε is below
		// 1 − confidence (it is the largest ε where the p-value, which
		// grows with ε, is below that level): one evaluation per candidate.
		order, _ := rank(scores, inc)
		for _, g := range grid {
			if PValue(outcome(order, inc, g), eps, 0) < 0.05 {
				naive++
				break
			}
		}
	}
	t.Logf("exceedances of %d audits (allowed %d): fixed %d, best of grid %d, naive maximum %d", audits, allowed, fixed, best, naive)
	if fixed > allowed || best > allowed {
		t.Errorf("Laplace ε = 1: the bound exceeds ε in %d (fixed) and %d (best of grid) of %d audits, allowed %d", fixed, best, audits, allowed)
	}
	if naive <= allowed {
		t.Errorf("the naive maximum exceeds ε in only %d of %d audits: the check has no power", naive, audits)
	}
}

// The idealised one-run audit of DP-FedAvg that issue 29 estimates at
// "about 1.6 at z = 1": m = 1000 canary clients, each in with probability
// ½; 100 rounds; an included canary is drawn in each round with
// probability q = 0.05 and then pushes the model by its clip norm C = 1
// along its own direction; the server adds N(0, (zC)²) per coordinate. The
// white-box auditor sees each round's released step and projects it on
// each canary's direction, x_t ~ N(0, 1) or N(1, 1) — idealised in that the
// directions are orthogonal and the other clients' updates are known and
// subtracted — and scores each canary by the likelihood ratio
// (auditscore.Gaussian), guessing in on the 50 highest and out on the 50
// lowest: the best of the grid below in 30 exploratory audits with other
// seeds (mean 0.96; 30/30 to 100/100 all within 0.1 of it), fixed before
// these audits.
//
// What it gives (30 audits, δ = 10⁻⁵, 95 %): a mean bound of 0.88 (standard
// deviation 0.24 from audit to audit), against the accountant's 4.0 (RDP;
// the PLD figure is 3.5). It does not reach 1.6: a one-run audit sees the
// bulk of the per-canary trade-off curve, where the subsampled mechanism is
// far more private than its (ε, 10⁻⁵) suggests — the same audit of a
// Gaussian mechanism with that ε (μ = 0.82 at ε = 3.5) gives 1.29 here (1.4
// in the exploratory audits). The linear score gives 0.63. Planning the
// guess counts on one pilot run of other seeds (Plan, with the pilot's
// precisions) is honest but picks by the pilot's noise: 0.74.
//
// The test pins the mean within four of its standard errors (the sample
// standard deviation over √30) of 0.88, so that the figure the docs quote
// stays true; checks that no audit exceeds the accountant's bound; that the
// likelihood ratio beats the linear score Σx_t, which ignores that a canary
// is drawn in only 5 % of the rounds; and that the Gaussian mechanism of
// the same ε is audited higher.
func TestIdealisedDPFedAvg(t *testing.T) {
	const audits, m, rounds, q, delta, conf = 30, 1000, 100, 0.05, 1e-5, 0.95
	const documented = 0.88
	upper, _ := accountant.DPFedAvg(1000, 50, rounds, 1, accountant.Poisson).Epsilon(delta, accountant.Balle2020)
	grid := []Guesses{{10, 10}, {20, 20}, {30, 30}, {50, 50}, {75, 75}, {100, 100}, {50, 0}, {100, 0}, {0, 100}}
	fixed := Guesses{50, 50}
	simulate := func(r *rand.Rand) (llr, linear []float64, inc []bool) {
		llr, linear, inc = make([]float64, m), make([]float64, m), make([]bool, m)
		x := make([]float64, rounds)
		for i := range m {
			inc[i] = r.Uint64()&1 == 1
			var sum float64
			for t := range x {
				x[t] = r.NormFloat64()
				if inc[i] && r.Float64() < q {
					x[t]++
				}
				sum += x[t]
			}
			llr[i], _ = auditscore.Gaussian(x, 1, 1, q)
			linear[i] = sum
		}
		return llr, linear, inc
	}
	var sum, sumSq, sumLinear, sumGauss, sumPlanned float64
	mu := accountant.GaussianMu(3.5, delta)
	for a := range audits {
		llr, linear, inc := simulate(rand.New(rand.NewPCG(uint64(a), 5)))
		res, err := Audit(llr, inc, fixed, delta, conf)
		if err != nil {
			t.Fatal(err)
		}
		sum += res.Epsilon
		sumSq += res.Epsilon * res.Epsilon
		lin, _ := Audit(linear, inc, fixed, delta, conf)
		sumLinear += lin.Epsilon

		pilot, _, pilotInc := simulate(rand.New(rand.NewPCG(uint64(a), 100)))
		g, _, err := Plan(m, grid, func(g Guesses) float64 {
			o, _ := Guess(pilot, pilotInc, g)
			return float64(o.Correct) / float64(o.Guesses)
		}, delta, conf)
		if err != nil {
			t.Fatal(err)
		}
		planned, _ := Audit(llr, inc, g, delta, conf)
		sumPlanned += planned.Epsilon
		if e := max(res.Epsilon, planned.Epsilon); e > upper {
			t.Errorf("audit %d: ε ≥ %.3f above the accountant's %.3f", a, e, upper)
		}

		r := rand.New(rand.NewPCG(uint64(a), 6))
		gs, ginc := make([]float64, m), make([]bool, m)
		for i := range m {
			ginc[i] = r.Uint64()&1 == 1
			gs[i] = r.NormFloat64()
			if ginc[i] {
				gs[i] += mu
			}
		}
		gres, _ := Audit(gs, ginc, fixed, delta, conf)
		sumGauss += gres.Epsilon
	}
	n := float64(audits)
	mean := sum / n
	se := math.Sqrt((sumSq/n-mean*mean)*n/(n-1)) / math.Sqrt(n)
	t.Logf("idealised DP-FedAvg one-run, %v: mean ε ≥ %.3f (SE %.3f); linear score %.3f; planned on a pilot %.3f; "+
		"Gaussian mechanism of ε = 3.5: %.3f; accountant (RDP) %.3f", fixed, mean, se, sumLinear/n, sumPlanned/n, sumGauss/n, upper)
	if math.Abs(mean-documented) > 4*se {
		t.Errorf("mean bound %.3f, documented %.2f ± 4·%.3f", mean, documented, se)
	}
	if !(mean > sumLinear/n) || !(sumGauss/n > mean) {
		t.Errorf("likelihood ratio %.3f, linear %.3f, Gaussian mechanism %.3f", mean, sumLinear/n, sumGauss/n)
	}
}
