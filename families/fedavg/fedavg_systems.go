package fedavg

import (
	"context"
	"strings"

	afedavg "maple/actors/fedavg"
	"maple/algorithms/fedavg"
	"maple/families/internal/clients"
	"maple/internal/params"
	"maple/scenarios"
	"maple/scenarios/inputs"
)

// This file wires FedAvg's behaviour slots — server, client, collection
// policy, adversaries, each a registry of actors/fedavg — and the systems
// model (docs/systems.md) to the scenario: what the slots' choices make of
// the configuration, and their checks.

// checkFedAvg builds the configuration and, when the scenario uses the
// systems model, reads its files, so that problems are found before running.
func checkFedAvg(c *scenarios.CurveSpec, dir string) error {
	if _, err := fedavgConfig(c); err != nil {
		return err
	}
	if fedavgUsesSystems(c.Scenario) {
		_, err := inputs.SystemsModel(context.Background(), c, dir)
		return err
	}
	return nil
}

// The scenario fields of the slots.
const (
	fieldServer    = "algorithm.fedavg.server"
	fieldClient    = "algorithm.fedavg.client"
	fieldCollect   = "algorithm.fedavg.collect"
	fieldAdversary = "algorithm.fedavg.adversary"
)

// applyBehaviours writes into cfg what both engines run of the section's
// behaviours, from their registries: the server's combination rule or
// asynchronous mode, the collection policy, the adversaries and the
// compression of the replies (the client is the shared clients.Config's).
// It returns the field of an unknown behaviour and the error.
func applyBehaviours(cfg *fedavg.Config, fa *FedAvg) (string, error) {
	var err error
	if _, err = afedavg.ConfigureServer(cfg, fa.Server.Kind, fa.Server.Params); err != nil {
		return fieldServer, err
	}
	if cfg.Collect, err = afedavg.Collects.New(fa.Collect.Kind, fa.Collect.Params); err != nil {
		return fieldCollect, err
	}
	if cfg.Adversary, err = afedavg.Adversaries.New(fa.Adversary.Kind, fa.Adversary.Params); err != nil {
		return fieldAdversary, err
	}
	if cfg.Compress, err = afedavg.Compressors.New(fa.Compress.Kind, fa.Compress.Params); err != nil {
		return fieldCompress, err
	}
	return "", nil
}

// checkBehaviours runs the checks each chosen behaviour makes of the rest
// of the configuration and reports each failure at its field.
func checkBehaviours(cfg *fedavg.Config, fa *FedAvg, fail func(field, msg string)) {
	if err := afedavg.CheckPair(fa.Server.Kind, fa.Client.Kind); err != nil {
		fail(fieldClient, err.Error())
	}
	server, _ := params.Lookup(afedavg.ServerSlot, fa.Server.Kind)
	clients.Check(cfg, []clients.Slot{
		{Field: fieldServer, Value: server.New(fa.Server.Params)},
		{Field: fieldClient, Value: cfg.ClientBehaviour()},
		{Field: fieldCollect, Value: cfg.Collect},
		{Field: fieldAdversary, Value: cfg.Adversary},
		{Field: fieldCompress, Value: cfg.Compress},
	}, fail)
}

// draftConfig returns the configuration a valid scenario's section makes,
// for the loader's checks: the numbers of agents and draws and what the
// behaviours set. Fields the loader refuses keep their zero values.
func draftConfig(sc *scenarios.Scenario) *fedavg.Config {
	fa := fedavgParams(sc)
	cfg := &fedavg.Config{Agents: sc.Data.Agents, Participants: fa.Participants, StepSize: sc.Algorithm.StepSize,
		Normalized: fa.Normalized,
		Epochs:     fedavg.Range{Min: fa.LocalSteps.Min, Max: fa.LocalSteps.Max},
		Batch:      fedavg.Range{Min: fa.Batch.Min, Max: fa.Batch.Max}}
	_, _ = afedavg.ConfigureClient(cfg, fa.Client.Kind, fa.Client.Params) // the loader has checked the name
	cfg.Participation, _ = fedavg.ParseParticipation(fa.Participation)
	cfg.Schedule, _ = fedavg.ParseSchedule(fa.Schedule)
	applyBehaviours(cfg, fa) // the loader has checked the names
	return cfg
}

// fedavgUsesSystems reports whether a FedAvg scenario needs the systems
// model: a systems field, or behaviours that make the run eventful (a
// collection policy that closes rounds early, an asynchronous server,
// adversaries). Otherwise runs are exactly those of plain FedAvg (and the
// reference engine runs the flat Reference).
func fedavgUsesSystems(sc *scenarios.Scenario) bool {
	return scenarios.UsesSystems(sc) || draftConfig(sc).Eventful()
}

// fedavgFaulty reports whether replies can go missing or arrive late, so
// that the metrics count them per round.
func fedavgFaulty(sc *scenarios.Scenario) bool {
	n := &sc.Network
	cfg := draftConfig(sc)
	faulty := n.Loss > 0 || n.Duplicate > 0 || n.Dropout > 0 || n.Availability != "" || n.Crashes != nil ||
		cfg.Collection().Early() || cfg.Async.Mode != fedavg.Sync
	for _, c := range n.Classes {
		faulty = faulty || c.Dropout != nil && *c.Dropout > 0
	}
	return faulty
}

// validateFedAvgSystems checks how the server, collection policy and
// adversaries combine with participation and importance sampling.
func validateFedAvgSystems(v *scenarios.Validator, sc *scenarios.Scenario, fa *FedAvg, draft *fedavg.Config) {
	async := draft.Async.Mode != fedavg.Sync
	early := draft.Collection().Early()
	if async {
		v.Absent(fieldCollect, early, "server "+fa.Server.Kind+" is asynchronous: it has no rounds to close")
		if fa.Participation != fedavg.WithoutReplacement.String() {
			v.Fail("algorithm.fedavg.participation", "server %s keeps algorithm.fedavg.participants distinct clients busy: participation must be without-replacement", fa.Server.Kind)
		}
	}
	uniform := fa.Importance.Agents == "uniform" && fa.Importance.Data == "uniform"
	if !uniform && fedavgUsesSystems(sc) {
		why := "importance sampling assumes every sampled reply arrives, on time and honest (its estimator weights 1/(K p_k)); the systems model is not combined with it"
		switch {
		case async:
			v.Fail(fieldServer, "%s", why)
		case early:
			v.Fail(fieldCollect, "%s", why)
		case draft.Adversarial():
			v.Fail(fieldAdversary, "%s", why)
		default:
			v.Fail("algorithm.fedavg.importance", "%s (the scenario sets network fields of the systems model)", why)
		}
	}
}

// fedavgReferenceServer refuses a server behaviour the reference engine
// does not run: one registered as actor-only.
func fedavgReferenceServer(c *scenarios.CurveSpec) error {
	kind := fedavgParams(c.Scenario).Server.Kind
	if s, ok := afedavg.LookupServer(kind); !ok || !s.ActorOnly {
		return nil
	}
	return c.Errorf(fieldServer, "server behaviour %q exists only in the actor engine; the reference engine applies %s: run it with --engine actors",
		kind, strings.Join(afedavg.ReferenceServers(), ", "))
}
