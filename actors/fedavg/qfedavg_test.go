package fedavg

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"maple/algorithms/fedavg"
	"maple/algorithms/rng"
)

// q-FedAvg by hand, on one coordinate from w = 1 with q = 1 and L = 2:
// replies 0 and 0.5 of clients with losses 1 and 3 have Δw = 2(1 − 0) = 2
// and 2(1 − 0.5) = 1, so Δ = 1·2 + 3·1 = 5 and h = (1·4 + 2·1) + (1·1 + 2·3)
// = 6 + 7 = 13: w = 1 − 5/13. Update sharing with μ = 0.5 sends
// ψ = (w − w_k)/μ = 2 and 1, the same Δw. A third reply without a loss (a
// missing client's stand-in, an adversary that did not train) is left
// out; with none of them carrying a loss the model does not move. Every
// sum is exact in binary, so the models agree exactly.
func TestQFedAvgByHand(t *testing.T) {
	rule := qFedAvg{Q: 1, Lipschitz: 2}
	want := 1 - 5.0/13
	for _, c := range []struct {
		share   fedavg.Share
		replies [][]float64
	}{
		{fedavg.Models, [][]float64{{0}, {0.5}, {-7}}},
		{fedavg.Updates, [][]float64{{2}, {1}, {16}}},
	} {
		w := []float64{1}
		rule.CombineSides(w, c.replies, [][]float64{{1}, {3}, nil}, c.share, 0.5)
		if w[0] != want {
			t.Errorf("%v: w = %v, want 1 − 5/13 = %v", c.share, w[0], want)
		}
		w = []float64{1}
		rule.CombineSides(w, c.replies, make([][]float64, 3), c.share, 0.5)
		if w[0] != 1 {
			t.Errorf("%v: without losses w moved to %v", c.share, w[0])
		}
	}
}

// With q = 0, q-FedAvg is FedAvg: Δ_k = Δw_k = L(w − w_k) and h_k = L, so
// w − Σ_k L(w − w_k)/(nL) = mean(w_k), whatever L and the losses — and
// under update sharing, w − μ·mean(ψ_k). The two computations round
// differently (through L(w − w_k) and the division by nL), by a few ulps of
// the coordinates, which are below 10: the 1e-14 bound.
func TestQFedAvgWithQZeroIsFedAvg(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 1))
	replies := make([][]float64, 5)
	sides := make([][]float64, 5)
	for i := range replies {
		replies[i] = []float64{r.NormFloat64(), 3 * r.NormFloat64(), r.Float64()}
		sides[i] = []float64{10 * r.Float64()}
	}
	for _, share := range []fedavg.Share{fedavg.Models, fedavg.Updates} {
		for _, lip := range []float64{0, 0.7, 20} {
			got := []float64{1, -2, 0.5}
			qFedAvg{Q: 0, Lipschitz: lip}.CombineSides(got, replies, sides, share, 0.05)
			want := []float64{1, -2, 0.5}
			fedavg.Mean(want, replies, share, 0.05)
			for j := range want {
				if math.Abs(got[j]-want[j]) > 1e-14 {
					t.Errorf("%v, L = %v: q = 0 gives %v, FedAvg %v", share, lip, got, want)
					break
				}
			}
		}
	}
}

// The client sends its regularized empirical risk at the model it received,
// F_k(w) = Loss.Risk, charged as one evaluation per sample, then trains
// exactly as local SGD: the same model bit for bit from the same streams.
func TestQFedAvgClientReportsItsLoss(t *testing.T) {
	sets, l := regression(t, 1)
	set := sets[0]
	w0 := []float64{0.3, -0.2, 0.1}
	train := func(c fedavg.Client) ([]float64, fedavg.Outcome) {
		cfg := fedavg.Config{Agents: 1, Participation: fedavg.Full, StepSize: 0.05,
			Epochs: fedavg.Range{Min: 5, Max: 5}, Batch: fedavg.Range{Min: 4, Max: 4}, Client: c}
		a := fedavg.NewAgent(&cfg, set, l, fedavg.AgentStreams(&cfg, func(p string) *rand.Rand { return rng.New(1, "agent/0", p) }))
		w := make([]float64, 3)
		out, err := a.Train(w, w0, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		return w, out
	}
	q, qOut := train(qFedAvgClient{})
	sgd, sgdOut := train(fedavg.SGD{})
	if !slices.Equal(q, sgd) {
		t.Errorf("the q-FedAvg client trains to %v, local SGD to %v", q, sgd)
	}
	if want := l.Risk(w0, set); len(qOut.ToServer) != 1 || qOut.ToServer[0] != want {
		t.Errorf("the client sends %v, want [F_k(w0)] = [%v]", qOut.ToServer, want)
	}
	if qOut.Gradients != sgdOut.Gradients+set.Len() {
		t.Errorf("%d evaluations charged, want local SGD's %d plus the %d samples of the loss", qOut.Gradients, sgdOut.Gradients, set.Len())
	}
}
