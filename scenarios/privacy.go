package scenarios

import (
	"math"
	"slices"
	"strings"
)

// The privacy features that cut across algorithm families: secure
// aggregation of a round's replies and differentially private training
// (docs/privacy.md). A family that models one lists its field in
// Family.Privacy; a scenario that sets a section its family does not list
// is refused, naming the field.
const (
	FieldSecureAggregation = "privacy.secure_aggregation"
	FieldDP                = "privacy.dp"
)

// SecureAggregation is the section privacy.secure_aggregation: the
// replies of every round are summed by a secure-aggregation protocol, so
// that the server learns only their sum (Bonawitz et al., CCS 2017; Bell
// et al., CCS 2020).
type SecureAggregation struct {
	// Protocol is secagg (every client shares its keys with every other),
	// secagg+ (with its neighbours in a random k-regular graph), or none
	// (replies in the clear, with the cost columns, for comparison).
	Protocol string `yaml:"protocol"`
	// Threshold is t, the share holders of a client that reconstruct its
	// secrets; 0 takes a majority of them, ⌊(k + 1)/2⌋ + 1.
	Threshold int `yaml:"threshold"`
	// Neighbours is k, each client's neighbours under secagg+; 0 takes
	// min(n − 1, 2⌈log₂ n⌉) for n clients per round. secagg is k = n − 1.
	Neighbours int `yaml:"neighbours"`
	// Bits is the width of the fixed-point encoding of the inputs, and Clip
	// the range [−clip, clip] of each of their coordinates.
	Bits int     `yaml:"bits"`
	Clip float64 `yaml:"clip"`
	// Timeout, if positive, closes each phase after the first that many
	// virtual seconds after the server opened it; 0 waits for every client.
	Timeout float64 `yaml:"timeout"`
}

// DP is the section privacy.dp: client-level differential privacy,
// DP-FedAvg (McMahan et al., ICLR 2018).
type DP struct {
	// Mode is central (the server adds the noise) or distributed (each
	// client adds its share of discrete Gaussian noise under secure
	// aggregation).
	Mode string `yaml:"mode"`
	// Clip is the ℓ2 bound C of each client's model update, and
	// NoiseMultiplier z: the sum of the clipped updates gets noise of
	// standard deviation z·C.
	Clip            float64 `yaml:"clip"`
	NoiseMultiplier float64 `yaml:"noise_multiplier"`
	// AdaptiveClip, if present, moves C toward a quantile of the update
	// norms (Andrew et al., NeurIPS 2021); central mode only.
	AdaptiveClip *AdaptiveClip `yaml:"adaptive_clip,omitempty"`
	// Beta is the bias of the conditional randomized rounding of
	// distributed mode (Kairouz et al., ICML 2021); 0 rounds without
	// condition.
	Beta float64 `yaml:"beta"`
	// Delta is the δ of the reported (ε, δ) guarantee.
	Delta float64 `yaml:"delta"`
	// Relation is the neighbouring relation the guarantee is stated for:
	// add-remove (one client more or fewer) or replace-one (one client's
	// data replaced); the family derives it from the mode when the
	// scenario leaves it empty.
	Relation string `yaml:"relation"`
	// Accountant composes the rounds: pld (privacy loss distributions) or
	// rdp (Rényi DP); the family derives it from the mode when the
	// scenario leaves it empty.
	Accountant string `yaml:"accountant"`
}

// AdaptiveClip is the section privacy.dp.adaptive_clip.
type AdaptiveClip struct {
	// Quantile is the target fraction γ of unclipped updates and
	// LearningRate the step η_C of the geometric update of C.
	Quantile     float64 `yaml:"quantile"`
	LearningRate float64 `yaml:"learning_rate"`
	// CountNoise is σ_b, the noise on the count of unclipped updates; 0
	// takes the paper's L/20 (L the clients per round), at least z.
	CountNoise float64 `yaml:"count_noise"`
}

// The documented defaults of the privacy sections, in place before a file
// is decoded so that a file setting some of a section's keys keeps the
// others.
func defaultSecureAggregation() *SecureAggregation {
	return &SecureAggregation{Protocol: "secagg", Bits: 32, Clip: 10}
}

