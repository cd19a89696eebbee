package otc

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSearchWithoutTheOption: GET /tools?q= of a handler given no
// HandlerOptions.Search says so, and lists nothing; without q the catalog
// is listed as ever.
func TestSearchWithoutTheOption(t *testing.T) {
	t.Parallel()
	reg := NewRegistry(nil)
	require.NoError(t, Register(reg, Tool{ID: "Calculator.Add", Version: "1.0.0", Description: "Adds two numbers together."},
		func(context.Context, struct{}) (int, error) { return 0, nil }))
	h := NewHandler(reg, nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/tools?q=add", nil))
	assert.Equal(t, http.StatusBadRequest, rec.Code)
	assert.Contains(t, rec.Body.String(), "does not search its tools")
	assert.NotContains(t, rec.Body.String(), "Calculator_Add")
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/tools", nil))
	assert.Equal(t, http.StatusOK, rec.Code)
	assert.Contains(t, rec.Body.String(), "Calculator_Add")
}
