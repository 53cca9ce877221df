package rundir

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"maple/internal/fileio"
	"maple/internal/fileio/fileiotest"
)

// A run directory whose files are not what maple wrote — linked to
// /dev/zero, which never ends, or replaced by a named pipe, which blocks its
// reader — is refused by name without being read (main read /dev/zero until
// memory ran out, and waited on the pipe).
func TestReadRefusesSpecialFiles(t *testing.T) {
	files := map[string]string{
		ScenarioFile:   "name: x\n",
		SummaryFile:    `{"scenario": "x", "version": "0", "engine": "actors", "seed": 1, "curves": []}`,
		MetricsFile:    "curve,iteration,msd\nx,0,1\n",
		ProvenanceFile: "{}",
	}
	for _, special := range []string{ScenarioFile, SummaryFile, MetricsFile, ProvenanceFile} {
		for _, kind := range []string{"/dev/zero", "pipe"} {
			dir := t.TempDir()
			for name, content := range files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			path := filepath.Join(dir, special)
			os.Remove(path)
			target := "/dev/zero"
			if kind == "pipe" {
				target = fileiotest.FIFO(t, "pipe", files[special])
			}
			if err := os.Symlink(target, path); err != nil {
				t.Fatal(err)
			}
			_, err := Read(dir)
			if !errors.Is(err, fileio.ErrNotRegular) || !strings.Contains(err.Error(), special) {
				t.Errorf("%s linked to %s: %v; want a refusal naming it", special, kind, err)
			}
		}
	}
}