func defaultDP() *DP {
	return &DP{Mode: "central", Clip: 1, NoiseMultiplier: 1, Beta: math.Exp(-0.5), Delta: DefaultDelta,
		AdaptiveClip: &AdaptiveClip{Quantile: 0.5, LearningRate: 0.2}}
}

// completePrivacy drops the privacy sections the scenario does not set:
// their defaults were in place for the decoding only.
func completePrivacy(sc *Scenario, set func(string) bool) {
	p := &sc.Privacy
	if !set(FieldSecureAggregation) {
		p.SecureAggregation = nil
	}
	if !set(FieldDP) {
		p.DP = nil
		return
	}
	if !set(FieldDP + ".adaptive_clip") {
		p.DP.AdaptiveClip = nil
	}
}

// secAggProtocols are the values of privacy.secure_aggregation.protocol.
var secAggProtocols = []string{"secagg", "secagg+", "none"}

// dpModes are the values of privacy.dp.mode, dpRelations of
// privacy.dp.relation and dpAccountants of privacy.dp.accountant.
var (
	dpModes       = []string{"central", "distributed"}
	dpRelations   = []string{"add-remove", "replace-one"}
	dpAccountants = []string{"pld", "rdp"}
)

// validatePrivacyFeatures checks the privacy sections' own fields and
// refuses those the family f does not model. What depends on the family's
// parameters (a threshold against the clients of a round) is the family's.
func (v *Validator) validatePrivacyFeatures(sc *Scenario, f Family) {
	p := &sc.Privacy
	for _, s := range []struct {
		field   string
		present bool
	}{{FieldSecureAggregation, p.SecureAggregation != nil}, {FieldDP, p.DP != nil}} {
		if s.present && !slices.Contains(f.Privacy, s.field) {
			v.Fail(s.field, "algorithm.kind %s does not model it (it is modelled by: %s)", f.Kind, strings.Join(familiesWithPrivacy(s.field), ", "))
		}
	}
	if sa := p.SecureAggregation; sa != nil {
		const field = FieldSecureAggregation
		v.OneOf(field+".protocol", sa.Protocol, secAggProtocols)
		v.AtLeast(field+".threshold", sa.Threshold, 0)
		v.AtLeast(field+".neighbours", sa.Neighbours, 0)
		if sa.Bits < 2 || sa.Bits > 64 {
			v.Fail(field+".bits", "must lie in [2, 64], got %d", sa.Bits)
		}
		v.Positive(field+".clip", sa.Clip)
		v.NonNegative(field+".timeout", sa.Timeout)
	}
	if d := p.DP; d != nil {
		const field = FieldDP
		v.OneOf(field+".mode", d.Mode, dpModes)
		v.Positive(field+".clip", d.Clip)
		v.Positive(field+".noise_multiplier", d.NoiseMultiplier)
		if !(d.Beta >= 0 && d.Beta < 1) {
			v.Fail(field+".beta", "must lie in [0, 1), got %v", d.Beta)
		}
		if !(d.Delta > 0 && d.Delta < 1) {
			v.Fail(field+".delta", "must lie in (0, 1), got %v", d.Delta)
		}
		v.OneOf(field+".relation", d.Relation, dpRelations)
		v.OneOf(field+".accountant", d.Accountant, dpAccountants)
		if a := d.AdaptiveClip; a != nil {
			if !(a.Quantile > 0 && a.Quantile < 1) {
				v.Fail(field+".adaptive_clip.quantile", "must lie in (0, 1), got %v", a.Quantile)
			}
			v.Positive(field+".adaptive_clip.learning_rate", a.LearningRate)
			v.NonNegative(field+".adaptive_clip.count_noise", a.CountNoise)
		}

	}
}

// familiesWithPrivacy lists the registered families that model a privacy
// feature, sorted.
func familiesWithPrivacy(field string) []string {
	var kinds []string
	for _, k := range FamilyKinds() {
		if slices.Contains(registered[k].family.Privacy, field) {
			kinds = append(kinds, k)
		}
	}
	if len(kinds) == 0 {
		return []string{"no family"}
	}
	return kinds
}
