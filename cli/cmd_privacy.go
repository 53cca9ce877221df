package cli

import (
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/spf13/cobra"

	"maple/privacy/accountant"
	"maple/privacy/gamma"
)

func init() { addCommand(newPrivacyCommand) }

// privacyCommands lists the constructors of the subcommands of maple privacy
// (maple privacy gamma, …); each adds itself with addPrivacyCommand from an
// init function.
var privacyCommands []func(g *globalFlags) *cobra.Command

// addPrivacyCommand registers a subcommand of maple privacy.
func addPrivacyCommand(c func(g *globalFlags) *cobra.Command) {
	privacyCommands = append(privacyCommands, c)
}

func init() {
	addPrivacyCommand(newPrivacyGammaCommand)
	addPrivacyCommand(newPrivacyDPSGDCommand)
}

func newPrivacyCommand(g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "privacy",
		Short: "Privacy calculators: the noise a mechanism needs for a target (ε, δ), and back",
		Args:  args(cobra.NoArgs),
	}
	for _, c := range privacyCommands {
		cmd.AddCommand(c(g))
	}
	return cmd
}

type gammaFlags struct {
	epsilon, delta, theta float64
	infL, supL            float64
}

func newPrivacyGammaCommand(*globalFlags) *cobra.Command {
	f := &gammaFlags{}
	cmd := &cobra.Command{
		Use:   "gamma --epsilon E (--delta D | --theta T) [--inf-l A --sup-l B]",
		Short: "Lemma 1 of paper 003: the Gamma noise θ that makes R(L) ~ Gamma(L/θ, θ) (ε, δ)-LDP, or the δ of a given θ",
		Long: "With --delta, print the least θ for which the Gamma mechanism on inputs L in\n" +
			"[inf L, sup L] is (ε, δ)-LDP by Lemma 1, and the δ it reaches; with --theta,\n" +
			"print the δ of that θ. Both print the floor δ_∞(ε), the limit of δ as θ grows,\n" +
			"which no θ goes below when ε ≥ ln(sup L/inf L) (for smaller ε, δ dips\n" +
			"slightly below it at finite θ).\n" +
			"A δ below what any θ reaches exits with status 2 and says which ratio\n" +
			"sup L/inf L would make it reachable.",
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return privacyGamma(cmd.OutOrStdout(), cmd, f) },
	}
	cmd.Flags().Float64Var(&f.epsilon, "epsilon", -1, "privacy level ε ≥ 0 (required)")
	cmd.Flags().Float64Var(&f.delta, "delta", 0, "target δ in (0, 1): find the least θ")
	cmd.Flags().Float64Var(&f.theta, "theta", 0, "noise θ > 0: compute its δ")
	cmd.Flags().Float64Var(&f.infL, "inf-l", 1, "inf L, the least input")
	cmd.Flags().Float64Var(&f.supL, "sup-l", 2, "sup L, the largest input")
	return cmd
}

