package cluster

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"sync"

	"maple/cluster/wire"
	"maple/scenarios/run"
)

// thisBuild returns the build of the running program, computed once: its
// version, the source revision and toolchain Go stamped into it, its
// platform and the SHA-256 of its executable.
var thisBuild = sync.OnceValue(func() *wire.Build {
	b := &wire.Build{Version: run.Version, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				b.Revision = s.Value
			case "vcs.modified":
				b.Modified = s.Value == "true"
			}
		}
	}
	if exe, err := os.Executable(); err == nil {
		if f, err := os.Open(exe); err == nil {
			h := sha256.New()
			if _, err := io.Copy(h, f); err == nil {
				b.BinarySha256 = hex.EncodeToString(h.Sum(nil))
			}
			f.Close()
		}
	}
	return b
})

// compatible returns "" when a process of build b computes exactly what
// this one does, else why not. Floating-point results depend on the code,
// the toolchain (its math library) and the platform (arm64 fuses
// multiply-adds, amd64 does not), so all must match: by source revision
// when both builds know it and their trees were clean, else by the
// executable itself.
func compatible(mine, b *wire.Build) string {
	switch {
	case b == nil:
		return "it did not say which build it runs"
	case b.Version != mine.Version:
		return fmt.Sprintf("it runs maple %s, this process maple %s", b.Version, mine.Version)
	case b.GoVersion != mine.GoVersion || b.Platform != mine.Platform:
		return fmt.Sprintf("it was built with %s for %s, this process with %s for %s", b.GoVersion, b.Platform, mine.GoVersion, mine.Platform)
	case b.Revision != "" && mine.Revision != "" && !b.Modified && !mine.Modified:
		if b.Revision != mine.Revision {
			return fmt.Sprintf("it was built from commit %s, this process from commit %s", short(b.Revision), short(mine.Revision))
		}
		return ""
	case b.BinarySha256 != mine.BinarySha256:
		return fmt.Sprintf("its executable (SHA-256 %s) differs from this one's (%s), and %s", short(b.BinarySha256), short(mine.BinarySha256), describeRevision(mine, b))
	}
	return ""
}

// describeRevision says why the executables decide: the revision is
// unknown or a work tree was modified.
func describeRevision(mine, b *wire.Build) string {
	switch {
	case b.Revision == "" || mine.Revision == "":
		return "the source revision is not stamped into both (build from a git checkout, without -buildvcs=false)"
	case b.Modified || mine.Modified:
		return "one was built from a modified work tree"
	}
	return "the builds differ"
}

// short abbreviates a hash for messages.
func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	if h == "" {
		return "unknown"
	}
	return h
}
