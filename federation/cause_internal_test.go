package federation

import "testing"

// TestCauseOf: an upstream's last failure in a few words.
func TestCauseOf(t *testing.T) {
	for last, want := range map[string]string{
		`reaching it: otc client: health: GET http://127.0.0.1:1/health: dial tcp 127.0.0.1:1: connect: connection refused`: "it refused the connection",
		`reaching it: otc client: health: context deadline exceeded`:                                                        "it did not answer in time",
		`reaching it: exec: "nope": executable file not found in $PATH`:                                                     "its command was not found",
		`reaching it: otc client: the server process exited (exit status 3); its standard error ends: "boom: no config\n"`:  `its process exited; its standard error ends: "boom: no config\n"`,
		`reaching it: otc client: the server process exited`:                                                                "its process exited",
		`reaching it: dial tcp: lookup nowhere.invalid: no such host`:                                                       "its host name is not known",
		`reading its catalog: otc client: list tools: status 500: oops`:                                                     "oops",
	} {
		if got := causeOf(last); got != want {
			t.Errorf("causeOf(%q) = %q, want %q", last, got, want)
		}
	}
}
