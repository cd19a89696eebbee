package client_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc/client"
)

// TestSearchToolsOfServersThatDoNotSearch: an OTC server that answers a
// search with its whole catalog (it ignores q, as the protocol lets it)
// or with 400 (otc's without the search linked in) does not search:
// ErrNoSearch, not a ranking that is none.
func TestSearchToolsOfServersThatDoNotSearch(t *testing.T) {
	t.Parallel()
	const catalog = `{"tools":[` +
		`{"id":"A.one@1.0.0","name":"A_one","description":"One.","version":"1.0.0","input_schema":{"parameters":{"type":"object"}}},` +
		`{"id":"A.two@1.0.0","name":"A_two","description":"Two.","version":"1.0.0","input_schema":{"parameters":{"type":"object"}}},` +
		`{"id":"A.three@1.0.0","name":"A_three","description":"Three.","version":"1.0.0","input_schema":{"parameters":{"type":"object"}}}]}`
	lister := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(catalog))
	}))
	t.Cleanup(lister.Close)
	c, err := client.New(lister.URL, nil)
	require.NoError(t, err)
	ctx := context.Background()
	_, err = c.SearchTools(ctx, "one", 2)
	assert.ErrorIs(t, err, client.ErrNoSearch)
	found, err := c.SearchTools(ctx, "one", 3)
	require.NoError(t, err, "no more than asked for: taken as found")
	assert.Len(t, found, 3)

	refuser := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"error":{"code":"INVALID_REQUEST","message":"This server does not search its tools; list them without q"}}`))
	}))
	t.Cleanup(refuser.Close)
	c, err = client.New(refuser.URL, nil)
	require.NoError(t, err)
	_, err = c.SearchTools(ctx, "one", 2)
	assert.ErrorIs(t, err, client.ErrNoSearch)
	assert.Contains(t, err.Error(), "does not search its tools")
}