func privacyGamma(w io.Writer, cmd *cobra.Command, f *gammaFlags) error {
	b := gamma.Bounds{Inf: f.infL, Sup: f.supL}
	switch {
	case !cmd.Flags().Changed("epsilon") || !(f.epsilon >= 0) || math.IsInf(f.epsilon, 1):
		return usageError{fmt.Errorf("--epsilon: need a finite ε ≥ 0")}
	case cmd.Flags().Changed("delta") == cmd.Flags().Changed("theta"):
		return usageError{fmt.Errorf("give exactly one of --delta (find θ) and --theta (compute δ)")}
	case b.Validate() != nil:
		return usageError{fmt.Errorf("--inf-l, --sup-l: need 0 < inf L ≤ sup L < ∞, got %v, %v", f.infL, f.supL)}
	}
	theta := f.theta
	if cmd.Flags().Changed("delta") {
		if !(f.delta > 0 && f.delta < 1) {
			return usageError{fmt.Errorf("--delta: need 0 < δ < 1, got %v", f.delta)}
		}
		var err error
		if theta, err = gamma.Theta(f.epsilon, f.delta, b); err != nil {
			if errors.Is(err, gamma.ErrInfeasible) {
				return usageError{fmt.Errorf("no θ reaches δ = %v at ε = %v with sup L/inf L = %.6g (the floor δ_∞ is %.6g); the floor falls below δ only for sup L/inf L < %.6g",
					f.delta, f.epsilon, b.Ratio(), gamma.Floor(f.epsilon, b), largestRatio(f.epsilon, f.delta))}
			}
			return usageError{err}
		}
	} else if !(theta > 0) || math.IsInf(theta, 1) {
		return usageError{fmt.Errorf("--theta: need θ > 0, got %v", theta)}
	}
	fmt.Fprintf(w, "Gamma mechanism R(L) ~ Gamma(L/θ, θ), L in [%v, %v] (sup L/inf L = %.6g)\n", b.Inf, b.Sup, b.Ratio())
	fmt.Fprintf(w, "theta       %.6g   (θ/inf L = %.6g)\n", theta, theta/b.Inf)
	fmt.Fprintf(w, "epsilon     %v\n", f.epsilon)
	fmt.Fprintf(w, "delta       %.6g   (Lemma 1)\n", gamma.Delta(f.epsilon, theta, b))
	fmt.Fprintf(w, "floor       %.6g   (%s)\n", gamma.Floor(f.epsilon, b), floorNote(f.epsilon, b))
	// √L·√θ and √θ/√L rather than √(Lθ) and √(θ/L), which overflow for a
	// finite sd at huge θ (--theta 1e308 printed an sd of +Inf).
	fmt.Fprintf(w, "noise sd    %.6g at inf L, %.6g at sup L   (√(Lθ); relative √(θ/L): %.3g, %.3g)\n",
		gamma.NoiseSD(b.Inf, theta), gamma.NoiseSD(b.Sup, theta), math.Sqrt(theta)/math.Sqrt(b.Inf), math.Sqrt(theta)/math.Sqrt(b.Sup))
	return nil
}

// floorNote qualifies the floor δ_∞(ε): a lower bound on δ for every θ when
// ε ≥ ln(sup L/inf L), only the limit θ → ∞ otherwise, δ(θ) dipping below it
// at finite θ (package gamma, Theta).
func floorNote(eps float64, b gamma.Bounds) string {
	if eps >= math.Log(b.Ratio()) {
		return "δ_∞(ε), the limit θ → ∞: no θ gives less"
	}
	return "δ_∞(ε), the limit θ → ∞; as ε < ln(sup L/inf L), δ dips slightly below it at finite θ"
}

