package cli

import (
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/spf13/cobra"

	"maple/privacy/accountant"
	"maple/privacy/accountant/pld"
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
	addPrivacyCommand(newPrivacyDPFedAvgCommand)
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

// maxSteps bounds the compositions maple privacy accounts (10¹⁸): more
// overflow the step count.
const maxSteps = 1e18

// accountingFlags are the flags dp-sgd and dp-fedavg share.
type accountingFlags struct {
	noise, epsilon, delta, interval float64
	sampling, relation, accountant  string
}

func (f *accountingFlags) register(cmd *cobra.Command, sampling string) {
	cmd.Flags().Float64Var(&f.noise, "noise-multiplier", 0, "z > 0: noise of standard deviation z·C per step")
	cmd.Flags().Float64Var(&f.epsilon, "epsilon", 0, "target ε > 0: find the noise multiplier instead")
	cmd.Flags().Float64Var(&f.delta, "delta", 1e-5, "δ in (0, 1)")
	cmd.Flags().StringVar(&f.sampling, "sampling", sampling, "poisson or fixed")
	cmd.Flags().StringVar(&f.relation, "relation", "add-remove", "neighbouring relation: add-remove or replace-one")
	cmd.Flags().StringVar(&f.accountant, "accountant", "pld", "pld (privacy loss distributions) or rdp (Rényi DP)")
	cmd.Flags().Float64Var(&f.interval, "interval", pld.DefaultInterval, "the PLD accountant's discretization interval Δ, in [1e-6, 1]")
}

// accounting is what the flags resolve to.
type accounting struct {
	sampling accountant.Sampling
	relation accountant.Relation
	usePLD   bool
}

// parse checks the shared flags, each refused by name.
func (f *accountingFlags) parse(cmd *cobra.Command) (accounting, error) {
	changed := cmd.Flags().Changed
	var a accounting
	var err error
	if a.sampling, err = accountant.ParseSampling(f.sampling); err != nil {
		return a, usageError{fmt.Errorf("--sampling: %v", err)}
	}
	if a.relation, err = accountant.ParseRelation(f.relation); err != nil {
		return a, usageError{fmt.Errorf("--relation: %v", err)}
	}
	switch f.accountant {
	case "pld":
		a.usePLD = true
	case "rdp":
		if !rdpApplies(a) {
			return a, usageError{fmt.Errorf("--accountant rdp: maple's Rényi accountant covers poisson sampling with add-remove (Mironov, Talwar & Zhang) and fixed sampling with replace-one (Wang, Balle & Kasiviswanathan), not %s sampling with %s; use --accountant pld", a.sampling, a.relation)}
		}
	default:
		return a, usageError{fmt.Errorf("--accountant: unknown accountant %q (expected pld or rdp)", f.accountant)}
	}
	switch {
	case !(f.delta > 0 && f.delta < 1):
		return a, usageError{fmt.Errorf("--delta: need 0 < δ < 1, got %v", f.delta)}
	case changed("noise-multiplier") == changed("epsilon"):
		return a, usageError{fmt.Errorf("give exactly one of --noise-multiplier (compute ε) and --epsilon (find the noise multiplier)")}
	case changed("noise-multiplier") && (!(f.noise > 0) || math.IsInf(f.noise, 1)):
		return a, usageError{fmt.Errorf("--noise-multiplier: need z > 0, got %v", f.noise)}
	case changed("epsilon") && (!(f.epsilon > 0) || math.IsInf(f.epsilon, 1)):
		return a, usageError{fmt.Errorf("--epsilon: need ε > 0, got %v", f.epsilon)}
	case !(f.interval >= 1e-6 && f.interval <= 1):
		return a, usageError{fmt.Errorf("--interval: need 1e-6 ≤ Δ ≤ 1, got %v", f.interval)}
	}
	return a, nil
}

// rdpApplies reports whether maple's Rényi accountant has a bound for the
// sampling and relation.
func rdpApplies(a accounting) bool {
	return (a.sampling == accountant.Poisson && a.relation == accountant.AddRemove) ||
		(a.sampling == accountant.FixedSize && a.relation == accountant.ReplaceOne)
}

// neighbours describes the relation's pair for a sum of contributions
// clipped to C, for the header of a report.
func neighbours(a accounting, record string) string {
	switch {
	case a.relation == accountant.AddRemove && a.sampling == accountant.FixedSize:
		return fmt.Sprintf("add or remove one %s (the batch keeps its size, so a drawn %s displaces another: ‖Δ‖ ≤ 2C)", record, record)
	case a.relation == accountant.AddRemove:
		return fmt.Sprintf("add or remove one %s (sensitivity C)", record)
	case a.sampling == accountant.FixedSize:
		return fmt.Sprintf("replace one %s (sensitivity 2C; the drawn %s moves the sum by up to 2C, in either direction from round to round)", record, record)
	}
	return fmt.Sprintf("replace one %s (sensitivity 2C; its contribution at +C against −C)", record)
}

// report solves for z if asked, then prints ε at δ by the PLD and the
// Rényi accountant, the chosen one first, each line naming accountant,
// relation and sampling.
func (f *accountingFlags) report(w io.Writer, cmd *cobra.Command, a accounting, q float64, steps int64) error {
	m := pld.GaussianMechanism(f.noise, q, a.sampling, a.relation)
	opt := pld.Options{Interval: f.interval}
	rdp := accountant.SubsampledGaussian{Rate: q, NoiseMultiplier: f.noise, Steps: int(steps), Sampling: a.sampling}
	if cmd.Flags().Changed("epsilon") {
		var z float64
		var err error
		if a.usePLD {
			z, err = pld.NoiseMultiplier(m, steps, f.epsilon, f.delta, opt)
		} else {
			z, err = accountant.NoiseMultiplier(rdp, f.epsilon, f.delta, accountant.Balle2020)
		}
		if err != nil {
			return usageError{err}
		}
		m.NoiseMultiplier, rdp.NoiseMultiplier = z, z
		fmt.Fprintf(w, "noise multiplier  %.6g   (smallest reaching ε = %v by the %s accountant)\n", z, f.epsilon, f.accountant)
	} else {
		fmt.Fprintf(w, "noise multiplier  %.6g\n", m.NoiseMultiplier)
	}
	tag := fmt.Sprintf("%s, %s sampling", a.relation, a.sampling)
	pldLine := func() error {
		d, err := pld.Compose(m, steps, opt)
		if err != nil {
			return usageError{err}
		}
		fmt.Fprintf(w, "epsilon           %.6g at δ = %v   (pld accountant, %s; Δ = %v)\n", d.Epsilon(f.delta), f.delta, tag, f.interval)
		return nil
	}
	rdpLines := func() {
		if !rdpApplies(a) {
			fmt.Fprintf(w, "epsilon           -   (rdp accountant: no Rényi bound for %s)\n", tag)
			return
		}
		for _, c := range []accountant.Conversion{accountant.Balle2020, accountant.Classic} {
			eps, order := rdp.Epsilon(f.delta, c)
			at := fmt.Sprintf("order α = %v", order)
			if math.IsInf(eps, 1) {
				at = "no order gives a finite bound"
			}
			fmt.Fprintf(w, "epsilon           %.6g at δ = %v   (rdp accountant, %s; %s conversion, %s)\n", eps, f.delta, tag, c, at)
		}
	}
	if a.usePLD {
		if err := pldLine(); err != nil {
			return err
		}
		rdpLines()
		return nil
	}
	rdpLines()
	return pldLine()
}

type dpsgdFlags struct {
	accountingFlags
	samples, batch int
	epochs         float64
}

func newPrivacyDPSGDCommand(*globalFlags) *cobra.Command {
	f := &dpsgdFlags{}
	cmd := &cobra.Command{
		Use:   "dp-sgd --samples N --batch B --epochs E (--noise-multiplier Z | --epsilon T) [--delta D] [--sampling poisson|fixed] [--relation add-remove|replace-one] [--accountant pld|rdp]",
		Short: "The (ε, δ) of DP-SGD for a data set, batch size, noise multiplier and number of epochs, or the noise multiplier for a target ε",
		Long: "With --noise-multiplier, print the sample-level ε of DP-SGD (Abadi et al. 2016) at δ:\n" +
			"⌈E·N/B⌉ steps of the sampled Gaussian mechanism at rate q = B/N. The privacy loss\n" +
			"distribution accountant (pld, the default: connect-the-dots discretization at\n" +
			"interval Δ, Fourier composition, as Google's dp_accounting, TensorFlow Privacy and\n" +
			"Opacus' PRV accountant) prints first, the Rényi accountant beside it (Mironov, Talwar\n" +
			"& Zhang 2019 for poisson with add-remove, Wang, Balle & Kasiviswanathan 2019 for fixed\n" +
			"with replace-one, orders 1.1 … 10.9 and 11 … 1024, converted by Balle et al. 2020 and\n" +
			"by the classic rule of Mironov 2017). Every line names its accountant, relation and\n" +
			"sampling. With --epsilon, print the smallest noise multiplier that reaches that ε by\n" +
			"the chosen accountant instead. docs/privacy.md says how each pair is modelled.",
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return privacyDPSGD(cmd.OutOrStdout(), cmd, f) },
	}
	cmd.Flags().IntVar(&f.samples, "samples", 0, "N, the examples of the data set (required)")
	cmd.Flags().IntVar(&f.batch, "batch", 0, "B, the (expected) batch size, at most N (required)")
	cmd.Flags().Float64Var(&f.epochs, "epochs", 0, "E, the passes over the data (required)")
	f.register(cmd, "poisson")
	return cmd
}

