package rundir

import (
	"encoding/json"
	"math"
	"testing"
)

// A summary whose details hold an infinite ε, or a NaN of a diverged run,
// anywhere a family puts numbers, encodes: each as null.
func TestFiniteDetailsEncode(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	d := map[string]any{
		"eps": inf, "by_round": []float64{1, inf}, "rows": [][]float64{{nan}, {2}},
		"nested": map[string]any{"x": []any{inf, "s", 3.0}}, "list": []map[string]any{{"y": nan}},
		"named": map[string]float64{"z": math.Inf(-1)}, "fine": []float64{1, 2}, "text": "ok",
	}
	if _, err := json.Marshal(d); err == nil {
		t.Fatal("the test's details encode without Finite: it tests nothing")
	}
	b, err := json.Marshal(Finite(d))
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"by_round":[1,null],"eps":null,"fine":[1,2],"list":[{"y":null}],"named":{"z":null},"nested":{"x":[null,"s",3]},"rows":[[null],[2]],"text":"ok"}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
}
