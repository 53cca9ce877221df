package fedavg

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"

	"maple/algorithms/fedavg"
	"maple/internal/params"
	"maple/privacy/accountant"
	"maple/privacy/accountant/pld"
	"maple/privacy/clip"
	"maple/privacy/ledger"
)

// DP-SGD (Abadi, Chu, Goodfellow, McMahan, Mironov, Talwar and Zhang,
// "Deep learning with differential privacy", CCS 2016) as a FedAvg client:
// every local step clips each example's gradient to ℓ2 norm C, adds
// N(0, (zC)²) noise to their sum and divides by the (expected) batch size,
// so that each client's training is differentially private with respect
// to each of its examples — for every model maple has, through
// loss.ClippedGradSum. Batches are Poisson samples (each example joins a
// step's batch with probability q = B_k/N_k, as Opacus and TensorFlow
// Privacy analyse them) or fixed-size ones drawn without replacement.
//
// Under an audit of its sample-level guarantee (privacy.audit with canary
// examples, algorithms/fedavg/canaryexamples.go), agent 0's dataset holds
// m canary examples beside its N real ones: its Poisson batches are drawn
// over all N + m at q = B_k/(N + m) — every canary draws whether it is in
// or out, so that the rate and the draws of the real examples do not
// depend on which canaries are in —, the drawn canaries that are in add
// their clipped gradients to the sum, and every step is recorded for the
// white-box auditor (Local.RecordStep).

func init() {
	Clients.Register("dp-sgd", "DP-SGD (Abadi et al. 2016): local steps on per-example gradients clipped to C plus N(0, (zC)²) noise, Poisson or fixed-size batches",
		dpSGD{Clip: 1, NoiseMultiplier: 1.1, Sampling: "poisson", Delta: 1e-5, Relation: "add-remove", Accountant: "pld"})
}

// dpSGD is the client's parameters, and its local solver.
type dpSGD struct {
	Clip            float64 `yaml:"clip" range:"(0, inf)" doc:"ℓ2 bound C of each example's gradient"`
	NoiseMultiplier float64 `yaml:"noise_multiplier" range:"(0, inf)" doc:"z: each step's sum of clipped gradients gets N(0, (zC)²) noise per coordinate"`
	Sampling        string  `yaml:"sampling" oneof:"poisson fixed" doc:"poisson: each example joins a step's batch with probability B_k/N_k; fixed: B_k distinct examples"`
	Delta           float64 `yaml:"delta" range:"(0, 1)" doc:"δ of the sample-level (ε, δ) guarantee reported"`
	Relation        string  `yaml:"relation" oneof:"add-remove replace-one" doc:"the neighbouring relation of the guarantee: an example added or removed (sensitivity C), or replaced (2C)"`
	Accountant      string  `yaml:"accountant" oneof:"pld rdp" doc:"pld: privacy loss distributions (the tightest); rdp: Rényi DP"`
}

// streamDPSGD is the purpose of the agent's stream for the Poisson batches
// and the noise.
const streamDPSGD = "dp-sgd"

// Validate implements fedavg.Checker: the accountant's sampling must be the
// batches' — uniform, and fixed-size ones distinct.
func (p dpSGD) Validate(cfg *fedavg.Config) error {
	switch {
	case cfg.Importance.Data != fedavg.Uniform:
		return errors.New("DP-SGD's accountant assumes uniformly sampled batches: importance sampling of data does not apply")
	case p.Sampling == "fixed" && cfg.BatchWithReplacement:
		return params.Errorf("sampling", "fixed-size batches are accounted as drawn without replacement: algorithm.fedavg.batch_sampling must be without-replacement")
	case p.Sampling == "poisson" && cfg.BatchWithReplacement:
		return params.Errorf("sampling", "poisson batches take each example independently with probability B_k/N_k: algorithm.fedavg.batch_sampling does not apply to them (leave it without-replacement)")
	case p.Sampling != "poisson" && cfg.SampleCanaries != nil:
		return params.Errorf("sampling", "canary examples are audited under poisson batches, whose rate does not depend on which canaries are in")
	}
	if cfg.Batch.Max < 1 {
		return nil // the batch's own field is refused
	}
	if err := ledger.Check(p.SampleAccountant(), p.Step(2*cfg.Batch.Max, cfg.Batch.Max)); err != nil {
		return params.Errorf("accountant", "%v", err)
	}
	return nil
}

