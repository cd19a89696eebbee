package interop

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	otcmcp "github.com/otcgo/otc/mcp"
)

// A tool that asks its caller in the middle of the call, answered by the
// SDK's client: elicitation/create and sampling/createMessage sent on the
// call's SSE stream over HTTP (the answer coming back as a POST of its
// own) and on the pipe over stdio, in the protocol versions that send
// server requests (2025-06-18 and 2025-11-25).

// askingRegistry has Shop.Refund, which asks the user to confirm a refund
// before it makes it, and Shop.Summarize, which asks the client's model.
func askingRegistry(t *testing.T) *otc.Registry {
	t.Helper()
	reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler)})
	type refundIn struct {
		Order  string  `json:"order" jsonschema:"description=The order to refund."`
		Amount float64 `json:"amount" jsonschema:"description=The amount in euros."`
	}
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Shop.Refund", Version: "1.0.0", Description: "Refunds an order, once the user confirms."},
		func(ctx context.Context, in refundIn) (string, error) {
			params, _ := json.Marshal(map[string]any{
				"message": "Refund " + json.Number(jsonNumber(in.Amount)).String() + " € to order " + in.Order + "?",
				"requestedSchema": map[string]any{"type": "object",
					"properties": map[string]any{"reason": map[string]any{"type": "string", "description": "Why"}},
					"required":   []string{"reason"}},
			})
			answers, err := otc.Ask(ctx, otc.InputRequest{Method: otc.MethodElicit, Params: params})
			if errors.Is(err, otc.ErrInputUnsupported) {
				return "", &otc.ToolError{Message: "The refund needs the user's confirmation, and this client cannot ask for it."}
			}
			if err != nil {
				return "", err
			}
			var a struct {
				Action  string `json:"action"`
				Content struct {
					Reason string `json:"reason"`
				} `json:"content"`
			}
			if err := json.Unmarshal(answers[0], &a); err != nil {
				return "", err
			}
			if a.Action != "accept" {
				return "not refunded: the user chose " + a.Action, nil
			}
			return "refunded " + in.Order + " (" + a.Content.Reason + ")", nil
		}))
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Shop.Summarize", Version: "1.0.0", Description: "Summarizes a text with the client's model."},
		func(ctx context.Context, in struct {
			Text string `json:"text" jsonschema:"description=The text."`
		}) (string, error) {
			params, _ := json.Marshal(map[string]any{"maxTokens": 50,
				"messages": []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": "Summarize: " + in.Text}}}})
			answers, err := otc.Ask(ctx, otc.InputRequest{Method: otc.MethodSample, Params: params})
			if err != nil {
				return "", err
			}
			var a struct {
				Content struct {
					Text string `json:"text"`
				} `json:"content"`
			}
			if err := json.Unmarshal(answers[0], &a); err != nil {
				return "", err
			}
			return "summary: " + a.Content.Text, nil
		}))
	return reg
}

func jsonNumber(f float64) string {
	b, _ := json.Marshal(f)
	return string(b)
}

// askTransports are the ways the SDK's client reaches the asking tools.
func askTransports(t *testing.T, reg *otc.Registry) map[string]func() mcp.Transport {
	srv := httptest.NewServer(otcmcp.NewHandler(reg, nil))
	t.Cleanup(srv.Close)
	return map[string]func() mcp.Transport{
		"http": func() mcp.Transport {
			return &mcp.StreamableClientTransport{Endpoint: srv.URL, MaxRetries: -1}
		},
		"stdio": func() mcp.Transport {
			// The stdio transport's framing on a pair of pipes, as a
			// process's standard input and output would carry it.
			inR, inW := io.Pipe()
			outR, outW := io.Pipe()
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				done <- otcmcp.Serve(ctx, reg, inR, outW, nil)
				outW.Close()
			}()
			t.Cleanup(func() {
				inW.Close()
				cancel()
				<-done
			})
			return &mcp.IOTransport{Reader: outR, Writer: inW}
		},
	}
}

func TestSDKClientAnswersQuestions(t *testing.T) {
	t.Parallel()
	reg := askingRegistry(t)
	for name, transport := range askTransports(t, reg) {
		for _, version := range []string{otcmcp.Version20251125, otcmcp.Version20250618} {
			t.Run(name+"_"+version, func(t *testing.T) {
				t.Parallel()
				var asked *mcp.ElicitParams
				client := mcp.NewClient(&mcp.Implementation{Name: "otc-interop", Version: "0.0.0"}, &mcp.ClientOptions{
					ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
						asked = req.Params
						return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"reason": "damaged"}}, nil
					},
					CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
						return &mcp.CreateMessageResult{Role: "assistant", Model: "test-model", Content: &mcp.TextContent{Text: "short"}}, nil
					},
				})
				ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
				defer cancel()
				cs, err := client.Connect(ctx, transport(), &mcp.ClientSessionOptions{ProtocolVersion: version})
				require.NoError(t, err)
				defer cs.Close()
				assert.Equal(t, version, cs.InitializeResult().ProtocolVersion)

				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "Shop_Refund", Arguments: map[string]any{"order": "A-1001", "amount": 250}})
				require.NoError(t, err)
				require.False(t, res.IsError, "%s", onlyText(t, res))
				assert.Equal(t, "refunded A-1001 (damaged)", structuredResult(t, res))
				require.NotNil(t, asked, "the client was asked")
				assert.Equal(t, "Refund 250 € to order A-1001?", asked.Message)

				res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "Shop_Summarize", Arguments: map[string]any{"text": "a long text"}})
				require.NoError(t, err)
				require.False(t, res.IsError, "%s", onlyText(t, res))
				assert.Equal(t, "summary: short", structuredResult(t, res))
			})
		}
	}
}

func TestSDKClientWithoutElicitation(t *testing.T) {
	t.Parallel()
	// A client that declared no elicitation capability: over stdio the
	// server knows from initialize and does not ask; over HTTP it asks,
	// and the client refuses the method. Either way the tool learns it
	// cannot ask (otc.ErrInputUnsupported), and as it fails, the call is
	// answered with the missing-capability error naming what to enable.
	reg := askingRegistry(t)
	for name, transport := range askTransports(t, reg) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			client := mcp.NewClient(&mcp.Implementation{Name: "otc-interop", Version: "0.0.0"}, nil)
			ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
			defer cancel()
			cs, err := client.Connect(ctx, transport(), &mcp.ClientSessionOptions{ProtocolVersion: otcmcp.Version20251125})
			require.NoError(t, err)
			defer cs.Close()
			_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "Shop_Refund", Arguments: map[string]any{"order": "A-1001", "amount": 250}})
			var rpcErr *jsonrpc.Error
			require.ErrorAs(t, err, &rpcErr)
			assert.Equal(t, int64(-32021), rpcErr.Code)
			assert.Equal(t, "Missing required client capability: elicitation", rpcErr.Message)
			assert.JSONEq(t, `{"requiredCapabilities":{"elicitation":{}}}`, string(rpcErr.Data))
		})
	}
}

// structuredResult returns a call's {"result": string} structured content.
func structuredResult(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	var v struct {
		Result string `json:"result"`
	}
	require.NoError(t, json.Unmarshal(b, &v), "%s", b)
	return v.Result
}
