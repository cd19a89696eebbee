package otc_test

// Execution-bound capability tokens run their tool once (issue 22, item
// 1): over OTC, REST and MCP, real signed tokens are sent again and
// again, and a counting tool says how often it ran.

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/auth"
	"github.com/otcgo/otc/idempotency"
	"github.com/otcgo/otc/internal/testkit"
	"github.com/otcgo/otc/mcp"
	"github.com/otcgo/otc/rest"
)

type onceInput struct {
	OrderID     string `json:"order_id" jsonschema:"description=The order to refund."`
	AmountCents int    `json:"amount_cents" jsonschema:"description=The amount in cents.,minimum=1"`
}

// onceServer serves Pay.Refund, which requires an execution-bound token,
// and Pay.Note, which needs nothing, over OTC (/), REST (/v1/) and MCP
// (/mcp), behind a capability authenticator that trusts testkit.CapIssuer and
// testkit.CapOtherIssuer.
type onceServer struct {
	url  string
	runs atomic.Int64
	// gate, when set, holds every refund until it is closed.
	gate chan struct{}
}

func newOnceServer(t *testing.T, opts *otc.RegistryOptions, tool otc.Tool) *onceServer {
	t.Helper()
	if opts == nil {
		opts = &otc.RegistryOptions{}
	}
	opts.Logger = slog.New(slog.DiscardHandler)
	s := &onceServer{}
	reg := otc.NewRegistry(opts)
	tool.ID, tool.Version, tool.Description = "Pay.Refund", "1.0.0", "Refunds an order."
	tool.Policy = &otc.Policy{ResourceURI: testkit.CapResource, RequiresExecution: true, AllowedOperations: []string{"refund"}}
	require.NoError(t, otc.Register(reg, tool, func(ctx context.Context, in onceInput) (string, error) {
		n := s.runs.Add(1)
		if s.gate != nil {
			<-s.gate
		}
		return fmt.Sprintf("rf_%s_%d", in.OrderID, n), nil
	}))
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Pay.Note", Version: "1.0.0", Description: "Notes nothing."},
		func(ctx context.Context, _ struct{}) (string, error) { return "noted", nil }))
	capAuth := testkit.CapabilityAuth(t, auth.CapabilityOptions{})
	mux := http.NewServeMux()
	mux.Handle("/v1/", http.StripPrefix("/v1", rest.NewHandler(reg, &rest.Options{Authenticator: capAuth})))
	mux.Handle("/mcp", mcp.NewHandler(reg, &mcp.Options{Authenticator: capAuth}))
	mux.Handle("/", otc.NewHandler(reg, &otc.HandlerOptions{Authenticator: capAuth}))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	s.url = srv.URL
	return s
}

// execToken signs a token bound to body for Pay.Refund, with a new jti,
// changed by edit.
func execToken(t *testing.T, body string, edit func(jwt.MapClaims)) string {
	t.Helper()
	return testkit.CapToken(t, func(c jwt.MapClaims) {
		c["aud"] = testkit.CapResource
		c["jti"] = otc.NewCallID()
		c["exec_act"] = "refund"
		c["inp_hash"] = testkit.InpHash(body)
		if edit != nil {
			edit(c)
		}
	})
}

// The three ways of calling Pay.Refund, and how each shows a refusal's
// reason.
type onceWire struct {
	name   string
	path   string
	body   func(callID string) string
	header func(callID string) http.Header
	// reason reads the refusal's reason and its message from an answer.
	reason func(t *testing.T, a testkit.Response) (string, string)
	// value reads a success's value.
	value func(t *testing.T, a testkit.Response) string
}

