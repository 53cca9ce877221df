package enum

import "testing"

type colour int

var colours = Of[colour]("colour", "red", "green", "blue")

func TestNames(t *testing.T) {
	for v, want := range []string{"red", "green", "blue"} {
		if got := colours.String(colour(v)); got != want {
			t.Errorf("String(%d) = %q, want %q", v, got, want)
		}
		if got, err := colours.Parse(want); err != nil || got != colour(v) {
			t.Errorf("Parse(%q) = %v, %v", want, got, err)
		}
	}
	if got := colours.String(7); got != "colour(7)" {
		t.Errorf("String(7) = %q", got)
	}
	_, err := colours.Parse("mauve")
	if err == nil || err.Error() != `unknown colour "mauve" (expected red, green or blue)` {
		t.Errorf("Parse(mauve) error: %v", err)
	}
	two := Of[colour]("side", "left", "right")
	if _, err := two.Parse("up"); err == nil || err.Error() != `unknown side "up" (expected left or right)` {
		t.Errorf("two-name error: %v", err)
	}
}
