package audit

import (
	"fmt"
	"math/rand/v2"

	"gonum.org/v1/gonum/floats"

	"maple/privacy/pairmask"
)

// MaskedLink is one tapped link from the victim under local graph-homomorphic
// masks, as the threat model makes it public (paper 001 §II: the topology,
// the weights and the split of every receiver's neighbours are known): the
// receiver, the victim's role there (pairmask.Unmasked for a receiver that
// cannot mask, whose messages arrive plain), the weight a the receiver gives
// the victim, and the partners whose pair masks the victim adds, ascending.
type MaskedLink struct {
	Receiver int
	Role     pairmask.Role
	Weight   float64
	Partners []int
}

// Unmasker is the eavesdropper who, besides the messages, holds the secrets
// the victim shares with its partners. Under privacy.key_randomness: seeded
// that is anyone holding the run seed that summary.json publishes: every
// X25519 private key is drawn from a stream of it, so the keys, the pair
// secrets and every mask follow (SeededSecrets). The Unmasker recomputes the
// masks the victim adds to a message — ±Σ_partners g/a, each g from the
// pair's pairmask.MaskStream at the message's slot — and subtracts them,
// recovering the victim's value up to rounding. Given secrets that are not
// the pairs' own (the agents drew their keys from the operating system), it
// subtracts masks independent of the true ones: its error is then the size
// of both together, and it recovers nothing.
//
// It models the static protocol: masks re-keyed or revealed after a
// partner's dropout (time-varying graphs) are not recomputed.
type Unmasker struct {
	links []unmaskLink
	std   float64
	mask  []float64
}

type unmaskLink struct {
	receiver int
	role     pairmask.Role
	weight   float64
	streams  []*pairmask.MaskStream // one per partner, in the links' order
}

// NewUnmasker returns the unmasker of links whose masks have standard
// deviation std, where secret(p) returns the secret the victim shares with
// partner p.
func NewUnmasker(links []MaskedLink, std float64, secret func(partner int) (pairmask.Secret, error)) (*Unmasker, error) {
	u := &Unmasker{std: std}
	for _, l := range links {
		ul := unmaskLink{receiver: l.Receiver, role: l.Role, weight: l.Weight}
		if l.Role != pairmask.Unmasked {
			if !(l.Weight > 0) {
				return nil, fmt.Errorf("audit: link to %d has weight %v; a masked link needs a positive weight", l.Receiver, l.Weight)
			}
			for _, p := range l.Partners {
				s, err := secret(p)
				if err != nil {
					return nil, fmt.Errorf("audit: secret shared with %d: %w", p, err)
				}
				ul.streams = append(ul.streams, pairmask.NewMaskStream(s))
			}
		}
		u.links = append(u.links, ul)
	}
	return u, nil
}

// Unmask subtracts from x, the victim's message on link k (an index into the
// links) at the given iteration and communication stage, the masks the
// victim added to it, in place.
func (u *Unmasker) Unmask(x []float64, k, iteration, stage int) {
	l := &u.links[k]
	if len(u.mask) != len(x) {
		u.mask = make([]float64, len(x))
	}
	for _, s := range l.streams {
		s.Fill(u.mask, pairmask.Slot{Receiver: l.receiver, Iteration: iteration, Stage: stage}, u.std)
		floats.AddScaled(x, -l.role.Sign()/l.weight, u.mask)
	}
}

// SeededSecrets returns the secrets the victim shares with its partners when
// every node's X25519 key pair is drawn from a stream the run seed
// determines (pairmask.NewKeyPair): keyStream(p) opens node p's key stream
// afresh, as the run does. It is the key recovery of the adversary holding
// the seed: the victim's private key, and from the partners' public keys
// (recomputed the same way, or read off the wire) the pair secrets.
func SeededSecrets(victim int, keyStream func(node int) *rand.Rand) func(partner int) (pairmask.Secret, error) {
	return func(partner int) (pairmask.Secret, error) {
		own, err := pairmask.NewKeyPair(keyStream(victim))
		if err != nil {
			return pairmask.Secret{}, err
		}
		peer, err := pairmask.NewKeyPair(keyStream(partner))
		if err != nil {
			return pairmask.Secret{}, err
		}
		return own.Shared(peer.PublicBytes())
	}
}