func onceWires() []onceWire {
	mcpMeta := func(callID string) string {
		if callID == "" {
			return ""
		}
		return `,"_meta":{"io.github.otcgo/call_id":"` + callID + `"}`
	}
	return []onceWire{{
		name: "otc",
		path: "/tools/call",
		body: func(callID string) string {
			id := ""
			if callID != "" {
				id = `"call_id":"` + callID + `",`
			}
			return `{"request":{` + id + `"tool_id":"Pay.Refund","input":{"order_id":"A-1","amount_cents":250}}}`
		},
		header: func(string) http.Header { return http.Header{} },
		reason: func(t *testing.T, a testkit.Response) (string, string) {
			var b struct{ Reason, Message string }
			require.NoError(t, json.Unmarshal(a.Raw, &b), string(a.Raw))
			return b.Reason, b.Message
		},
		value: func(t *testing.T, a testkit.Response) string {
			var b struct {
				Result struct {
					Success bool
					Value   string
				}
			}
			require.NoError(t, json.Unmarshal(a.Raw, &b), string(a.Raw))
			require.True(t, b.Result.Success, string(a.Raw))
			return b.Result.Value
		},
	}, {
		name: "rest",
		path: "/v1/tools/Pay_Refund:invoke",
		body: func(string) string {
			return `{"schema_version":"0.1.0","args":{"order_id":"A-1","amount_cents":250}}`
		},
		header: func(callID string) http.Header {
			h := http.Header{}
			if callID != "" {
				h.Set("X-Request-Id", callID)
			}
			return h
		},
		reason: func(t *testing.T, a testkit.Response) (string, string) {
			var b struct {
				Error struct {
					Message string
					Details struct{ Reason string }
				}
			}
			require.NoError(t, json.Unmarshal(a.Raw, &b), string(a.Raw))
			return b.Error.Details.Reason, b.Error.Message
		},
		value: func(t *testing.T, a testkit.Response) string {
			var b struct {
				OK     bool
				Result string
			}
			require.NoError(t, json.Unmarshal(a.Raw, &b), string(a.Raw))
			require.True(t, b.OK, string(a.Raw))
			return b.Result
		},
	}, {
		name: "mcp",
		path: "/mcp",
		body: func(callID string) string {
			return `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"Pay_Refund","arguments":{"order_id":"A-1","amount_cents":250}` + mcpMeta(callID) + `}}`
		},
		header: func(string) http.Header { return http.Header{"Accept": {"application/json, text/event-stream"}} },
		reason: func(t *testing.T, a testkit.Response) (string, string) {
			var b struct {
				Error struct {
					Message string
					Data    struct{ Error string }
				}
			}
			require.NoError(t, json.Unmarshal(a.Raw, &b), string(a.Raw))
			return b.Error.Data.Error, b.Error.Message
		},
		value: func(t *testing.T, a testkit.Response) string {
			var b struct {
				Result struct {
					IsError           bool
					StructuredContent struct{ Result string }
				}
			}
			require.NoError(t, json.Unmarshal(a.Raw, &b), string(a.Raw))
			require.False(t, b.Result.IsError, string(a.Raw))
			return b.Result.StructuredContent.Result
		},
	}}
}

func (s *onceServer) send(t *testing.T, w onceWire, body, token, callID string) testkit.Response {
	h := w.header(callID)
	h.Set("Authorization", "Bearer "+token)
	return testkit.Send(t, http.DefaultClient, http.MethodPost, s.url+w.path, h, []byte(body))
}

// TestExecutionTokenRunsOnce: the same request with the same token, sent
// 20 times at once, runs the tool once; every other copy is refused, 401
// token_replayed, on each wire format.
func TestExecutionTokenRunsOnce(t *testing.T) {
	t.Parallel()
	for _, w := range onceWires() {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			s := newOnceServer(t, nil, otc.Tool{})
			body := w.body("")
			token := execToken(t, body, nil)
			answers := make([]testkit.Response, 20)
			var wg sync.WaitGroup
			for i := range answers {
				wg.Go(func() { answers[i] = s.send(t, w, body, token, "") })
			}
			wg.Wait()
			ok := 0
			for _, a := range answers {
				if a.Status == http.StatusOK {
					ok++
					assert.Equal(t, "rf_A-1_1", w.value(t, a))
					continue
				}
				assert.Equal(t, http.StatusUnauthorized, a.Status, string(a.Raw))
				reason, msg := w.reason(t, a)
				assert.Equal(t, otc.ReasonTokenReplayed, reason, string(a.Raw))
				assert.Contains(t, msg, "already used")
				assert.Equal(t, "Bearer", a.Header.Get("WWW-Authenticate"))
			}
			assert.Equal(t, 1, ok, "one copy ran")
			assert.Equal(t, int64(1), s.runs.Load(), "the tool ran once")

			// A new token for the same call runs it again: it is the token
			// that is single-use, not the request.
			again := s.send(t, w, body, execToken(t, body, nil), "")
			require.Equal(t, http.StatusOK, again.Status, string(again.Raw))
			assert.Equal(t, "rf_A-1_2", w.value(t, again))
		})
	}
}

