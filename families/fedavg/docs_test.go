package fedavg

import (
	"testing"

	"maple/internal/doctest"
)

// docPage is the page whose examples the tests build.
const docPage = "../../docs/writing-behaviours.md"

// The page's whole files are the files, and its excerpts are in them, to
// the byte: the page cannot drift from the code.
func TestDocExamplesAreTheCode(t *testing.T) {
	t.Parallel()
	whole, parts := doctest.Blocks(t, docPage, nil)
	if len(whole) < 2 || len(parts) < 2 {
		t.Fatalf("the page shows %d whole files and excerpts of %d: it should show a server and a client with their tests", len(whole), len(parts))
	}
	doctest.CheckAgainstTree(t, "../..", whole, parts)
}

// TestDocExamplesBuildFromTheDoc builds the page's whole files from its
// text as new files — the tree's copies deleted, the page's added under new
// names (go test -overlay) — and runs on them the tests that enumerate the
// registries on both engines, in Go and from scenario files, with the
// behaviours' own tests, the loader's and graph FL's test of per-server
// state: servers stateless and stateful (Krum, FedAvgM), a client (FedProx)
// and a server and client that change the protocol (SCAFFOLD), each added
// in one new file with no other file changed, run from YAML on both engines
// with byte-identical outputs. It compiles and runs test binaries of four
// packages, so -short skips it.
func TestDocExamplesBuildFromTheDoc(t *testing.T) {
	t.Parallel()
	whole, _ := doctest.Blocks(t, docPage, nil)
	out := doctest.RunOverlay(t, "../..", whole,
		"-run", "^(TestEveryRegisteredBehaviourRunsAlikeOnBothEngines|TestActorOnlyServersAreDeclared|TestKrum.*|TestFedProx.*|TestFedAvgM.*|TestScaffold.*|TestEveryBehaviourFromYAMLIsTheSameOnBothEngines|TestBadScenariosGiveOneClearLine|TestBundledScenariosAreValid|TestGraphFLServersKeepTheirOwnState)$",
		"maple/actors/fedavg", "maple/families/fedavg", "maple/scenarios", "maple/actors/graphfl")
	t.Logf("%s", out)
}
