package pairmask

import "maple/internal/enum"

// Mode is how the pairs of a receiver's neighbourhood obtain their shared masks.
type Mode int

const (
	// Secure derives masks from an X25519 key agreement relayed by the
	// receiver, HKDF-SHA256 and ChaCha8 (KeyPair, MaskStream).
	Secure Mode = iota
	// Paper follows paper 001 Definition 2 with the corrected scale:
	// U(0,1) and Gamma(2,1) keys, exchanged as e^{−v} (PaperKeys, PaperParams).
	Paper
	// Oracle derives the pair secret from the run seed, with no key exchange
	// (OracleSecret, MaskStream): fastest, for MSD experiments.
	Oracle
)

var modeNames = enum.Of[Mode]("LGH mask mode", "secure", "paper", "oracle")

// String returns the scenario-file name of the mode.
func (m Mode) String() string { return modeNames.String(m) }

// ParseMode returns the mode named s ("secure", "paper" or "oracle").
func ParseMode(s string) (Mode, error) { return modeNames.Parse(s) }
