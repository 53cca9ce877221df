package pairmask

import "fmt"

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

// String returns the scenario-file name of the mode.
func (m Mode) String() string {
	switch m {
	case Secure:
		return "secure"
	case Paper:
		return "paper"
	case Oracle:
		return "oracle"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// ParseMode returns the mode named s ("secure", "paper" or "oracle").
func ParseMode(s string) (Mode, error) {
	switch s {
	case "secure":
		return Secure, nil
	case "paper":
		return Paper, nil
	case "oracle":
		return Oracle, nil
	}
	return 0, fmt.Errorf("unknown LGH mask mode %q (expected secure, paper or oracle)", s)
}