// TestExecutionTokenRetryWithCallID: with call ids recorded, the same
// request sent again is answered with the first call's outcome, on each
// wire format: a retry after a lost answer is safe, and the tool still
// runs once.
func TestExecutionTokenRetryWithCallID(t *testing.T) {
	t.Parallel()
	for _, w := range onceWires() {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			s := newOnceServer(t, &otc.RegistryOptions{Idempotency: idempotency.NewMemoryStore(nil)}, otc.Tool{})
			callID := otc.NewCallID()
			body := w.body(callID)
			token := execToken(t, body, nil)
			for i := range 20 {
				a := s.send(t, w, body, token, callID)
				require.Equal(t, http.StatusOK, a.Status, string(a.Raw))
				assert.Equal(t, "rf_A-1_1", w.value(t, a))
				if w.name != "mcp" {
					assert.Equal(t, i > 0, a.Header.Get(otc.HeaderReplayed) == "true", "copy %d", i)
				}
			}
			assert.Equal(t, int64(1), s.runs.Load())
		})
	}
}

// TestExecutionTokenNeedsJTI: a bound token without a jti, or with one
// too long to keep, is refused before anything runs.
func TestExecutionTokenNeedsJTI(t *testing.T) {
	t.Parallel()
	s := newOnceServer(t, nil, otc.Tool{})
	w := onceWires()[0]
	body := w.body("")
	// The token is checked with the rest of the policy, before the input.
	invalid := strings.Replace(body, "250", "0", 1)
	for _, tc := range []struct {
		name, body, want string
		edit             func(jwt.MapClaims)
	}{
		{"no_jti", body, "no token id (jti)", func(c jwt.MapClaims) { delete(c, "jti") }},
		{"no_jti_invalid_input", invalid, "no token id (jti)", func(c jwt.MapClaims) { delete(c, "jti") }},
		{"empty_jti", body, "no token id (jti)", func(c jwt.MapClaims) { c["jti"] = "" }},
		{"jti_not_a_string", body, "no token id (jti)", func(c jwt.MapClaims) { c["jti"] = 7 }},
		{"jti_too_long", body, "longer than 256 bytes", func(c jwt.MapClaims) { c["jti"] = strings.Repeat("j", 257) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			token := execToken(t, tc.body, tc.edit)
			a := s.send(t, w, tc.body, token, "")
			testkit.AssertCapRefused(t, a, http.StatusUnauthorized, otc.ReasonInvalidToken, tc.want, token)
		})
	}
	assert.Equal(t, int64(0), s.runs.Load())
}

// TestExecutionTokenSpentOnlyWhenRun: a token is spent when the function
// is about to run, not before: a call refused for its input, or by a busy
// tool, leaves it usable.
func TestExecutionTokenSpentOnlyWhenRun(t *testing.T) {
	t.Parallel()
	w := onceWires()[0]
	t.Run("invalid_input", func(t *testing.T) {
		t.Parallel()
		s := newOnceServer(t, nil, otc.Tool{})
		body := strings.Replace(w.body(""), "250", "0", 1)
		token := execToken(t, body, nil)
		for range 2 {
			a := s.send(t, w, body, token, "")
			assert.Equal(t, http.StatusUnprocessableEntity, a.Status, string(a.Raw))
		}
		assert.Equal(t, int64(0), s.runs.Load())
	})
	t.Run("busy", func(t *testing.T) {
		t.Parallel()
		s := newOnceServer(t, nil, otc.Tool{MaxConcurrent: 1})
		s.gate = make(chan struct{})
		first := make(chan testkit.Response, 1)
		go func() {
			body := strings.Replace(w.body(""), "A-1", "A-0", 1)
			first <- s.send(t, w, body, execToken(t, body, nil), "")
		}()
		require.Eventually(t, func() bool { return s.runs.Load() == 1 }, 5*time.Second, time.Millisecond)

		body := w.body("")
		token := execToken(t, body, nil)
		busy := s.send(t, w, body, token, "")
		require.Equal(t, http.StatusOK, busy.Status, string(busy.Raw))
		assert.Contains(t, string(busy.Raw), `"can_retry":true`)
		assert.Contains(t, string(busy.Raw), "is busy")

		close(s.gate)
		assert.Equal(t, http.StatusOK, (<-first).Status)
		again := s.send(t, w, body, token, "")
		require.Equal(t, http.StatusOK, again.Status, string(again.Raw))
		assert.Equal(t, "rf_A-1_2", w.value(t, again), "the token the busy tool refused was still good")
	})
}

