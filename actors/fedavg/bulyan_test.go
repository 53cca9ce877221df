package fedavg

import (
	"errors"
	"slices"
	"testing"

	"maple/algorithms/fedavg"
	"maple/internal/params"
)

// Bulyan by hand: seven replies in one coordinate, 0, 20, 1, −100, 3, 8 and
// 4 in slot order, with f = 1, so θ = 5 are selected and β = 3 averaged.
// Krum's rounds, each scoring a reply by its n − 3 nearest neighbours among
// the n left (squared distances):
//
//	n = 7, 4 neighbours: 0 → 1+9+16+64 = 90, 1 → 63, 3 → 1+4+9+25 = 39,
//	       4 → 42, 8 → 154, 20 → 1050, −100 → 10⁴+…: select 3
//	n = 6, 3 neighbours: 0 → 81, 1 → 59, 4 → 9+16+16 = 41, 8 → 129, …: select 4
//	n = 5, 2 neighbours: 0 → 65, 1 → 1+49 = 50, 8 → 113, …: select 1
//	n = 4, 1 neighbour:  0 → 64, 8 → 64, 20 → 144, −100 → 10⁴: 0 (lower slot)
//	n = 3, 1 neighbour:  20 → 144, 8 → 144, −100 → 108² ≈ 1.17·10⁴: 20 (lower slot)
//
// The selection 0, 1, 3, 4, 20 has median 3; the three closest to it are
// 1, 3 and 4 (20 and then 0 dropped), whose mean is 8/3 — where the mean
// of all seven is −64/7, Krum keeps 3 and the median is 3. With update
// sharing the model moves by −μ times the same. With f = 0 every reply is
// selected and averaged: the mean.
func TestBulyanByHand(t *testing.T) {
	replies := [][]float64{{0}, {20}, {1}, {-100}, {3}, {8}, {4}}
	mean := 8.0 / 3 // a float64: 5 − 0.5·mean below is rounded as the rule's is
	for _, c := range []struct {
		b     bulyan
		share fedavg.Share
		want  float64
	}{
		{bulyan{F: 1}, fedavg.Models, mean},
		{bulyan{F: 1}, fedavg.Updates, 5 - 0.5*mean},
		{bulyan{F: 0}, fedavg.Models, -64.0 / 7},
	} {
		model := []float64{5}
		c.b.Combine(model, replies, c.share, 0.5)
		if model[0] != c.want {
			t.Errorf("%+v, %v: model %v, want %v", c.b, c.share, model[0], c.want)
		}
	}
}

// Each coordinate averages the values nearest its own median, which is
// not the trimmed mean. Seven replies, the outliers last: Krum selects the
// five others one by one (each has at least n − 3 honest neighbours until
// three replies are left, when the honest one's score, its distance to the
// nearer outlier, is at most either outlier's and wins the tie). Coordinate
// 0's values 1, 2, 3, 0, 4 have median 2: 4 is dropped (a tie with 0: the
// upper), then 0, leaving 1, 2, 3 of mean 2. Coordinate 1's 8, 9, 10, 30,
// 31 have median 10: 31 and 30 are dropped, leaving 8, 9, 10 of mean 9 —
// where the trimmed mean of the five would drop 8 and 31 and give 49/3.
func TestBulyanAveragesNearTheMedianPerCoordinate(t *testing.T) {
	replies := [][]float64{{1, 8}, {2, 9}, {3, 10}, {0, 30}, {4, 31}, {1e6, 1e6}, {-1e6, -1e6}}
	model := make([]float64, 2)
	bulyan{F: 1}.Combine(model, replies, fedavg.Models, 1)
	if want := []float64{2, 9}; !slices.Equal(model, want) {
		t.Errorf("model %v, want %v", model, want)
	}
}

// With one agent of seven sending 10⁶ every round, Bulyan with f = 1
// (n = 7 = 4f + 3) never selects it, and gradient descent reaches w^o as
// with Krum (TestKrumServerResistsAnOutlier).
func TestBulyanServerResistsAnOutlier(t *testing.T) {
	if msd := outlierMSD(t, "bulyan", params.Values{"f": 1}); msd > 1e-2 {
		t.Errorf("Bulyan server MSD %v, want below 1e-2", msd)
	}
}

// The paper's condition n ≥ 4f + 3 is checked against the replies of a
// round, naming the parameter.
func TestBulyanRefusesTooManyByzantineReplies(t *testing.T) {
	for _, c := range []struct {
		draws, f int
		want     string // "" when valid
	}{
		{7, 1, ""}, {6, 0, ""}, {20, 4, ""},
		{6, 1, "f: Bulyan tolerates f Byzantine replies among n ≥ 4f + 3, and a round has n = 6 replies: f must be at most 0"},
		{20, 5, "f: Bulyan tolerates f Byzantine replies among n ≥ 4f + 3, and a round has n = 20 replies: f must be at most 4"},
		{2, 0, "f: Bulyan tolerates f Byzantine replies among n ≥ 4f + 3, and a round has n = 2 replies: it needs at least 3"},
	} {
		cfg := fedavg.Config{Agents: 30, Participants: c.draws, StepSize: 0.05, Epochs: fedavg.Range{Min: 1, Max: 1}, Batch: fedavg.Range{Min: 1, Max: 1}}
		err := bulyan{F: c.f}.Validate(&cfg)
		var pe *params.Error
		if c.want == "" && err != nil || c.want != "" && (err == nil || err.Error() != c.want || !errors.As(err, &pe)) {
			t.Errorf("n = %d, f = %d: %v, want %q", c.draws, c.f, err, c.want)
		}
	}
	if !slices.Contains(ReferenceServers(), "bulyan") {
		t.Error("bulyan is not run by the reference engine")
	}
}
