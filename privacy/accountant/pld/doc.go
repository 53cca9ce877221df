// Package pld accounts for differential privacy with privacy loss
// distributions: the tightest (ε, δ) known for compositions of the
// Gaussian, Laplace and randomized-response mechanisms, each possibly
// subsampled by Poisson or fixed-size sampling, under the add-remove or
// replace-one neighbouring relation (see Mechanism for the pairs).
//
// A round's dominating pair is discretized by connect-the-dots (Doroshenko,
// Ghazi, Kamath, Kumar & Manurangsi 2022) on the loss grid iΔ (Δ =
// DefaultInterval unless Options say otherwise), which keeps an upper bound
// at every ε; rounds compose by powers of their Fourier transforms with a
// Chernoff window, the mass outside it going to infinite loss and so into
// δ. Add-remove is accounted in both directions, each composed on its own,
// and δ is the larger. The results match Google's dp_accounting (and so
// TensorFlow Privacy's compute_dp_sgd_privacy) to the digits they print.
//
// An Accountant composes rounds one at a time, of one mechanism or several,
// and answers ε(δ) and δ(ε) after any of them; NoiseMultiplier solves for
// the noise of a target ε. Valid inputs never fail: where no finite bound
// exists ε is +Inf.
package pld
