package rest_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/rest"
)

// TestTaskRequiredTool checks a tool that runs only as a task over the
// REST view and over OTC, which have no tasks: the call is answered with
// a tool error that says to use MCP with tasks, and the function does not
// run.
func TestTaskRequiredTool(t *testing.T) {
	t.Parallel()
	reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	var runs atomic.Int32
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Report.Build", Version: "1.0.0", Description: "Builds the monthly report.", Tasks: otc.TasksRequired},
		func(context.Context, struct{}) (string, error) {
			runs.Add(1)
			return "report", nil
		}))
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Report.Peek", Version: "1.0.0", Description: "Peeks at the report.", Tasks: otc.TasksOptional},
		func(context.Context, struct{}) (string, error) { return "peek", nil }))
	mux := http.NewServeMux()
	mux.Handle("/v1/", http.StripPrefix("/v1", rest.NewHandler(reg, nil)))
	mux.Handle("/otc/", http.StripPrefix("/otc", otc.NewHandler(reg, nil)))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	f := &restFixture{srv: srv, reg: reg}

	e := f.invoke(t, "Report_Build", restBody(t, map[string]any{}, nil)).failure(t, http.StatusInternalServerError, rest.CodeExecutionError)
	assert.Contains(t, e.Message, "Tool 'Report_Build' runs only as a task")
	assert.Contains(t, e.Message, "io.modelcontextprotocol/tasks")
	assert.False(t, e.Retryable, "calling again the same way cannot succeed")

	status, o, body := f.otcCall(t, "Report.Build", map[string]any{}, nil)
	require.Equal(t, http.StatusOK, status, "%s", body)
	require.NotNil(t, o.Result, "%s", body)
	require.NotNil(t, o.Result.Error, "%s", body)
	assert.False(t, o.Result.Success)
	assert.False(t, o.Result.Error.CanRetry)
	assert.Equal(t, e.Message, o.Result.Error.Message, "OTC and REST say the same")
	assert.Zero(t, runs.Load(), "the function did not run")

	res, _ := f.invoke(t, "Report_Peek", restBody(t, map[string]any{}, nil)).success(t)
	assert.JSONEq(t, `"peek"`, string(res), "a tool that may run as a task runs at once where there are none")
}
