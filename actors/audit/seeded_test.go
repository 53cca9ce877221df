package audit

import (
	"math"
	"math/rand/v2"
	"testing"

	"google.golang.org/protobuf/proto"

	"maple/actors"
	adiffusion "maple/actors/diffusion"
	"maple/actors/msg"
	"maple/algorithms/data"
	"maple/algorithms/diffusion"
	"maple/algorithms/loss"
	"maple/algorithms/rng"
	"maple/privacy/audit"
	"maple/privacy/pairmask"
	"maple/topology"
)

// pairs collects the victim's true shared value and the eavesdropper's
// estimate of every round.
type pairs struct {
	victim     actors.ID
	key        string
	truth, est map[int][]float64
}

func (p *pairs) Observe(from actors.ID, round int, key string, v []float64) {
	switch {
	case key == KeyEstimate:
		p.est[round] = append([]float64(nil), v...)
	case key == p.key && from == p.victim:
		p.truth[round] = append([]float64(nil), v...)
	}
}

// seededAudit runs ATC with local graph-homomorphic masks on secure X25519
// keys (drawn from the seed, or with osKeys from the operating system),
// with an eavesdropper on every link from agent 0 that holds the run seed:
// it recomputes every key pair from the seed's key streams, as anyone
// reading summary.json can, and strips the masks before combining. It
// returns the victim's true values and the estimates, per round, and the
// error variance per coordinate of the eavesdropper without the seed.
func seededAudit(t *testing.T, osKeys bool) (truth, est map[int][]float64, plain float64) {
	const agents, dim, seed, victim, iterations = 10, 3, 11, 0, 40
	g, _, err := topology.Geometric(agents, 0.45, 2, rng.New(5, "test", "graph"), 100)
	if err != nil {
		t.Fatal(err)
	}
	A := topology.Averaging(g)
	sets, _ := data.Regression(data.RegressionConfig{Agents: agents, SamplesMin: 20, SamplesMax: 30, Dim: dim, CovScale: 0.5, NoiseVarMin: 0.1, NoiseVarMax: 1}, 99)
	cfg := diffusion.Config{Strategy: diffusion.ATC, StepSize: 0.1,
		Privacy: diffusion.Privacy{Scheme: diffusion.LocalGraphHomomorphic, Std: 0.3, Keys: pairmask.Secure, OSKeys: osKeys}}
	net, err := diffusion.NewNetwork(A, cfg)
	if err != nil {
		t.Fatal(err)
	}
	senders, receivers := make([][]int, agents), make([][]int, agents)
	for p := range agents {
		senders[p], receivers[p] = net.Senders(p), net.Receivers(p)
	}
	plan := pairmask.NewPlan(cfg.Privacy.Roles, senders, receivers)
	const stage = 2 // ATC shares in stage 2 only
	var links []audit.MaskedLink
	variances := make([]float64, len(receivers[victim]))
	for k, r := range receivers[victim] {
		as, ok := plan.Assignment(victim, r)
		if !ok || as.Role == pairmask.Unmasked {
			t.Fatalf("receiver %d cannot mask: the test needs every degree ≥ 2", r)
		}
		w := A.At(victim, r)
		links = append(links, audit.MaskedLink{Receiver: r, Role: as.Role, Weight: w, Partners: as.Partners})
		variances[k] = float64(len(as.Partners)) * cfg.Privacy.Std * cfg.Privacy.Std / (w * w)
	}
	keyStream := func(p int) *rand.Rand { return rng.New(seed, diffusion.AgentName(p), diffusion.StreamKey) }
	u, err := audit.NewUnmasker(links, cfg.Privacy.Std, audit.SeededSecrets(victim, keyStream))
	if err != nil {
		t.Fatal(err)
	}
	blue, err := audit.NewEstimator(audit.Independent(variances))
	if err != nil {
		t.Fatal(err)
	}

	obs := &pairs{key: adiffusion.SharedKey(stage), truth: map[int][]float64{}, est: map[int][]float64{}}
	r := actors.NewRun(actors.Options{RunSeed: seed, Observer: obs})
	defer r.Close()
	sched, err := adiffusion.Spawn(r, adiffusion.Setup{Config: cfg, A: A, Sets: sets, Loss: loss.Loss{Kind: loss.LeastSquares, Rho: 0.01},
		W0: make([]float64, dim), Iterations: iterations, GradientTime: 1e-3})
	if err != nil {
		t.Fatal(err)
	}
	first := sched + 1
	obs.victim = first + victim
	tapped := make([]actors.ID, len(receivers[victim]))
	for k, p := range receivers[victim] {
		tapped[k] = first + actors.ID(p)
	}
	e := &Eavesdropper{Victim: obs.victim, Links: tapped, Estimator: blue,
		Extract: func(m proto.Message) ([]float64, bool) {
			s, ok := m.(*msg.StageShare)
			return s.GetPayload(), ok && s.GetStage() == stage
		},
		Unmask: func(x []float64, link, round int, m proto.Message) {
			u.Unmask(x, link, round, int(m.(*msg.StageShare).GetStage()))
		}}
	r.Wiretap(r.Spawn(Name, e), e.Tap())
	if err := r.Execute(sched, &msg.Start{}); err != nil {
		t.Fatal(err)
	}
	if len(obs.est) != iterations || len(obs.truth) != iterations {
		t.Fatalf("%d estimates and %d true values for %d rounds", len(obs.est), len(obs.truth), iterations)
	}
	return obs.truth, obs.est, blue.Variance()
}

// Under seeded key randomness the eavesdropper who holds the published run
// seed recovers every value the victim shares, exactly; with keys from the
// operating system it recovers nothing — its error is no smaller than that
// of the eavesdropper without the seed.
func TestSeedHolderRecoversSeededKeysOnly(t *testing.T) {
	truth, est, _ := seededAudit(t, false)
	for i, y := range truth {
		for j := range y {
			// The masks it subtracts are the very floats the victim added;
			// what remains is the rounding of y + Σ m/a − Σ m/a and of the
			// estimator's weights (which sum to 1 within 1e-15), a few ulps
			// of values below 100: far below 1e-12.
			if d := math.Abs(est[i][j] - y[j]); d > 1e-12 {
				t.Fatalf("seeded keys, round %d: estimate %v, true %v", i, est[i], y)
			}
		}
	}

	truth, est, plain := seededAudit(t, true)
	var mse float64
	n := 0
	for i, y := range truth {
		for j := range y {
			mse += (est[i][j] - y[j]) * (est[i][j] - y[j])
			n++
		}
	}
	mse /= float64(n)
	t.Logf("os keys: mean square error %.4g per coordinate; the eavesdropper without the seed: %.4g", mse, plain)
	// Subtracting masks unrelated to the true ones doubles the error of
	// the plain estimator (variance plain per coordinate) on average; over
	// 120 coordinates the mean lies within about a quarter of that, so
	// requiring more than half of plain fails only if the seed helped.
	if mse < plain/2 {
		t.Errorf("os keys: mean square error %v per coordinate, below half the plain eavesdropper's %v: the seed recovered something", mse, plain)
	}
}
