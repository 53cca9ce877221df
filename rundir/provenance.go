package rundir

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"

	"maple/internal/fileio"
)

// Provenance records what produced a run directory: the program, its source
// revision and toolchain, and the command that ran it. maple run writes it;
// the report shows it.
type Provenance struct {
	// Version is maple's version.
	Version string `json:"maple_version"`
	// Revision, RevisionTime and Modified come from the version-control
	// information Go stamps into the binary (empty when built outside a
	// repository, for example by go test); Modified is set when the work
	// tree had uncommitted changes.
	Revision     string `json:"git_commit,omitempty"`
	RevisionTime string `json:"git_commit_time,omitempty"`
	Modified     bool   `json:"git_modified,omitempty"`
	// GoVersion is the toolchain that built the binary, and Platform its
	// GOOS/GOARCH.
	GoVersion string `json:"go_version"`
	Platform  string `json:"platform"`
	// Command is the command line.
	Command []string `json:"command"`
	// ScenarioSHA256 hashes the resolved scenario.yaml of the run.
	ScenarioSHA256 string `json:"scenario_sha256"`
}

// NewProvenance describes the running program for a run directory whose
// resolved scenario is scenario, run by the command line args.
func NewProvenance(version string, args []string, scenario []byte) *Provenance {
	sum := sha256.Sum256(scenario)
	p := &Provenance{Version: version, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH,
		Command: args, ScenarioSHA256: hex.EncodeToString(sum[:])}
	if info, ok := debug.ReadBuildInfo(); ok {
		p.GoVersion = info.GoVersion
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				p.Revision = s.Value
			case "vcs.time":
				p.RevisionTime = s.Value
			case "vcs.modified":
				p.Modified = s.Value == "true"
			}
		}
	}
	return p
}

// WriteProvenance writes the provenance of the run directory dir, whose
// scenario.yaml must exist.
func WriteProvenance(dir, version string, args []string) error {
	scenario, err := fileio.ReadFile(filepath.Join(dir, ScenarioFile), maxScenarioBytes)
	if err != nil {
		return err
	}
	js, err := json.MarshalIndent(NewProvenance(version, args, scenario), "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, ProvenanceFile), append(js, '\n'), 0o644)
}