// Train implements fedavg.Client.
func (p dpSGD) Train(t *fedavg.Local) error {
	r := t.Rand(streamDPSGD)
	g := make([]float64, len(t.W))
	scratch := make([]float64, len(t.W))
	can := t.Canaries()
	var tmp []float64
	if can != nil {
		tmp = make([]float64, len(t.W))
	}
	var poisson, canaries []int
	for range t.Epochs {
		var idx []int
		if p.Sampling == "poisson" {
			q := float64(t.BatchSize) / float64(t.Set.Len()+can.Len())
			poisson = poisson[:0]
			for n := range t.Set.Len() {
				if r.Float64() < q {
					poisson = append(poisson, n)
				}
			}
			canaries = canaries[:0]
			for c := range can.Len() {
				if r.Float64() < q {
					canaries = append(canaries, c)
				}
			}
			idx = poisson
		} else {
			var err error
			if idx, _, err = t.Batch(); err != nil {
				return err
			}
		}
		t.Loss.ClippedGradSum(g, t.W, t.Set, idx, p.Clip, scratch)
		t.Charge(len(idx))
		if len(canaries) > 0 {
			t.Charge(can.AddClipped(g, t.W, t.Loss, canaries, p.Clip, tmp, scratch))
		}
		clip.AddGaussian(g, p.NoiseMultiplier, p.Clip, r)
		t.RecordStep(t.W, g)
		floats.Scale(1/float64(t.BatchSize), g)
		// The regularizer ρ‖θ‖², θ = θ₀ + w, is data-independent: its
		// gradient 2ρθ is added after the noise.
		if rho := t.Loss.Rho; rho > 0 {
			floats.AddScaled(g, 2*rho, t.W)
			if t.Loss.Origin != nil {
				floats.AddScaled(g, 2*rho, t.Loss.Origin)
			}
		}
		t.Descend(g)
	}
	return nil
}

// Step implements fedavg.PrivateClient: the sampled Gaussian mechanism at
// rate q = batch/samples, Poisson or fixed-size, under the declared
// relation.
func (p dpSGD) Step(samples, batch int) ledger.Round {
	q := math.Min(1, float64(batch)/float64(samples))
	s := accountant.Poisson
	if p.Sampling == "fixed" {
		s = accountant.FixedSize
	}
	rel, _ := accountant.ParseRelation(p.Relation) // the parameter's oneof
	return ledger.Round{Mechanism: pld.GaussianMechanism(p.NoiseMultiplier, q, s, rel)}
}

// SampleAccountant implements fedavg.PrivateClient.
func (p dpSGD) SampleAccountant() ledger.Kind {
	k, _ := ledger.ParseKind(p.Accountant) // the parameter's oneof
	return k
}

// SampleDelta implements fedavg.PrivateClient.
func (p dpSGD) SampleDelta() float64 { return p.Delta }

// ClipNorm implements fedavg.AuditedClient.
func (p dpSGD) ClipNorm() float64 { return p.Clip }

// Mechanism implements fedavg.PrivateClient.
func (p dpSGD) Mechanism() string {
	rel, _ := accountant.ParseRelation(p.Relation)
	return fmt.Sprintf("DP-SGD (Abadi et al. 2016): per-example gradients clipped to C = %g, N(0, (zC)²) noise per step with z = %g, %s batches, %s example neighbours (sensitivity %gC), accounted by %s", p.Clip, p.NoiseMultiplier, p.Sampling, rel, rel.Sensitivity(1), p.Accountant)
}
