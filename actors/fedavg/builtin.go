package fedavg

import "maple/algorithms/fedavg"

// The built-in behaviours of the thesis and of the systems model, whose
// rules live in algorithms/fedavg. Krum (krum.go) and FedProx (fedprox.go)
// are registered in files of their own, as docs/writing-behaviours.md
// shows.
func init() {
	RegisterServer(Server{Name: "mean", Doc: "the mean of the replies (thesis eq. 1.31)", Params: fedavg.MeanRule{}})
	RegisterServer(Server{Name: "median", Doc: "the coordinate-wise median of the replies, robust to a minority of outlying agents", Params: fedavg.MedianRule{}})
	RegisterServer(Server{Name: "trimmed-mean", Doc: "the coordinate-wise mean of the replies after dropping the fraction trim of smallest and of largest values",
		Params: fedavg.TrimmedMeanRule{Trim: 0.1}})

	Clients.Register("sgd", "local SGD: E_k steps w ← w − μ_k ∇̂J_k(w) on fresh mini-batches of B_k samples (thesis eq. 1.30)", fedavg.SGD{})

	Collects.Register("all", "wait for every reply; a reply that never comes stops the run with an error naming the agents and the round", fedavg.WaitAll{})
	Collects.Register("deadline", "aggregate the replies that arrived by a deadline after the broadcast", fedavg.Deadline{Seconds: 1, Reweighted: true})
	Collects.Register("first-k", "aggregate the first k replies (sample more agents than that: over-selection)", fedavg.FirstK{K: 1, Reweighted: true})

	population := fedavg.Population{Fraction: 0.1}
	Adversaries.Register("none", "every agent is honest", fedavg.Honest{})
	Adversaries.Register("sign-flip", "adversaries send the opposite of their update, scaled: w0 − scale·(w − w0)", fedavg.SignFlip{Population: population, Scale: 1})
	Adversaries.Register("scaled", "adversaries send their update multiplied by scale: w0 + scale·(w − w0)", fedavg.Scaled{Population: population, Scale: 10})
	Adversaries.Register("gaussian", "adversaries add Gaussian noise to their reply", fedavg.GaussianNoise{Population: population, Std: 1})
	Adversaries.Register("label-flip", "adversaries train honestly on flipped labels (−y; class c → K−1−c)", fedavg.LabelFlip{Population: population})
	Adversaries.Register("free-rider", "adversaries return the model unchanged without training", fedavg.FreeRider{Population: population})
}