func privacyDPSGD(w io.Writer, cmd *cobra.Command, f *dpsgdFlags) error {
	switch {
	case f.samples < 1:
		return usageError{fmt.Errorf("--samples: need N ≥ 1, got %d", f.samples)}
	case f.batch < 1 || f.batch > f.samples:
		return usageError{fmt.Errorf("--batch: need 1 ≤ B ≤ N = %d, got %d", f.samples, f.batch)}
	case !(f.epochs > 0) || math.IsInf(f.epochs, 1):
		return usageError{fmt.Errorf("--epochs: need E > 0, got %v", f.epochs)}
	case math.Ceil(f.epochs*float64(f.samples)/float64(f.batch)) > maxSteps:
		return usageError{fmt.Errorf("--epochs: %v epochs are more than 10¹⁸ steps", f.epochs)}
	}
	a, err := f.parse(cmd)
	if err != nil {
		return err
	}
	s := accountant.DPSGD(f.samples, f.batch, f.epochs, f.noise, a.sampling)
	fmt.Fprintf(w, "DP-SGD: N = %d, B = %d (q = %.6g, %s sampling), %v epochs = %d steps; neighbours: %s\n",
		f.samples, f.batch, s.Rate, a.sampling, f.epochs, s.Steps, neighbours(a, "example"))
	return f.report(w, cmd, a, s.Rate, int64(s.Steps))
}

