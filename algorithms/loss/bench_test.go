package loss

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"gonum.org/v1/gonum/floats"

	"maple/algorithms/data"
	"maple/algorithms/sampling"
	"maple/internal/cputime"
)

// reportCPU reports the CPU time of the process since start per unit of
// work, n units in all (b.N times per): on a machine other work loads, wall
// time stretches with the wait for a core and CPU time does not.
func reportCPU(b *testing.B, start time.Duration, per int, unit string) {
	b.ReportMetric(float64(cputime.Process()-start)/float64(b.N*per), "cpu-ns/"+unit)
}

// benchmarkLocalEpoch times one client's local epoch of the LR-MNIST shape:
// 60 samples of 784 features (60 000 over 1000 clients), six SGD steps on
// mini-batches of 10 drawn without replacement, as FedAvg's agents take
// them: Grad then the update (what fedavg's Local.Gradient and Descend do),
// and the fused Step that its SGD client takes. It reports the time per
// step, wall and CPU, and the allocations per epoch, which must be 0.
func benchmarkLocalEpoch(b *testing.B, l Loss) {
	const (
		samples, features, batch, steps = 60, 784, 10, 6
		mu                              = 0.03
	)
	r := rand.New(rand.NewPCG(1, 2))
	s := classSet(r, samples, features, l.Classes)
	for i := range s.X {
		s.X[i] = r.Float64() // pixels scaled to [0, 1]
	}
	if l.Kind == MLP {
		l.Origin = l.Init(features, r)
	}
	for _, fused := range []bool{false, true} {
		name := "grad+update"
		if fused {
			name = "step"
		}
		b.Run(name, func(b *testing.B) {
			w := make([]float64, l.Dim(features))
			g := make([]float64, len(w))
			var theta []float64
			if l.KeepsParams() {
				theta = make([]float64, len(w))
				l.Params(theta, w)
			}
			idx := make([]int, batch)
			b.ReportAllocs()
			start := cputime.Process()
			for b.Loop() {
				for e := 0; e < steps; e++ {
					sampling.WithoutReplacement(idx, samples, r)
					if fused {
						l.Step(w, theta, mu, s, idx, nil, g)
					} else {
						l.Grad(g, w, s, idx, nil)
						floats.AddScaled(w, -mu, g)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*steps), "ns/step")
			reportCPU(b, start, steps, "step")
		})
	}
}

// BenchmarkSoftmaxLocalEpoch is the benchmark: 784 × 10 softmax
// regression, batch 10.
func BenchmarkSoftmaxLocalEpoch(b *testing.B) {
	benchmarkLocalEpoch(b, Loss{Kind: Softmax, Rho: 1e-4, Classes: 10})
}

// BenchmarkMLPLocalEpoch is the same epoch for an MLP of 200 ReLU units
// (mlp-fmnist.yaml has 100).
func BenchmarkMLPLocalEpoch(b *testing.B) {
	benchmarkLocalEpoch(b, Loss{Kind: MLP, Rho: 1e-4, Classes: 10, Hidden: 200, Activation: ReLU})
}

// BenchmarkClippedGradSum times DP-SGD's clipped sum on dp-sgd.yaml's
// shape: softmax regression on 784 pixel features and 10 classes, a batch
// of 60 coded examples (IDX data), clipping norm 1; one-at-a-time is the
// definition (Grad per example, its norm, its clipped multiple added).
func BenchmarkClippedGradSum(b *testing.B) {
	const n, features, classes, batch = 600, 784, 10, 60
	r := rand.New(rand.NewPCG(1, 4))
	_, coded := pixelSets(r, n, features, classes)
	l := Loss{Kind: Softmax, Classes: classes}
	w := randomVector(r, l.Dim(features), 0.05)
	idx := r.Perm(n)[:batch]
	dst, scratch := make([]float64, len(w)), make([]float64, len(w))
	b.Run("batched", func(b *testing.B) {
		start := cputime.Process()
		for b.Loop() {
			l.ClippedGradSum(dst, w, coded, idx, 1, scratch)
		}
		reportCPU(b, start, batch, "example")
	})
	b.Run("one-at-a-time", func(b *testing.B) {
		start := cputime.Process()
		for b.Loop() {
			clippedOneByOne(l, dst, w, coded, idx, 1)
		}
		reportCPU(b, start, batch, "example")
	})
}

// BenchmarkEvaluate times one evaluation of a 784 × 10 softmax model on
// 10 000 pixel-like samples, the shape of the LR-MNIST test set after every
// round: float64 rows, and coded rows (one byte per pixel, as the runner
// holds IDX data) that each pass decodes into its work buffer.
func BenchmarkEvaluate(b *testing.B) {
	const n, features, classes = 10000, 784, 10
	r := rand.New(rand.NewPCG(1, 3))
	dense, coded := pixelSets(r, n, features, classes)
	l := Loss{Kind: Softmax, Classes: classes}
	w := randomVector(r, l.Dim(features), 0.05)
	for _, s := range []struct {
		name string
		set  *data.Set
	}{{"dense", dense}, {"coded", coded}} {
		b.Run(s.name, func(b *testing.B) {
			start := cputime.Process()
			for b.Loop() {
				l.Evaluate(w, s.set)
			}
			reportCPU(b, start, 1, "op")
		})
	}
}

// BenchmarkFullGrad is the full local gradient of a generalized linear loss
// on dense data, the kernel of full-batch diffusion, the random walks, the
// importance-sampling probes and Fed-PLT's local solvers: N = 250 samples of
// dimension 2 (the regression figures) and 100 (Fed-PLT's Table V).
func BenchmarkFullGrad(b *testing.B) {
	for _, dim := range []int{2, 100} {
		b.Run(fmt.Sprintf("logistic/dim=%d", dim), func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 2))
			s := randomSet(r, 250, dim, true)
			l := Loss{Kind: Logistic, Rho: 0.01}
			w, g := make([]float64, dim), make([]float64, dim)
			for j := range w {
				w[j] = r.NormFloat64()
			}
			b.ReportAllocs()
			for b.Loop() {
				l.FullGrad(g, w, s)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*s.Len()), "ns/sample")
		})
	}
}

