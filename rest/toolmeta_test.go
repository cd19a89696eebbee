package rest_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc/internal/testkit"
	"github.com/otcgo/otc/rest"
)

// A tool's title, hints and icons follow the members of the REST
// definition, in MCP's shapes; its _meta does not, and the planner view
// stays {name, description}.
func TestRESTDefinitionCarriesToolMetadata(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(rest.NewHandler(testkit.NewMetaRegistry(t), nil))
	t.Cleanup(srv.Close)
	get := func(path string) string {
		resp, err := http.Get(srv.URL + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, "body: %s", b)
		return string(b)
	}
	noInput := `{"type":"object","properties":{},"additionalProperties":false}`
	for _, tc := range []struct{ name, want string }{
		{"Payments_Refund", `{"schema_version":"0.1.0","name":"Payments_Refund","description":"Refunds an order.","version":"1.0.0",` +
			`"parameters":` + noInput + `,"tags":["Payments"],"source":"otc:Payments.Refund@1.0.0",` +
			`"title":"Refund an order","annotations":` + testkit.RefundAnnotations + `,"icons":` + testkit.RefundIcons + `}`},
		{"Calculator_Add", `{"schema_version":"0.1.0","name":"Calculator_Add","description":"Adds.","version":"1.0.0",` +
			`"parameters":` + noInput + `,"tags":["Calculator"],"source":"otc:Calculator.Add@1.0.0",` +
			`"title":"Add two numbers","annotations":{"readOnlyHint":true}}`},
		{"Util_Noop", `{"schema_version":"0.1.0","name":"Util_Noop","description":"Does nothing.","version":"1.0.0",` +
			`"parameters":` + noInput + `,"tags":["Util"],"source":"otc:Util.Noop@1.0.0"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := get("/tools/" + tc.name)
			assert.JSONEq(t, tc.want, got)
			assert.NotContains(t, got, "_meta")
		})
	}
	t.Run("planner_view", func(t *testing.T) {
		t.Parallel()
		var planner []map[string]json.RawMessage
		require.NoError(t, json.Unmarshal([]byte(get("/tools")), &planner))
		require.Len(t, planner, 3)
		for _, entry := range planner {
			assert.Len(t, entry, 2, "name and description only")
		}
	})
}
