package otc_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
)

type removeIn struct {
	N int `json:"n" jsonschema:"description=A number."`
}

func registerRemoveTool(t *testing.T, reg *otc.Registry, id, version string, add int) {
	t.Helper()
	require.NoError(t, otc.Register(reg, otc.Tool{ID: id, Version: version, Description: "Adds to n."},
		func(_ context.Context, in removeIn) (int, error) { return in.N + add, nil }))
}

// TestRegistryRemove takes a tool with two versions out of a registry
// served over HTTP: the catalog, lookups and calls no longer know it, the
// other tools are untouched, and it may be registered again.
func TestRegistryRemove(t *testing.T) {
	reg := otc.NewRegistry(nil)
	registerRemoveTool(t, reg, "Gone.Tool", "1.0.0", 1)
	registerRemoveTool(t, reg, "Gone.Tool", "2.0.0", 2)
	registerRemoveTool(t, reg, "Kept.Tool", "1.0.0", 3)
	srv := httptest.NewServer(otc.NewHandler(reg, nil))
	defer srv.Close()

	call := func(id string) (int, string) {
		body := `{"$schema":"otc://1.0","request":{"tool_id":"` + id + `","call_id":"c1","input":{"n":1}}}`
		resp, err := http.Post(srv.URL+"/tools/call", "application/json", strings.NewReader(body))
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(b)
	}
	status, _ := call("Gone.Tool")
	require.Equal(t, http.StatusOK, status)

	rev := reg.Revision()
	assert.Equal(t, 0, reg.Remove("Nobody.Here"), "an unknown id removes nothing")
	assert.Equal(t, rev, reg.Revision(), "nothing removed, the revision stays")

	assert.Equal(t, 2, reg.Remove("Gone.Tool", "Nobody.Here"), "both versions go")
	assert.Greater(t, reg.Revision(), rev)
	defs := reg.Tools()
	require.Len(t, defs, 1)
	assert.Equal(t, "Kept.Tool@1.0.0", defs[0].ID)

	_, err := reg.Lookup("Gone.Tool", otc.ProtocolOTC)
	assert.ErrorIs(t, err, otc.ErrToolNotFound)
	_, err = reg.LookupName("Gone_Tool", otc.ProtocolOTC)
	assert.ErrorIs(t, err, otc.ErrToolNotFound)

	status, body := call("Gone.Tool")
	assert.Equal(t, http.StatusBadRequest, status, body)
	assert.Contains(t, body, "Gone.Tool is not registered")
	status, body = call("Kept.Tool")
	assert.Equal(t, http.StatusOK, status, body)

	resp, err := http.Get(srv.URL + "/tools")
	require.NoError(t, err)
	var listed struct {
		Tools []struct {
			ID string `json:"id"`
		} `json:"tools"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&listed))
	resp.Body.Close()
	require.Len(t, listed.Tools, 1, "the served catalog was rebuilt")
	assert.Equal(t, "Kept.Tool@1.0.0", listed.Tools[0].ID)

	// The name is free again, with another schema and function.
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Gone.Tool", Version: "3.0.0", Description: "Says hello."},
		func(_ context.Context, _ otc.NoOutput) (string, error) { return "hello", nil }))
	status, body = call("Gone.Tool")
	assert.Equal(t, http.StatusUnprocessableEntity, status, "the new schema has no n: %s", body)
	assert.Contains(t, body, `"n":"Is not an accepted parameter"`)
}
