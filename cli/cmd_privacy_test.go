package cli

import (
	"strings"
	"testing"
)

// maple privacy dp-sgd prints the published ε of TensorFlow Privacy's
// MNIST tutorial (N = 60000, B = 256, z = 1.12, 60 epochs, δ = 1e-5: 2.92
// with the classic conversion), solves for the noise multiplier of a
// target ε, and refuses bad flags with one line naming the flag, exit 2.
func TestPrivacyDPSGD(t *testing.T) {
	code, out, errOut := maple(t, "privacy", "dp-sgd", "--samples", "60000", "--batch", "256", "--noise-multiplier", "1.12", "--epochs", "60")
	if code != 0 || !strings.Contains(out, "14063 steps") || !strings.Contains(out, "epsilon           2.92") || !strings.Contains(out, "(classic conversion") {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
	// Solving for z and computing ε back give the target (the Balle et al.
	// conversion, to the 6 digits printed).
	code, out, _ = maple(t, "privacy", "dp-sgd", "--samples", "60000", "--batch", "256", "--epsilon", "2", "--epochs", "60")
	if code != 0 || !strings.Contains(out, "noise multiplier  1.2952") || !strings.Contains(out, "epsilon           2 at δ = 1e-05   (balle2020") {
		t.Errorf("--epsilon 2: exit %d\n%s", code, out)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--samples", "100", "--batch", "10", "--epochs", "1", "--noise-multiplier", "-1"}, "--noise-multiplier: need z > 0"},
		{[]string{"--samples", "100", "--batch", "10", "--epochs", "1", "--noise-multiplier", "1", "--delta", "1"}, "--delta: need 0 < δ < 1"},
		{[]string{"--samples", "100", "--batch", "200", "--epochs", "1", "--noise-multiplier", "1"}, "--batch: need 1 ≤ B ≤ N = 100"},
		{[]string{"--samples", "100", "--batch", "10", "--epochs", "1"}, "exactly one of --noise-multiplier"},
		{[]string{"--samples", "100", "--batch", "10", "--epochs", "1", "--epsilon", "1", "--sampling", "bogus"}, "--sampling: unknown value"},
		{[]string{"--samples", "100", "--batch", "10", "--epochs", "0", "--epsilon", "1"}, "--epochs: need E > 0"},
	} {
		code, _, errOut := maple(t, append([]string{"privacy", "dp-sgd"}, c.args...)...)
		if code != 2 || !strings.Contains(errOut, c.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", c.args, code, errOut, c.want)
		}
	}
}
