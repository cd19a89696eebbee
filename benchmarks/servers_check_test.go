package benchmarks

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestServersAnswer checks that every server of the comparison answers the
// call correctly, in process and over loopback, before anything is timed.
func TestServersAnswer(t *testing.T) {
	for _, s := range servers(t) {
		t.Run(s.name, func(t *testing.T) {
			srv := httptest.NewServer(s.handler)
			defer srv.Close()
			for name, do := range map[string]doFunc{"in process": inProcess(s.handler), "loopback": overHTTP(srv.Client(), srv.URL)} {
				header := s.header
				if s.open != nil {
					session, err := s.open(do)
					require.NoError(t, err, name)
					header = merge(header, session)
				}
				for range 2 {
					status, _, body, err := do(s.path, header, s.body)
					require.NoError(t, err, name)
					require.Equal(t, http.StatusOK, status, "%s: %s", name, body)
					require.Regexp(t, s.want, string(body), name)
				}
			}
		})
	}
}
