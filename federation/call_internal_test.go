package federation

import "testing"

// TestParamTextOrdered: the parameter errors a model reads come in the
// parameters' order, the same text every time (a map's order would
// change it from one call to the next).
func TestParamTextOrdered(t *testing.T) {
	errs := map[string]string{"zeta": "required", "alpha": "must be a number", "mid": "too long", "beta": "unknown"}
	const want = "alpha: must be a number\nbeta: unknown\nmid: too long\nzeta: required"
	for range 20 {
		if got := paramText(errs); got != want {
			t.Fatalf("paramText = %q, want %q", got, want)
		}
	}
}
