package fedavg

import (
	"slices"
	"strings"
	"testing"

	"maple/algorithms/compress"
)

// The majority vote by hand, against the mean of the same signs: three
// replies vote (+, −, +), (−, −, +) and (+, +, −) in three coordinates; the
// sums are 1, −1 and 1, so the model moves by −μ, +μ, −μ (μ = 0.5, lr = 1),
// where the mean of the ±1 signs moves it by a third of that. A tie does
// not move, a zero abstains, and model sharing votes w − w_k.
func TestMajorityVoteByHand(t *testing.T) {
	signs := [][]float64{{1, -1, 1}, {-1, -1, 1}, {1, 1, -1}}
	model := []float64{0, 0, 0}
	MajorityRule{LR: 1}.Combine(model, signs, Updates, 0.5)
	if want := []float64{-0.5, 0.5, -0.5}; !slices.Equal(model, want) {
		t.Errorf("majority: %v, want %v", model, want)
	}
	mean := []float64{0, 0, 0}
	MeanRule{}.Combine(mean, signs, Updates, 0.5)
	if slices.Equal(mean, model) {
		t.Errorf("the mean of the signs %v equals the majority vote", mean)
	}
	model = []float64{1, 1, 1}
	MajorityRule{LR: 2}.Combine(model, [][]float64{{3, 0, -1}, {-2, 0, 5}, {0, 4, 2}}, Updates, 0.25)
	if want := []float64{1, 0.5, 0.5}; !slices.Equal(model, want) {
		t.Errorf("tie, abstentions, lr = 2: %v, want %v", model, want)
	}
	model = []float64{1, 1, 1}
	MajorityRule{LR: 1}.Combine(model, [][]float64{{0, 2, 1}, {0.5, 3, 1}, {2, -1, 1}}, Models, 0.5)
	if want := []float64{0.5, 1.5, 1}; !slices.Equal(model, want) {
		t.Errorf("model sharing: %v, want %v", model, want)
	}
}

// signSGD with the majority vote end to end: the server decodes each
// reply's bits to ±1 and votes; any other server is refused by name.
func TestSignSGDNeedsTheMajorityVote(t *testing.T) {
	cfg := Config{Share: Updates, Compress: compress.SignSGD{}, Rule: MajorityRule{LR: 1}}
	replies := [][]float64{{0.2, -5, 1}, {-0.1, -0.3, 2}, {7, 0.01, -3}}
	decoded := make([][]float64, len(replies))
	for i, u := range replies {
		c := compress.SignSGD{}.Encode(u, nil)
		decoded[i] = make([]float64, 3)
		if err := cfg.DecodeReply(decoded[i], nil, &c); err != nil {
			t.Fatal(err)
		}
	}
	model := []float64{0, 0, 0}
	cfg.Rule.Combine(model, decoded, Updates, 0.5)
	if want := []float64{-0.5, 0.5, -0.5}; !slices.Equal(model, want) {
		t.Errorf("signSGD + majority: %v, want %v", model, want)
	}
	if err := cfg.validateCompress(); err != nil {
		t.Errorf("with the majority vote: %v", err)
	}
	cfg.Rule = MeanRule{}
	if err := cfg.validateCompress(); err == nil || !strings.Contains(err.Error(), "server majority") {
		t.Errorf("with the mean: %v", err)
	}
}

// Compression is refused with secure aggregation and DP-FedAvg, naming
// the reason.
func TestCompressionRefusals(t *testing.T) {
	base := Config{Agents: 4, Participants: 2, StepSize: 0.1, Epochs: Range{Min: 1, Max: 1}, Batch: Range{Min: 1, Max: 1},
		Compress: compress.QSGD{Levels: 2}}
	if err := base.Validate(); err != nil {
		t.Fatal(err)
	}
	dp := base
	dp.Share, dp.DP = Updates, DP{Mode: CentralDP, Clip: 1, NoiseMultiplier: 1, Delta: 1e-5}
	if err := dp.Validate(); err == nil || !strings.Contains(err.Error(), CompressDP) {
		t.Errorf("with DP-FedAvg: %v", err)
	}
	sa := base
	sa.SecAgg = &SecureAggregation{}
	if err := sa.validateCompress(); err == nil || !strings.Contains(err.Error(), CompressSecAgg) {
		t.Errorf("with secure aggregation: %v", err)
	}
	dense := base
	dense.Compress = compress.Dense{}
	dense.SecAgg = &SecureAggregation{}
	if err := dense.validateCompress(); err != nil {
		t.Errorf("dense replies with secure aggregation: %v", err)
	}
}