type fedavgFlags struct {
	accountingFlags
	clients, perRound int
	rounds            int64
}

func newPrivacyDPFedAvgCommand(*globalFlags) *cobra.Command {
	f := &fedavgFlags{}
	cmd := &cobra.Command{
		Use:   "dp-fedavg --clients K --per-round L --rounds R (--noise-multiplier Z | --epsilon T) [--delta D] [--sampling poisson|fixed] [--relation add-remove|replace-one] [--accountant pld|rdp]",
		Short: "The client-level (ε, δ) of DP-FedAvg for K clients, L per round, R rounds and a noise multiplier, or the noise multiplier for a target ε",
		Long: "With --noise-multiplier, print the client-level ε of DP-FedAvg (McMahan et al. 2018)\n" +
			"at δ: each round samples clients at rate q = L/K (poisson: each independently;\n" +
			"fixed: L of the K without replacement), clips each update to C and adds N(0, z²C²)\n" +
			"to their sum, one step per round. The privacy loss distribution accountant (pld)\n" +
			"prints first, the Rényi accountant beside it where it has a bound; every line names\n" +
			"its accountant, relation and sampling. With --epsilon, print the smallest noise\n" +
			"multiplier that reaches that ε instead.",
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return privacyDPFedAvg(cmd.OutOrStdout(), cmd, f) },
	}
	cmd.Flags().IntVar(&f.clients, "clients", 0, "K, the clients (required)")
	cmd.Flags().IntVar(&f.perRound, "per-round", 0, "L, the clients drawn per round (expected number under poisson), at most K (required)")
	cmd.Flags().Int64Var(&f.rounds, "rounds", 0, "R, the rounds (required)")
	f.register(cmd, "poisson")
	return cmd
}

func privacyDPFedAvg(w io.Writer, cmd *cobra.Command, f *fedavgFlags) error {
	switch {
	case f.clients < 1:
		return usageError{fmt.Errorf("--clients: need K ≥ 1, got %d", f.clients)}
	case f.perRound < 1 || f.perRound > f.clients:
		return usageError{fmt.Errorf("--per-round: need 1 ≤ L ≤ K = %d, got %d", f.clients, f.perRound)}
	case f.rounds < 1 || f.rounds > maxSteps:
		return usageError{fmt.Errorf("--rounds: need 1 ≤ R ≤ 10¹⁸, got %d", f.rounds)}
	}
	a, err := f.parse(cmd)
	if err != nil {
		return err
	}
	q := float64(f.perRound) / float64(f.clients)
	fmt.Fprintf(w, "DP-FedAvg (client level): K = %d, L = %d (q = %.6g, %s sampling), %d rounds; neighbours: %s\n",
		f.clients, f.perRound, q, a.sampling, f.rounds, neighbours(a, "client"))
	return f.report(w, cmd, a, q, f.rounds)
}
