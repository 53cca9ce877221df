package cli

import (
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/spf13/cobra"

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

func init() { addPrivacyCommand(newPrivacyGammaCommand) }

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
