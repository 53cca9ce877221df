package fedavg

import (
	"os"
	"testing"

	"maple/scenarios"
	"maple/scenarios/run"
)

// BenchmarkLRMNIST runs the bundled LR-MNIST scenario (FLUTE's shape on
// Fashion-MNIST) on each engine; it is skipped without the Debian package
// dataset-fashion-mnist. One iteration is one whole run of 100 rounds,
// data loading and test evaluation included.
func BenchmarkLRMNIST(b *testing.B) {
	if _, err := os.Stat("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"); err != nil {
		b.Skip("dataset-fashion-mnist is not installed")
	}
	p, err := scenarios.LoadFile("../../scenarios/benchmarks/lr-mnist.yaml", []string{"output.plot=false"})
	if err != nil {
		b.Fatal(err)
	}
	for _, engine := range []run.Engine{run.Actors, run.Reference} {
		b.Run(string(engine), func(b *testing.B) {
			for b.Loop() {
				if _, err := run.Execute(p, b.TempDir(), run.Options{Engine: engine}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
