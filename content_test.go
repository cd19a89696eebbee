package otc_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/auth"
	"github.com/otcgo/otc/rest"
)

// A tool that returns Content, and reports progress and logs, served over
// OTC and REST: the blocks travel as a JSON array, the reports go nowhere.
func newContentRegistry(t *testing.T) *otc.Registry {
	t.Helper()
	reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, otc.Register(reg, otc.Tool{
		ID:          "Chart.Draw",
		Version:     "1.0.0",
		Description: "Draws a chart.",
	}, func(ctx context.Context, _ struct{}) (otc.Content, error) {
		otc.ReportProgress(ctx, 1, 2, "half way")
		otc.LogToClient(ctx, slog.LevelInfo, "drawing")
		return otc.Content{
			otc.TextContent("The chart:"),
			otc.ImageContent([]byte{1, 2, 3}, "image/png"),
			otc.AudioContent([]byte{4}, "audio/wav"),
			otc.ResourceContent("test://notes", "text/plain", "notes"),
			otc.BlobResourceContent("test://blob", "application/octet-stream", []byte{5}),
		}, nil
	}))
	require.NoError(t, otc.Register(reg, otc.Tool{
		ID:          "Chart.Empty",
		Version:     "1.0.0",
		Description: "Draws nothing.",
	}, func(context.Context, struct{}) (otc.Content, error) { return nil, nil }))
	return reg
}

const wantBlocks = `[{"type":"text","text":"The chart:"},{"type":"image","data":"AQID","mimeType":"image/png"},` +
	`{"type":"audio","data":"BA==","mimeType":"audio/wav"},{"type":"resource","resource":{"uri":"test://notes","mimeType":"text/plain","text":"notes"}},` +
	`{"type":"resource","resource":{"uri":"test://blob","mimeType":"application/octet-stream","blob":"BQ=="}}]`

func TestContentOverOTCAndREST(t *testing.T) {
	t.Parallel()
	reg := newContentRegistry(t)
	mux := http.NewServeMux()
	mux.Handle("/v1/", http.StripPrefix("/v1", rest.NewHandler(reg, nil)))
	mux.Handle("/", otc.NewHandler(reg, nil))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	post := func(t *testing.T, path, body string) map[string]json.RawMessage {
		t.Helper()
		resp, err := http.Post(srv.URL+path, "application/json", strings.NewReader(body))
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
		var m map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(b, &m))
		return m
	}
	t.Run("otc", func(t *testing.T) {
		var res struct {
			Success bool            `json:"success"`
			Value   json.RawMessage `json:"value"`
		}
		require.NoError(t, json.Unmarshal(post(t, "/call", `{"request":{"tool_id":"Chart.Draw"}}`)["result"], &res))
		assert.True(t, res.Success)
		assert.JSONEq(t, wantBlocks, string(res.Value))
	})
	t.Run("otc_empty", func(t *testing.T) {
		var res struct {
			Value json.RawMessage `json:"value"`
		}
		require.NoError(t, json.Unmarshal(post(t, "/call", `{"request":{"tool_id":"Chart.Empty"}}`)["result"], &res))
		assert.Equal(t, `[]`, string(res.Value), "no blocks is an empty array, as the schema says, never null")
	})
	t.Run("rest", func(t *testing.T) {
		m := post(t, "/v1/tools/Chart_Draw:invoke", `{"schema_version":"0.1.0","args":{}}`)
		assert.JSONEq(t, wantBlocks, string(m["result"]))
	})
	t.Run("catalog", func(t *testing.T) {
		for _, d := range reg.Tools() {
			assert.True(t, d.Content, d.ID)
			assert.Contains(t, string(d.OutputSchema), `"type":"array"`, "the output schema is the blocks' array")
		}
	})
}

// recordingNotifier is an otc.Notifier that keeps what it was sent.
type recordingNotifier struct {
	mu       sync.Mutex
	progress []string
	logs     []string
}