// BenchmarkNormsAndFullGrad times what an agent computes when importance
// sampling's server probes it (fedavg.Agent.Probe): every sample's gradient
// norm and the full gradient, as the two separate calls and as the fused
// kernel, on the shapes of the importance-sampling figures — 100
// two-dimensional regression samples (Figs. 2.1, 2.3–2.7), 400 logistic
// samples of 22 features (Fig. 2.2, ijcnn1) and 500 sparse logistic samples
// of 8 features among 1024 (Fig. 2.2, Avazu's stand-in).
func BenchmarkNormsAndFullGrad(b *testing.B) {
	for _, c := range []struct {
		kind          Kind
		samples, dims int
		sparse        bool
	}{{LeastSquares, 100, 2, false}, {Logistic, 400, 22, false}, {Logistic, 500, 1024, true}} {
		r := rand.New(rand.NewPCG(1, 2))
		s := randomSet(r, c.samples, c.dims, c.kind == Logistic)
		if c.sparse {
			s.X = nil
			s.RowPtr = make([]int, c.samples+1)
			for n := range c.samples {
				for f := range 8 { // one feature per field of 128 slots
					s.Col = append(s.Col, int32(f*c.dims/8+r.IntN(c.dims/8)))
					s.Val = append(s.Val, 1)
				}
				s.RowPtr[n+1] = len(s.Col)
			}
		}
		l := Loss{Kind: c.kind, Rho: 0.001}
		w := randomVector(r, c.dims, 1)
		norms, g, scratch := make([]float64, c.samples), make([]float64, c.dims), make([]float64, c.dims)
		name := fmt.Sprintf("%v/%dx%d", c.kind, c.samples, c.dims)
		if c.sparse {
			name += "-sparse"
		}
		b.Run(name+"/separate", func(b *testing.B) {
			for b.Loop() {
				for n := range norms {
					norms[n] = l.SampleGradNorm(w, s, n, scratch)
				}
				l.FullGrad(g, w, s)
			}
		})
		b.Run(name+"/fused", func(b *testing.B) {
			for b.Loop() {
				l.NormsAndFullGrad(norms, g, w, s, scratch)
			}
		})
	}
}

// BenchmarkSampleGradNorms times every sample's gradient norm on 100
// two-dimensional regression samples, what an agent of the adaptive and
// partial data policies computes once per round.
func BenchmarkSampleGradNorms(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	s := randomSet(r, 100, 2, false)
	l := Loss{Kind: LeastSquares, Rho: 0.001}
	w := randomVector(r, 2, 1)
	norms, scratch := make([]float64, 100), make([]float64, 2)
	for b.Loop() {
		l.SampleGradNorms(norms, w, s, scratch)
	}
}
