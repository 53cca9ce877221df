package rundir

import (
	"encoding/json"
	"math"
	"testing"
)

// summary.json writes a number that is not finite (a diverged run) as null,
// which reads back as NaN; finite numbers read back exactly.
func TestNumberReadsBack(t *testing.T) {
	in := map[string]Number{"finite": 0.1, "zero": 0, "inf": Number(math.Inf(-1)), "nan": Number(math.NaN())}
	js, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]Number
	if err := json.Unmarshal(js, &out); err != nil {
		t.Fatal(err)
	}
	if out["finite"] != 0.1 || out["zero"] != 0 || !math.IsNaN(float64(out["inf"])) || !math.IsNaN(float64(out["nan"])) {
		t.Errorf("%s read back as %v", js, out)
	}
	var bad Number
	if err := json.Unmarshal([]byte(`"1"`), &bad); err == nil {
		t.Error("a string read as a number")
	}
}
