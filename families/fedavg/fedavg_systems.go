package fedavg

import (
	"context"
	"slices"
	"strings"

	afedavg "maple/actors/fedavg"
	"maple/algorithms/fedavg"
	"maple/scenarios"
	"maple/scenarios/run"
)

// This file wires FedAvg to the systems model (docs/systems.md): the
// collection policies, the asynchronous servers, the adversaries and the
// network section's faults.

// checkFedAvg builds the configuration and, when the scenario uses the
// systems model, reads its files, so that problems are found before running.
func checkFedAvg(c *scenarios.CurveSpec, dir string) error {
	if _, err := fedavgConfig(c); err != nil {
		return err
	}
	if fedavgUsesSystems(c.Scenario) {
		_, err := run.SystemsModel(context.Background(), c, dir)
		return err
	}
	return nil
}

// fedavgUsesSystems reports whether a FedAvg scenario needs the systems
// model: a systems field, a collection policy other than all, an
// asynchronous server or adversaries. Otherwise runs are exactly those of
// plain FedAvg (and the reference engine runs the flat Reference).
func fedavgUsesSystems(sc *scenarios.Scenario) bool {
	fa := fedavgParams(sc)
	return scenarios.UsesSystems(sc) || fa.Collect.Kind != "all" || fa.Adversary.Kind != "none" ||
		fa.Server.Kind == "fedasync" || fa.Server.Kind == "fedbuff"
}

// fedavgFaulty reports whether replies can go missing or arrive late, so
// that the metrics count them per round.
func fedavgFaulty(sc *scenarios.Scenario) bool {
	n := &sc.Network
	fa := fedavgParams(sc)
	faulty := n.Loss > 0 || n.Duplicate > 0 || n.Dropout > 0 || n.Availability != "" || n.Crashes != nil ||
		fa.Collect.Kind != "all" || fa.Server.Kind == "fedasync" || fa.Server.Kind == "fedbuff"
	for _, c := range n.Classes {
		faulty = faulty || c.Dropout != nil && *c.Dropout > 0
	}
	return faulty
}

// validateFedAvgSystems checks the server, collection policy and
// adversaries and how they combine with participation and importance
// sampling.
func validateFedAvgSystems(v *scenarios.Validator, sc *scenarios.Scenario, fa *FedAvg) {
	async := fa.Server.Kind == "fedasync" || fa.Server.Kind == "fedbuff"
	draws := fa.Participants
	if fa.Participation == fedavg.Full.String() {
		draws = sc.Data.Agents
	}
	if async {
		v.Absent("algorithm.fedavg.collect", fa.Collect.Kind != "all", "server "+fa.Server.Kind+" is asynchronous: it has no rounds to close")
		if fa.Participation != fedavg.WithoutReplacement.String() {
			v.Fail("algorithm.fedavg.participation", "server %s keeps algorithm.fedavg.participants distinct clients busy: participation must be without-replacement", fa.Server.Kind)
		}
		if b := fa.Server.Params.Int("buffer"); fa.Server.Kind == "fedbuff" && b > fa.Participants {
			v.Fail("algorithm.fedavg.server.buffer", "a buffer of %d updates needs at least as many concurrent clients, but algorithm.fedavg.participants is %d", b, fa.Participants)
		}
	}
	if k := fa.Collect.Params.Int("k"); fa.Collect.Kind == "first-k" && k > draws {
		v.Fail("algorithm.fedavg.collect.k", "the first %d replies of a round of %d draws: over-selection samples more agents than it keeps (raise algorithm.fedavg.participants)", k, draws)
	}
	uniform := fa.Importance.Agents == "uniform" && fa.Importance.Data == "uniform"
	if !uniform && fedavgUsesSystems(sc) {
		why := "importance sampling assumes every sampled reply arrives, on time and honest (its estimator weights 1/(K p_k)); the systems model is not combined with it"
		switch {
		case async:
			v.Fail("algorithm.fedavg.server", "%s", why)
		case fa.Collect.Kind != "all":
			v.Fail("algorithm.fedavg.collect", "%s", why)
		case fa.Adversary.Kind != "none":
			v.Fail("algorithm.fedavg.adversary", "%s", why)
		default:
			v.Fail("algorithm.fedavg.importance", "%s (the scenario sets network fields of the systems model)", why)
		}
	}
}

// fedavgSystemsConfig fills the configuration's collection policy,
// asynchronous server and adversaries from the scenario's behaviours.
func fedavgSystemsConfig(c *scenarios.CurveSpec, cfg *fedavg.Config) error {
	fa := fedavgParams(c.Scenario)
	var err error
	if cfg.Collect, err = afedavg.CollectConfig(fa.Collect.Kind, fa.Collect.Params); err != nil {
		return c.Errorf("algorithm.fedavg.collect", "%v", err)
	}
	if cfg.Async, err = afedavg.AsyncConfig(fa.Server.Kind, fa.Server.Params); err != nil {
		return c.Errorf("algorithm.fedavg.server", "%v", err)
	}
	if cfg.Attack, err = afedavg.AttackConfig(fa.Adversary.Kind, fa.Adversary.Params); err != nil {
		return c.Errorf("algorithm.fedavg.adversary", "%v", err)
	}
	return nil
}

// fedavgReferenceServer refuses a server behaviour the reference engine
// does not apply: it runs the combination rules (mean, median, trimmed
// mean) and the asynchronous servers, not servers registered by users.
func fedavgReferenceServer(c *scenarios.CurveSpec) error {
	kind := fedavgParams(c.Scenario).Server.Kind
	if slices.Contains(referenceServers(), kind) {
		return nil
	}
	return c.Errorf("algorithm.fedavg.server", "server behaviour %q exists only in the actor engine; the reference engine applies %s: run it with --engine actors",
		kind, strings.Join(referenceServers(), ", "))
}