// TestExecutionTokenPerIssuer: a jti is spent for its issuer: the same
// jti from another issuer is another token, and the same jti from the
// same issuer on another body is the same token.
func TestExecutionTokenPerIssuer(t *testing.T) {
	t.Parallel()
	s := newOnceServer(t, nil, otc.Tool{})
	w := onceWires()[0]
	body := w.body("")
	with := func(iss, jti, body string) string {
		return execToken(t, body, func(c jwt.MapClaims) { c["iss"], c["jti"] = iss, jti })
	}
	require.Equal(t, http.StatusOK, s.send(t, w, body, with(testkit.CapIssuer, "jti-1", body), "").Status)
	other := s.send(t, w, body, with(testkit.CapOtherIssuer, "jti-1", body), "")
	require.Equal(t, http.StatusOK, other.Status, "another issuer's jti-1: %s", other.Raw)

	body2 := strings.Replace(body, "A-1", "A-2", 1)
	again := s.send(t, w, body2, with(testkit.CapIssuer, "jti-1", body2), "")
	reason, _ := w.reason(t, again)
	assert.Equal(t, http.StatusUnauthorized, again.Status, string(again.Raw))
	assert.Equal(t, otc.ReasonTokenReplayed, reason)
	assert.Equal(t, int64(2), s.runs.Load())
}

// TestExecutionTokenOutlivesMemoryStoreEviction: a registry whose
// MemoryStore is full drops its oldest call records, but never a spent
// token id: a caller who fills the store cannot replay a token.
func TestExecutionTokenOutlivesMemoryStoreEviction(t *testing.T) {
	t.Parallel()
	s := newOnceServer(t, &otc.RegistryOptions{Idempotency: idempotency.NewMemoryStore(&idempotency.MemoryStoreOptions{MaxEntries: 2})}, otc.Tool{})
	w := onceWires()[0]
	body := w.body("")
	token := execToken(t, body, nil)
	require.Equal(t, http.StatusOK, s.send(t, w, body, token, "").Status)
	for i := range 10 {
		note := fmt.Sprintf(`{"request":{"call_id":"note-%d","tool_id":"Pay.Note"}}`, i)
		a := s.send(t, w, note, execToken(t, note, nil), "")
		require.Equal(t, http.StatusOK, a.Status, string(a.Raw))
	}
	a := s.send(t, w, body, token, "")
	reason, _ := w.reason(t, a)
	assert.Equal(t, otc.ReasonTokenReplayed, reason, string(a.Raw))
	assert.Equal(t, int64(1), s.runs.Load())
}

// pendingStore is a shared store (not a *MemoryStore) whose writes are
// acknowledged late: Complete records the outcome but reports it
// pending, as a Redis store does when Redis refused the first write and
// it keeps the claim and writes in the background.
type pendingStore struct{ *idempotency.MemoryStore }

func (s pendingStore) Claim(ctx context.Context, key, fp string) (*otc.IdempotencyRecord, otc.IdempotencyClaim, error) {
	rec, c, err := s.MemoryStore.Claim(ctx, key, fp)
	if c != nil {
		c = pendingClaim{c}
	}
	return rec, c, err
}

type pendingClaim struct{ otc.IdempotencyClaim }

func (c pendingClaim) Complete(ctx context.Context, outcome []byte) error {
	if err := c.IdempotencyClaim.Complete(ctx, outcome); err != nil {
		return err
	}
	return fmt.Errorf("the store's first write failed: %w", otc.ErrOutcomePending)
}

// TestExecutionTokenSpentWhilePending: a token id whose record the store
// is still writing, under the call's own claim, is spent by that call: it
// runs, and a replay is refused.
func TestExecutionTokenSpentWhilePending(t *testing.T) {
	t.Parallel()
	s := newOnceServer(t, &otc.RegistryOptions{Idempotency: pendingStore{idempotency.NewMemoryStore(nil)}}, otc.Tool{})
	w := onceWires()[0]
	body := w.body("")
	token := execToken(t, body, nil)
	first := s.send(t, w, body, token, "")
	require.Equal(t, http.StatusOK, first.Status, string(first.Raw))
	assert.Equal(t, "rf_A-1_1", w.value(t, first), "the call whose token is being recorded runs")
	again := s.send(t, w, body, token, "")
	reason, _ := w.reason(t, again)
	assert.Equal(t, otc.ReasonTokenReplayed, reason, string(again.Raw))
	assert.Equal(t, int64(1), s.runs.Load())
}