func (n *recordingNotifier) NotifyProgress(progress, total float64, message string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	b, _ := json.Marshal([]any{progress, total, message})
	n.progress = append(n.progress, string(b))
}

func (n *recordingNotifier) NotifyLog(level slog.Level, data any) {
	n.mu.Lock()
	defer n.mu.Unlock()
	b, _ := json.Marshal(data)
	n.logs = append(n.logs, level.String()+" "+string(b))
}

func TestNotifier(t *testing.T) {
	t.Parallel()
	reg := newContentRegistry(t)
	t.Run("reports_reach_the_notifier", func(t *testing.T) {
		n := &recordingNotifier{}
		res, err := reg.Call(otc.WithNotifier(context.Background(), n), &otc.CallRequest{ToolID: "Chart.Draw"})
		require.NoError(t, err)
		assert.True(t, res.Content)
		assert.Equal(t, []string{`[1,2,"half way"]`}, n.progress)
		assert.Equal(t, []string{`INFO "drawing"`}, n.logs)
	})
	t.Run("without_a_notifier_reports_do_nothing", func(t *testing.T) {
		otc.ReportProgress(context.Background(), 1, 1, "")
		otc.LogToClient(context.Background(), slog.LevelError, "nobody listens")
		res, err := reg.Call(context.Background(), &otc.CallRequest{ToolID: "Chart.Draw"})
		require.NoError(t, err)
		assert.Nil(t, res.Error)
	})
}

func TestRevision(t *testing.T) {
	t.Parallel()
	reg := otc.NewRegistry(nil)
	assert.Equal(t, uint64(0), reg.Revision())
	add := func(version string) error {
		return otc.Register(reg, otc.Tool{ID: "Rev.Tool", Version: version, Description: "A tool."},
			func(context.Context, struct{}) (int, error) { return 1, nil })
	}
	require.NoError(t, add("1.0.0"))
	assert.Equal(t, uint64(1), reg.Revision())
	require.Error(t, add("1.0.0"), "a duplicate")
	assert.Equal(t, uint64(1), reg.Revision(), "a failed registration changes nothing")
	require.NoError(t, add("2.0.0"))
	assert.Equal(t, uint64(2), reg.Revision())
}

func TestAuthenticateForAdapters(t *testing.T) {
	t.Parallel()
	keys, err := auth.NewAPIKeyAuth(map[string]string{"ops": "k3y-for-adapter-tests-0123456789"})
	require.NoError(t, err)
	jwtAuth, err := auth.NewJWTAuth(&auth.JWTOptions{Secret: []byte(strings.Repeat("s", 32))})
	require.NoError(t, err)

	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	r.Header.Set(otc.HeaderAPIKey, "k3y-for-adapter-tests-0123456789")
	got, e := otc.Authenticate(keys, r)
	require.Nil(t, e)
	require.NotNil(t, otc.CallerIdentity(got.Context()))
	assert.Equal(t, "ops", otc.CallerIdentity(got.Context()).Name)

	r.Header.Set(otc.HeaderAPIKey, "wrong")
	_, e = otc.Authenticate(keys, r)
	require.NotNil(t, e)
	assert.Equal(t, otc.CodeUnauthenticated, e.Code)
	assert.NotContains(t, e.Message, "wrong", "the credential is never quoted")

	got, e = otc.Authenticate(nil, r)
	assert.Nil(t, e, "no authenticator accepts every request")
	assert.Nil(t, otc.CallerIdentity(got.Context()))

	refused := &otc.Error{Code: otc.CodeUnauthenticated, Message: "no"}
	assert.Equal(t, "", otc.Challenge(keys, refused))
	assert.Equal(t, "Bearer", otc.Challenge(jwtAuth, refused))
	assert.Equal(t, "Bearer", otc.Challenge(auth.AnyOf(keys, jwtAuth), refused))
}