// largestRatio returns the largest sup L/inf L whose floor δ_∞(ε) is below
// δ (the floor grows with the ratio), found by bisection; 1 when even nearly
// equal bounds do not reach it.
func largestRatio(eps, delta float64) float64 {
	lo, hi := 1.0, 2.0
	floor := func(r float64) float64 { return gamma.Floor(eps, gamma.Bounds{Inf: 1, Sup: r}) }
	for floor(hi) < delta && hi < 1e12 {
		lo, hi = hi, hi*2
	}
	for range 100 {
		mid := (lo + hi) / 2
		if floor(mid) < delta {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

type dpsgdFlags struct {
	samples, batch       int
	noise, epochs, delta float64
	epsilon              float64
	sampling             string
}

func newPrivacyDPSGDCommand(*globalFlags) *cobra.Command {
	f := &dpsgdFlags{}
	cmd := &cobra.Command{
		Use:   "dp-sgd --samples N --batch B --epochs E (--noise-multiplier Z | --epsilon T) [--delta D] [--sampling poisson|fixed]",
		Short: "The (ε, δ) of DP-SGD for a data set, batch size, noise multiplier and number of epochs, or the noise multiplier for a target ε",
		Long: "With --noise-multiplier, print the sample-level ε of DP-SGD (Abadi et al. 2016) at δ:\n" +
			"⌈E·N/B⌉ steps of the sampled Gaussian mechanism at rate q = B/N, its Rényi DP\n" +
			"composed and converted to (ε, δ) by Balle et al. 2020 (and by the classic rule of\n" +
			"Mironov 2017, which TensorFlow Privacy's early releases print), over the orders\n" +
			"1.1, 1.2, …, 10.9, 12, …, 63, 64, 128, 256. Poisson sampling (each example joins a\n" +
			"batch with probability q, add/remove-one neighbours: Mironov, Talwar & Zhang 2019)\n" +
			"is what Opacus and TensorFlow Privacy assume; fixed-size batches drawn without\n" +
			"replacement are replace-one neighbours, whose sensitivity is 2C (Wang, Balle &\n" +
			"Kasiviswanathan 2019). With --epsilon, print the smallest noise multiplier that\n" +
			"reaches that ε instead.",
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return privacyDPSGD(cmd.OutOrStdout(), cmd, f) },
	}
	cmd.Flags().IntVar(&f.samples, "samples", 0, "N, the examples of the data set (required)")
	cmd.Flags().IntVar(&f.batch, "batch", 0, "B, the (expected) batch size, at most N (required)")
	cmd.Flags().Float64Var(&f.epochs, "epochs", 0, "E, the passes over the data (required)")
	cmd.Flags().Float64Var(&f.noise, "noise-multiplier", 0, "z > 0: noise of standard deviation z·C per step")
	cmd.Flags().Float64Var(&f.epsilon, "epsilon", 0, "target ε > 0: find the noise multiplier instead")
	cmd.Flags().Float64Var(&f.delta, "delta", 1e-5, "δ in (0, 1)")
	cmd.Flags().StringVar(&f.sampling, "sampling", "poisson", "poisson or fixed")
	return cmd
}

func privacyDPSGD(w io.Writer, cmd *cobra.Command, f *dpsgdFlags) error {
	changed := cmd.Flags().Changed
	sampling := accountant.Poisson
	switch {
	case f.samples < 1:
		return usageError{fmt.Errorf("--samples: need N ≥ 1, got %d", f.samples)}
	case f.batch < 1 || f.batch > f.samples:
		return usageError{fmt.Errorf("--batch: need 1 ≤ B ≤ N = %d, got %d", f.samples, f.batch)}
	case !(f.epochs > 0) || math.IsInf(f.epochs, 1):
		return usageError{fmt.Errorf("--epochs: need E > 0, got %v", f.epochs)}
	case !(f.delta > 0 && f.delta < 1):
		return usageError{fmt.Errorf("--delta: need 0 < δ < 1, got %v", f.delta)}
	case changed("noise-multiplier") == changed("epsilon"):
		return usageError{fmt.Errorf("give exactly one of --noise-multiplier (compute ε) and --epsilon (find the noise multiplier)")}
	case changed("noise-multiplier") && (!(f.noise > 0) || math.IsInf(f.noise, 1)):
		return usageError{fmt.Errorf("--noise-multiplier: need z > 0, got %v", f.noise)}
	case changed("epsilon") && (!(f.epsilon > 0) || math.IsInf(f.epsilon, 1)):
		return usageError{fmt.Errorf("--epsilon: need ε > 0, got %v", f.epsilon)}
	case f.sampling == "fixed":
		sampling = accountant.FixedSize
	case f.sampling != "poisson":
		return usageError{fmt.Errorf("--sampling: unknown value %q (expected poisson or fixed)", f.sampling)}
	}
	s := accountant.DPSGD(f.samples, f.batch, f.epochs, f.noise, sampling)
	neighbours := "add or remove one example"
	if sampling == accountant.FixedSize {
		neighbours = "replace one example, sensitivity 2C"
	}
	if changed("epsilon") {
		z, err := accountant.NoiseMultiplier(s, f.epsilon, f.delta, accountant.Balle2020)
		if err != nil {
			return usageError{err}
		}
		s.NoiseMultiplier = z
	}
	fmt.Fprintf(w, "DP-SGD: N = %d, B = %d (q = %.6g, %s sampling; neighbours: %s), %v epochs = %d steps\n",
		f.samples, f.batch, s.Rate, sampling, neighbours, f.epochs, s.Steps)
	fmt.Fprintf(w, "noise multiplier  %.6g\n", s.NoiseMultiplier)
	for _, c := range []accountant.Conversion{accountant.Balle2020, accountant.Classic} {
		eps, order := s.Epsilon(f.delta, c)
		fmt.Fprintf(w, "epsilon           %.6g at δ = %v   (%s conversion, order α = %v)\n", eps, f.delta, c, order)
	}
	return nil
}
