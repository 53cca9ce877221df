package fedavg

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"maple/actors"
	"maple/algorithms/data"
	"maple/algorithms/fedavg"
	"maple/algorithms/fedavg/reference"
	"maple/algorithms/rng"
	"maple/algorithms/systems"
	"maple/internal/params"
)

// randomValues draws every parameter of a behaviour in its declared range.
func randomValues(spec params.Spec, r *rand.Rand) params.Values {
	v := params.Values{}
	for _, p := range spec.Params {
		v[p.Name] = p.Random(r)
	}
	return v
}

// TestEveryRegisteredBehaviourRunsAlikeOnBothEngines enumerates the five
// slots' registries, so that a behaviour added to any of them is covered
// without a line changed here: each, with parameters drawn anywhere in their
// declared ranges, under model and update sharing with noise, runs on the
// actor engine and on the reference engine (the flat Reference, or Simulate
// when rounds can close early, the server is asynchronous or there are
// adversaries) to the same iterates bit for bit — or both refuse the
// parameters with the same error. A compressor runs under the mean, under
// the majority vote (signSGD's server) and under the mean with rounds that
// close after the first replies (on Simulate). An actor-only server is not in the
// reference's list. A behaviour whose every draw is refused fails the test,
// which would otherwise prove nothing about it.
//
// Each behaviour draws from a stream of its own, so that registering one
// changes no other's draws. Under this systems model a reply takes at
// least 0.1 s to come back, and an asynchronous server whose timeout is
// shorter gives up on nearly every task: the run crawls (a timeout of
// 0.057 s takes 45 s here) or, below the latency, stops after
// AsyncServer.DryLimit tasks in a row without an update
// (TestAsyncTimeoutShorterThanTheRoundTripStops). The seed is one whose
// draws of fedasync's and fedbuff's timeouts are all above 0.4 s, so that
// the test compares runs that progress.
func TestEveryRegisteredBehaviourRunsAlikeOnBothEngines(t *testing.T) {
	m := &systems.Model{Latency: 0.05, Compute: systems.Compute{Kind: systems.LogNormal, Median: 0.3, Sigma: 0.8}}
	for _, slot := range []string{ServerSlot, ClientSlot, CollectSlot, AdversarySlot, CompressSlot} {
		for _, name := range params.Names(slot) {
			t.Run(slot+"/"+name, func(t *testing.T) {
				if s, ok := LookupServer(name); slot == ServerSlot && ok && s.ActorOnly {
					if slices.Contains(ReferenceServers(), name) {
						t.Errorf("actor-only server %s is among the reference's", name)
					}
					return
				}
				spec, _ := params.Lookup(slot, name)
				r := rng.New(4, slot, name)
				ran := 0
				for draw := range 6 {
					v := randomValues(spec, r)
					cfg := baseConfig()
					cfg.Participants = 9
					cfg.NoiseStd = 0.05
					if draw%2 == 1 {
						cfg.Share = fedavg.Updates
					}
					server, serverParams := "mean", params.Values(nil)
					var err error
					switch slot {
					case ServerSlot:
						server, serverParams = name, v
						if need := servers[name].Client; need != "" {
							_, err = ConfigureClient(&cfg, need, nil)
						}
					case ClientSlot:
						_, err = ConfigureClient(&cfg, name, v)
					case CollectSlot:
						cfg.Collect, err = Collects.New(name, v)
					case AdversarySlot:
						cfg.Adversary, err = Adversaries.New(name, v)
					case CompressSlot:
						cfg.Compress, err = Compressors.New(name, v)
						switch draw / 2 {
						case 1:
							server = "majority"
						case 2:
							cfg.Collect = fedavg.FirstK{K: 6}
						}
					}
					if err != nil {
						t.Fatal(err)
					}
					what := fmt.Sprintf("%s %v, %v", name, v, cfg.Share)
					actor, aerr := engineRun(t, cfg, m, server, serverParams, false)
					ref, rerr := engineRun(t, cfg, m, server, serverParams, true)
					switch {
					case aerr != nil || rerr != nil:
						if aerr == nil || rerr == nil || aerr.Error() != rerr.Error() {
							t.Fatalf("%s: the engines end differently:\nactors:    %v\nreference: %v", what, aerr, rerr)
						}
						continue
					case len(actor) != len(ref):
						t.Fatalf("%s: %d models on the actor engine, %d on the reference", what, len(actor), len(ref))
					}
					for i := range ref {
						if !slices.Equal(actor[i], ref[i]) {
							t.Fatalf("%s: update %d: actors %v, reference %v", what, i+1, actor[i], ref[i])
						}
					}
					ran++
				}
				if ran == 0 {
					t.Errorf("every draw of %s's parameters was refused: nothing compared", name)
				}
			})
		}
	}
}

// engineRun runs 12 updates of cfg with the server behaviour server on the
// actor engine or on the reference, and returns the models. A scenario that
// the configuration's validation refuses returns that error; so does a run
// that stalls (the reference with the actor run's words).
func engineRun(t *testing.T, cfg fedavg.Config, m *systems.Model, server string, p params.Values, onReference bool) ([][]float64, error) {
	t.Helper()
	const rounds, seed = 12, 8
	sets, l := regression(t, cfg.Agents)
	w0 := make([]float64, 3)
	probe := cfg
	if _, err := ConfigureServer(&probe, server, p); err != nil {
		t.Fatal(err)
	}
	if err := probe.Validate(); err != nil {
		return nil, err
	}
	if !probe.Eventful() {
		m = nil // the plain model, on which the flat reference runs
	}
	if onReference {
		var models [][]float64
		if m == nil {
			err := reference.Reference(probe, data.Sets(sets), l, w0, seed, rounds, func(_ int, w []float64) { models = append(models, slices.Clone(w)) })
			return models, err
		}
		rec := &record{}
		err := reference.Simulate(probe, data.Sets(sets), l, w0, seed, rounds, reference.SimOptions{Model: m, Observe: rec.observe})
		return rec.models, err
	}
	if m == nil {
		return runActors(t, Setup{Config: &cfg, Data: data.Sets(sets), Loss: l, W0: w0, Rounds: rounds, Server: server, ServerParams: p}, seed), nil
	}
	rec, err := systemsRunWith(t, cfg, m, server, p, rounds, seed)
	return rec.models, err
}

// The reference engine refuses exactly the servers declared actor-only, and
// a server registered with its own behaviour must say how the reference
// runs it or declare itself actor-only: RegisterServer refuses the rest.
func TestActorOnlyServersAreDeclared(t *testing.T) {
	for _, name := range ServerNames() {
		s, _ := LookupServer(name)
		if got := slices.Contains(ReferenceServers(), name); got == s.ActorOnly {
			t.Errorf("server %s: actor-only %v, among the reference's %v", name, s.ActorOnly, got)
		}
	}
	for what, s := range map[string]Server{
		"no rule":                  {Name: "test-no-rule", Params: struct{}{}},
		"behaviour, no configurer": {Name: "test-behaviour", Params: struct{}{}, Behaviour: func(ServerParts) actors.Behaviour { return nil }},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: RegisterServer accepted it", what)
				}
			}()
			RegisterServer(s)
		}()
	}
}
