package main

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc/internal/testkit"
)

// TestRedirectsKeepCredentials: in every mode (OTC, --mcp, --rest) and in
// otc check, a server that redirects to another loopback origin receives
// nothing from the second one: no API key, no bearer token, no call body
// with its secret. The command names the Location.
func TestRedirectsKeepCredentials(t *testing.T) {
	for _, status := range []int{http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		for _, viaLocalhost := range []bool{false, true} {
			trap := testkit.NewRedirectTrap(t, status, viaLocalhost, "")
			creds := []string{"--api-key", "k3y", "--bearer", "t0ken"}
			for _, args := range [][]string{
				{"tools", "URL"},
				{"call", "URL", "Signer.Sign", "message=hi", "--secret", "SIGNING_KEY=s3cret", "--user-id", "u"},
				{"tools", "--mcp", "URL/mcp"},
				{"call", "--mcp", "URL/mcp", "Signer_Sign", "message=hi"},
				{"tools", "--rest", "URL/v1"},
				{"call", "--rest", "URL/v1", "Signer_Sign", "message=hi"},
				{"check", "URL"},
			} {
				code, _, errOut := otcRun(t, trap.URL, "", nil, append(args, creds...)...)
				assert.NotEqual(t, exitOK, code, "%v", args)
				assert.Contains(t, errOut, trap.Other, "%v: the Location is named", args)
			}
			assert.Empty(t, trap.Visits(), "%d: nothing reaches the other origin", status)
		}
	}
}

// TestInspect_Redirects: the inspector's proxy follows the same rule, for
// listings and calls of each kind of target.
func TestInspect_Redirects(t *testing.T) {
	trap := testkit.NewRedirectTrap(t, http.StatusTemporaryRedirect, true, "")
	a := newInspectAPI(t, startInspect(t, nil, trap.URL, "--mcp", trap.URL+"/mcp", "--rest", trap.URL+"/v1", "--api-key", "k3y", "--bearer", "t0ken"))
	for _, kind := range []string{"otc", "mcp", "rest"} {
		resp, body := a.do(t, http.MethodGet, "/api/tools?server="+kind, "", nil)
		assert.Equal(t, http.StatusBadGateway, resp.StatusCode, body)
		assert.Contains(t, body, "redirected", kind)
		_, res := a.callEvents(t, `{"server":"`+kind+`","tool":"Signer_Sign","input":{"message":"hi"}}`)
		require.False(t, res.OK, kind)
		b, _ := json.Marshal(res.Error)
		assert.Contains(t, string(b), trap.Other, "%s: the Location is named", kind)
	}
	assert.Empty(t, trap.Visits(), "nothing reaches the other origin")
}
