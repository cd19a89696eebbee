package otc_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/auth"
	"github.com/otcgo/otc/rest"
	"github.com/otcgo/otc/search" // GET /tools?q= answers with it
)

// TestSearchOverREST: GET /v1/tools?q=…&limit=… of the REST view, over
// HTTP: the planner view's entries of the tools found, best first; a bad
// query or limit refused naming it.
func TestSearchOverREST(t *testing.T) {
	t.Parallel()
	reg := otc.NewRegistry(nil)
	for id, desc := range map[string]string{
		"GitHub.create_pull_request": "Create a new pull request in a GitHub repository.",
		"GitHub.list_issues":         "List issues in a GitHub repository.",
		"Files.read_file":            "Read the complete contents of a file.",
	} {
		require.NoError(t, otc.Register(reg, otc.Tool{ID: id, Version: "1.0.0", Description: desc},
			func(context.Context, struct{}) (string, error) { return "", nil }))
	}
	srv := httptest.NewServer(http.StripPrefix("/v1", rest.NewHandler(reg, &rest.Options{Search: search.Query})))
	t.Cleanup(srv.Close)
	get := func(query string) (int, []byte) {
		resp, err := http.Get(srv.URL + "/v1/tools" + query)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, b
	}
	status, b := get("?q=" + url.QueryEscape("open a pull request") + "&limit=2")
	require.Equal(t, http.StatusOK, status, "%s", b)
	var entries []struct{ Name, Description string }
	require.NoError(t, json.Unmarshal(b, &entries))
	require.Len(t, entries, 2)
	assert.Equal(t, "GitHub_create_pull_request", entries[0].Name)
	assert.NotEmpty(t, entries[0].Description)

	status, b = get("")
	require.Equal(t, http.StatusOK, status)
	require.NoError(t, json.Unmarshal(b, &entries))
	assert.Len(t, entries, 3, "without q, the planner view")

	for _, bad := range []string{"?q=file&limit=0", "?q=file&limit=x", "?q=%ff"} {
		status, b = get(bad)
		assert.Equal(t, http.StatusBadRequest, status, bad)
		assert.Contains(t, string(b), "parameter_errors", bad)
	}
}

// TestSearchFlood: one caller's searches over OTC and the REST view are
// bounded (search.CallerBurst at once, then search.CallerRate a second):
// the next is a 429 with Retry-After; another caller (another key) still
// searches; listing without q is not a search.
func TestSearchFlood(t *testing.T) {
	t.Parallel()
	reg := otc.NewRegistry(nil)
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Files.read_file", Version: "1.0.0", Description: "Read a file."},
		func(context.Context, struct{}) (string, error) { return "", nil }))
	keys, err := auth.NewAPIKeyAuth(map[string]string{"ann": "key-ann", "bob": "key-bob"})
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.Handle("/otc/", http.StripPrefix("/otc", otc.NewHandler(reg, &otc.HandlerOptions{Authenticator: keys, Search: search.Query})))
	mux.Handle("/v1/", http.StripPrefix("/v1", rest.NewHandler(reg, &rest.Options{Authenticator: keys, Search: search.Query})))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	get := func(path, key string) *http.Response {
		req, err := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		require.NoError(t, err)
		req.Header.Set(otc.HeaderAPIKey, key)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	// One registry, one budget per caller, whichever format it searches:
	// searched until refused, at least the burst first, however slow the
	// machine (the budget refills at the rate meanwhile).
	n := 0
	for _, path := range []string{"/otc/tools?q=file", "/v1/tools?q=file"} {
		var resp *http.Response
		for range 5 * search.CallerBurst {
			if resp = get(path, "key-ann"); resp.StatusCode != http.StatusOK {
				break
			}
			n++
		}
		assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode, path)
		assert.Equal(t, "1", resp.Header.Get("Retry-After"), path)
	}
	assert.GreaterOrEqual(t, n, search.CallerBurst)
	assert.Equal(t, http.StatusOK, get("/otc/tools", "key-ann").StatusCode, "a listing is not a search")
	assert.Equal(t, http.StatusOK, get("/otc/tools?q=file", "key-bob").StatusCode, "another caller")
}
