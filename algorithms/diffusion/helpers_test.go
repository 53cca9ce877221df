package diffusion

import (
	"testing"

	"gonum.org/v1/gonum/mat"

	"maple/algorithms/data"
	"maple/algorithms/loss"
	"maple/algorithms/optimum"
	"maple/algorithms/rng"
	"maple/topology"
)

// hessian returns H_p = ∇²J_p and r_p = −∇J_p(0) of a least-squares risk,
// ∇J_p(w) = H_p w − r_p, from gradients at the unit vectors (exact for a
// quadratic up to rounding).
func hessian(set *data.Set, l loss.Loss) (*mat.Dense, *mat.VecDense) {
	M := set.Dim
	g0, g := make([]float64, M), make([]float64, M)
	l.FullGrad(g0, make([]float64, M), set)
	H := mat.NewDense(M, M, nil)
	e := make([]float64, M)
	for j := range M {
		clear(e)
		e[j] = 1
		l.FullGrad(g, e, set)
		for i := range M {
			H.Set(i, j, g[i]-g0[i])
		}
	}
	r := mat.NewVecDense(M, nil)
	for i := range M {
		r.SetVec(i, -g0[i])
	}
	return H, r
}

// atcFixedPoint solves w = Aᵀ(w − μ(Hw − r)) exactly: the limit of
// noise-free full-batch ATC, as a PM-vector returned as P rows.
func atcFixedPoint(A mat.Matrix, sets []*data.Set, l loss.Loss, mu float64) [][]float64 {
	P, M := len(sets), sets[0].Dim
	K := mat.NewDense(P*M, P*M, nil)
	rhs := mat.NewVecDense(P*M, nil)
	for m := range P {
		H, r := hessian(sets[m], l)
		for p := range P {
			a := A.At(m, p)
			for i := range M {
				rhs.SetVec(p*M+i, rhs.AtVec(p*M+i)+a*mu*r.AtVec(i))
				for j := range M {
					v := a * (-mu * H.At(i, j))
					if i == j {
						v += a
					}
					K.Set(p*M+i, m*M+j, K.At(p*M+i, m*M+j)-v)
				}
			}
		}
	}
	for d := range P * M {
		K.Set(d, d, K.At(d, d)+1)
	}
	var x mat.VecDense
	if err := x.SolveVec(K, rhs); err != nil {
		panic(err)
	}
	W := make([][]float64, P)
	for p := range W {
		W[p] = make([]float64, M)
		for i := range M {
			W[p][i] = x.AtVec(p*M + i)
		}
	}
	return W
}

// firstOrderBias returns c, the first-order centroid bias of ATC,
// w_c − w^o = μc + O(μ²): with b_p = ∇J_p(w^o), x solves (I − Aᵀ)x = −Aᵀb
// with Σ_p q_p x_p = 0, and c = −(Σ_p q_p H_p)⁻¹ Σ_p q_p H_p x_p.
func firstOrderBias(A mat.Matrix, q []float64, sets []*data.Set, l loss.Loss, wo []float64) []float64 {
	P, M := len(sets), sets[0].Dim
	L := mat.NewDense(P, P, nil)
	B := mat.NewDense(P, M, nil)
	b := make([]float64, M)
	for p := range P {
		l.FullGrad(b, wo, sets[p])
		B.SetRow(p, b)
		for m := range P {
			v := -A.At(m, p)
			if m == p {
				v++
			}
			L.Set(p, m, v)
		}
	}
	var rhs mat.Dense
	rhs.Mul(A.T(), B)
	rhs.Scale(-1, &rhs)
	for m := range P { // replace the last (redundant) equation by qᵀx = 0
		L.Set(P-1, m, q[m])
	}
	for i := range M {
		rhs.Set(P-1, i, 0)
	}
	var X mat.Dense
	if err := X.Solve(L, &rhs); err != nil {
		panic(err)
	}
	Hq := mat.NewDense(M, M, nil)
	s := mat.NewVecDense(M, nil)
	for p := range P {
		H, _ := hessian(sets[p], l)
		Hq.Add(Hq, scaled(q[p], H))
		var hx mat.VecDense
		hx.MulVec(H, X.RowView(p))
		s.AddScaledVec(s, -q[p], &hx)
	}
	var c mat.VecDense
	if err := c.SolveVec(Hq, s); err != nil {
		panic(err)
	}
	return c.RawVector().Data
}

func scaled(a float64, H *mat.Dense) *mat.Dense {
	var out mat.Dense
	out.Scale(a, H)
	return &out
}

// regressionNetwork returns the test network (10 agents, random geometric
// graph of radius 0.45 with every degree ≥ 2) weighted by rule, and
// least-squares data of dimension 3. CovScale 0.5 keeps the Hessians
// 2R̂ + 2ρI small enough for μ = 0.1 to be stable.
func regressionNetwork(t *testing.T, rule func(*topology.Graph) *mat.Dense) (*mat.Dense, []*data.Set, loss.Loss) {
	t.Helper()
	g, _, err := topology.Geometric(10, 0.45, 2, rng.New(5, "test", "graph"), 100)
	if err != nil {
		t.Fatal(err)
	}
	sets, _ := data.Regression(data.RegressionConfig{
		Agents: 10, SamplesMin: 20, SamplesMax: 30, Dim: 3, CovScale: 0.5, NoiseVarMin: 0.1, NoiseVarMax: 1,
	}, 99)
	return rule(g), sets, loss.Loss{Kind: loss.LeastSquares, Rho: 0.01}
}

// metropolisProblem returns the test network with Metropolis weights, its
// data and loss, the optimum w^o and the Perron vector q.
func metropolisProblem(t *testing.T) (*mat.Dense, []*data.Set, loss.Loss, []float64, []float64) {
	t.Helper()
	A, sets, l := regressionNetwork(t, topology.Metropolis)
	wo, err := optimum.LeastSquares(sets, optimum.Uniform(len(sets)), l.Rho)
	if err != nil {
		t.Fatal(err)
	}
	q, err := topology.Perron(A)
	if err != nil {
		t.Fatal(err)
	}
	return A, sets, l, wo, q
}
