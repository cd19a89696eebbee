package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/idempotency"
	"github.com/otcgo/otc/mcp"
)

// refundForm is the answer a refund tool asks for.
type refundForm struct {
	Confirm bool   `json:"confirm" jsonschema:"required,title=Confirm,description=Refund the order?"`
	Reason  string `json:"reason,omitempty" jsonschema:"enum=damaged,enum=late,enum=other"`
	Copies  int    `json:"copies,omitempty" jsonschema:"minimum=1,maximum=3"`
}

type refundInput struct {
	Order string `json:"order" jsonschema:"description=The order."`
}

// askingRegistry registers tools that ask: Shop.Refund elicits, then
// samples a note; Shop.Proceed elicits and goes on without an answer
// when the client cannot give one.
func askingRegistry(t testing.TB) *otc.Registry {
	t.Helper()
	reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler)})
	addTool(t, reg, "Shop.Refund", func(ctx context.Context, in refundInput) (string, error) {
		var ans refundForm
		action, err := otc.Elicit(ctx, "Refund order "+in.Order+"?", &ans)
		if err != nil {
			return "", err
		}
		if action != otc.ElicitAccept || !ans.Confirm {
			return "not refunded (" + string(action) + ")", nil
		}
		res, err := otc.Sample(ctx, otc.SampleRequest{MaxTokens: 20, Messages: []otc.SamplingMessage{
			{Role: "user", Content: otc.SamplingContent{Type: "text", Text: "Write a note for refund " + in.Order}},
		}})
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("refunded %s (%s, %d copies): %s", in.Order, ans.Reason, ans.Copies, res.Content.Text), nil
	})
	addTool(t, reg, "Shop.Proceed", func(ctx context.Context, in refundInput) (string, error) {
		var ans refundForm
		_, err := otc.Elicit(ctx, "Refund order "+in.Order+"?", &ans)
		if errors.Is(err, otc.ErrInputUnsupported) {
			return "proceeded without asking", nil
		}
		if err != nil {
			return "", err
		}
		return "asked", nil
	})
	addTool(t, reg, "Shop.Insist", func(ctx context.Context, in refundInput) (string, error) {
		var ans refundForm
		if _, err := otc.Elicit(ctx, "Refund order "+in.Order+"?", &ans); err != nil {
			return "", err
		}
		return "asked", nil
	})
	return reg
}

var allCaps = obj{"elicitation": obj{}, "sampling": obj{}, "roots": obj{}}

// round sends a 2026-07-28 tools/call of tool with args, the client's
// answers and state (when not nil/empty) and capabilities caps.
func round(t testing.TB, url, tool string, args any, caps obj, responses obj, state string) answer {
	t.Helper()
	p := callParams(tool, args, modernMeta(obj{"io.modelcontextprotocol/clientCapabilities": caps}))
	if responses != nil {
		p["inputResponses"] = responses
	}
	if state != "" {
		p["requestState"] = state
	}
	return post(t, url, request(1, "tools/call", p), modernHeaders("tools/call", tool))
}

// inputRequired is an input_required result.
type inputRequired struct {
	ResultType    string `json:"resultType"`
	InputRequests map[string]struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	} `json:"inputRequests"`
	RequestState string                     `json:"requestState"`
	Meta         map[string]json.RawMessage `json:"_meta"`
}

func decodeInputRequired(t testing.TB, a answer) inputRequired {
	t.Helper()
	raw := a.result(t)
	var r inputRequired
	require.NoError(t, json.Unmarshal(raw, &r), "%s", raw)
	require.Equal(t, "input_required", r.ResultType, "%s", raw)
	require.NotEmpty(t, r.RequestState, "%s", raw)
	assert.Contains(t, r.Meta, "io.modelcontextprotocol/serverInfo")
	assert.Len(t, object(t, raw), 4, "resultType, inputRequests, requestState and _meta only: %s", raw)
	return r
}

func TestInputRequiredRounds(t *testing.T) {
	t.Parallel()
	url := serve(t, askingRegistry(t), nil)
	args := obj{"order": "A-1001"}

	r1 := decodeInputRequired(t, round(t, url, "Shop_Refund", args, allCaps, nil, ""))
	require.Len(t, r1.InputRequests, 1)
	q := r1.InputRequests["q1"]
	assert.Equal(t, otc.MethodElicit, q.Method)
	assert.JSONEq(t, `{"message":"Refund order A-1001?","requestedSchema":{"type":"object","properties":{
		"confirm":{"type":"boolean","title":"Confirm","description":"Refund the order?"},
		"reason":{"type":"string","enum":["damaged","late","other"]},
		"copies":{"type":"integer","minimum":1,"maximum":3}},"required":["confirm"]}}`, string(q.Params))

	accept := obj{"q1": obj{"action": "accept", "content": obj{"confirm": true, "reason": "late", "copies": 2}}}
	r2 := decodeInputRequired(t, round(t, url, "Shop_Refund", args, allCaps, accept, r1.RequestState))
	require.Len(t, r2.InputRequests, 1, "the elicitation is answered; the sampling is asked")
	assert.Equal(t, otc.MethodSample, r2.InputRequests["q2"].Method)
	assert.JSONEq(t, `{"messages":[{"role":"user","content":{"type":"text","text":"Write a note for refund A-1001"}}],"maxTokens":20}`,
		string(r2.InputRequests["q2"].Params))
	assert.NotEqual(t, r1.RequestState, r2.RequestState)
	assert.NotContains(t, r2.RequestState, "late", "the state is sealed, not readable")

	// The last round brings only the sampling's answer: the elicitation's
	// comes back from the state.
	sample := obj{"q2": obj{"role": "assistant", "content": obj{"type": "text", "text": "Sorry!"}, "model": "m1", "stopReason": "endTurn"}}
	raw := round(t, url, "Shop_Refund", args, allCaps, sample, r2.RequestState).result(t)
	res := decodeCall(t, raw)
	assert.False(t, res.IsError, "%s", raw)
	assert.JSONEq(t, `{"result":"refunded A-1001 (late, 2 copies): Sorry!"}`, string(res.StructuredContent))
	assert.Equal(t, "complete", object(t, raw)["resultType"])

	t.Run("replay_refused", func(t *testing.T) {
		t.Parallel()
		// The last round, sent again with the same answers, does not run
		// the function again: a requestState answers one request.
		a := round(t, url, "Shop_Refund", args, allCaps, sample, r2.RequestState)
		e, _ := a.rpcErr(t, http.StatusBadRequest, -32602)
		assert.Contains(t, e.Message, "requestState was already used")
		a = round(t, url, "Shop_Refund", args, allCaps, accept, r1.RequestState)
		e, _ = a.rpcErr(t, http.StatusBadRequest, -32602)
		assert.Contains(t, e.Message, "requestState was already used", "an earlier round's state too")
	})
	t.Run("decline", func(t *testing.T) {
		t.Parallel()
		r1 := decodeInputRequired(t, round(t, url, "Shop_Refund", args, allCaps, nil, ""))
		decline := obj{"q1": obj{"action": "decline"}}
		raw := round(t, url, "Shop_Refund", args, allCaps, decline, r1.RequestState).result(t)
		assert.JSONEq(t, `{"result":"not refunded (decline)"}`, string(decodeCall(t, raw).StructuredContent))
	})
	t.Run("answers_without_state_are_not_used", func(t *testing.T) {
		t.Parallel()
		// Answers are used only for questions a requestState says were
		// asked: a confirmation sent at once, unasked, is not one the
		// user saw.
		all := obj{"q1": accept["q1"], "q2": sample["q2"], "unknown": obj{"x": 1}}
		r := decodeInputRequired(t, round(t, url, "Shop_Refund", args, allCaps, all, ""))
		assert.Equal(t, []string{"q1"}, slices.Collect(maps.Keys(r.InputRequests)), "the question is asked")
	})
	t.Run("answer_to_a_later_question_is_not_used", func(t *testing.T) {
		t.Parallel()
		// r1 asked q1 only: an answer to q2 sent with it waits for q2 to
		// be asked.
		r1 := decodeInputRequired(t, round(t, url, "Shop_Refund", args, allCaps, nil, ""))
		both := obj{"q1": accept["q1"], "q2": sample["q2"]}
		r := decodeInputRequired(t, round(t, url, "Shop_Refund", args, allCaps, both, r1.RequestState))
		assert.Contains(t, r.InputRequests, "q2")
	})
	t.Run("wrong_key_asks_again", func(t *testing.T) {
		t.Parallel()
		r := decodeInputRequired(t, round(t, url, "Shop_Refund", args, allCaps, obj{"other": obj{"action": "accept"}}, ""))
		assert.Contains(t, r.InputRequests, "q1")
	})
}

func TestInputRequiredRefusals(t *testing.T) {
	t.Parallel()
	url := serve(t, askingRegistry(t), nil)
	args := obj{"order": "A-1001"}
	r1 := decodeInputRequired(t, round(t, url, "Shop_Refund", args, allCaps, nil, ""))
	accept := obj{"q1": obj{"action": "accept", "content": obj{"confirm": true}}}

	cases := []struct {
		name      string
		tool      string
		args      any
		responses any
		state     any
		want      string
	}{
		{"tampered_state", "Shop_Refund", args, accept, r1.RequestState[:len(r1.RequestState)-2] + "AA", "requestState was not issued by this server or was altered"},
		{"garbage_state", "Shop_Refund", args, accept, "not-base64!", "requestState was not issued by this server or was altered"},
		{"state_not_string", "Shop_Refund", args, accept, 12, "requestState must be a string"},
		{"other_arguments", "Shop_Refund", obj{"order": "B-2"}, accept, r1.RequestState, "requestState belongs to another request"},
		{"other_tool", "Shop_Insist", args, accept, r1.RequestState, "requestState belongs to another request"},
		{"responses_null", "Shop_Refund", args, nil, r1.RequestState, "inputResponses must be an object"},
		{"response_not_object", "Shop_Refund", args, obj{"q1": 12345}, r1.RequestState, `inputResponses["q1"] must be an object`},
		{"answer_misfits_form", "Shop_Refund", args, obj{"q1": obj{"action": "accept", "content": obj{"confirm": "yes"}}}, r1.RequestState, "does not fit the form: confirm"},
		{"answer_lacks_required", "Shop_Refund", args, obj{"q1": obj{"action": "accept", "content": obj{}}}, r1.RequestState, "does not fit the form"},
		{"answer_bad_action", "Shop_Refund", args, obj{"q1": obj{"action": "maybe"}}, r1.RequestState, `its action "maybe" is not accept, decline or cancel`},
		{"answer_out_of_range", "Shop_Refund", args, obj{"q1": obj{"action": "accept", "content": obj{"confirm": true, "copies": 9}}}, r1.RequestState, "copies"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := callParams(tc.tool, tc.args, modernMeta(obj{"io.modelcontextprotocol/clientCapabilities": allCaps}))
			p["inputResponses"] = tc.responses
			p["requestState"] = tc.state
			if tc.state == r1.RequestState {
				// A state of its own: one that a request used is spent.
				p["requestState"] = decodeInputRequired(t, round(t, url, "Shop_Refund", args, allCaps, nil, "")).RequestState
			}
			a := post(t, url, request(7, "tools/call", p), modernHeaders("tools/call", strings.ReplaceAll(tc.tool, ".", "_")))
			e, id := a.rpcErr(t, http.StatusBadRequest, -32602)
			assert.Contains(t, e.Message, tc.want)
			assert.Equal(t, "7", id)
		})
	}
}

func TestInputRequiredSealing(t *testing.T) {
	t.Parallel()
	key := func(b byte) []byte { return bytes.Repeat([]byte{b}, mcp.RequestStateKeySize) }
	args := obj{"order": "A-1"}
	accept := obj{"q1": obj{"action": "decline"}}
	a := serve(t, askingRegistry(t), &mcp.Options{RequestStateKeys: [][]byte{key(1)}})
	state := decodeInputRequired(t, round(t, a, "Shop_Refund", args, allCaps, nil, "")).RequestState

	t.Run("replica_with_the_key", func(t *testing.T) {
		t.Parallel()
		b := serve(t, askingRegistry(t), &mcp.Options{RequestStateKeys: [][]byte{key(1)}})
		raw := round(t, b, "Shop_Refund", args, allCaps, accept, state).result(t)
		assert.JSONEq(t, `{"result":"not refunded (decline)"}`, string(decodeCall(t, raw).StructuredContent))
	})
	t.Run("rotated_key_still_opens", func(t *testing.T) {
		t.Parallel()
		b := serve(t, askingRegistry(t), &mcp.Options{RequestStateKeys: [][]byte{key(2), key(1)}})
		raw := round(t, b, "Shop_Refund", args, allCaps, accept, state).result(t)
		assert.JSONEq(t, `{"result":"not refunded (decline)"}`, string(decodeCall(t, raw).StructuredContent))
	})
	t.Run("foreign_key", func(t *testing.T) {
		t.Parallel()
		b := serve(t, askingRegistry(t), &mcp.Options{RequestStateKeys: [][]byte{key(2)}})
		e, _ := round(t, b, "Shop_Refund", args, allCaps, accept, state).rpcErr(t, http.StatusBadRequest, -32602)
		assert.Contains(t, e.Message, "replicas must share Options.RequestStateKeys")
	})
	t.Run("default_key_is_per_process", func(t *testing.T) {
		t.Parallel()
		b := serve(t, askingRegistry(t), nil)
		c := serve(t, askingRegistry(t), nil)
		s := decodeInputRequired(t, round(t, b, "Shop_Refund", args, allCaps, nil, "")).RequestState
		raw := round(t, c, "Shop_Refund", args, allCaps, accept, s).result(t)
		assert.JSONEq(t, `{"result":"not refunded (decline)"}`, string(decodeCall(t, raw).StructuredContent))
	})
	t.Run("expired", func(t *testing.T) {
		t.Parallel()
		b := serve(t, askingRegistry(t), &mcp.Options{RequestStateTTL: time.Nanosecond})
		s := decodeInputRequired(t, round(t, b, "Shop_Refund", args, allCaps, nil, "")).RequestState
		time.Sleep(1100 * time.Millisecond) // the expiry is in whole seconds
		e, _ := round(t, b, "Shop_Refund", args, allCaps, accept, s).rpcErr(t, http.StatusBadRequest, -32602)
		assert.Contains(t, e.Message, "requestState has expired")
	})
	t.Run("bad_key_size_panics", func(t *testing.T) {
		t.Parallel()
		assert.PanicsWithValue(t, "mcp: Options.RequestStateKeys[0] is 16 bytes; each key is 32 random bytes (AES-256), the same on every replica", func() {
			mcp.NewHandler(askingRegistry(t), &mcp.Options{RequestStateKeys: [][]byte{make([]byte, 16)}})
		})
	})
}

func TestInputRequiredCapabilities(t *testing.T) {
	t.Parallel()
	url := serve(t, askingRegistry(t), nil)
	args := obj{"order": "A-1"}
	t.Run("tool_goes_on_without", func(t *testing.T) {
		t.Parallel()
		raw := round(t, url, "Shop_Proceed", args, obj{"sampling": obj{}}, nil, "").result(t)
		assert.JSONEq(t, `{"result":"proceeded without asking"}`, string(decodeCall(t, raw).StructuredContent))
	})
	t.Run("tool_insists", func(t *testing.T) {
		t.Parallel()
		e, _ := round(t, url, "Shop_Insist", args, obj{"sampling": obj{}}, nil, "").rpcErr(t, http.StatusBadRequest, -32021)
		assert.Equal(t, "Missing required client capability: elicitation", e.Message)
		assert.JSONEq(t, `{"requiredCapabilities":{"elicitation":{}}}`, string(e.Data))
	})
	t.Run("second_question_needs_another", func(t *testing.T) {
		t.Parallel()
		// Elicitation declared, sampling not: the first round asks, the
		// second ends with the capability the sampling needs.
		caps := obj{"elicitation": obj{}}
		r := decodeInputRequired(t, round(t, url, "Shop_Refund", args, caps, nil, ""))
		accept := obj{"q1": obj{"action": "accept", "content": obj{"confirm": true}}}
		e, _ := round(t, url, "Shop_Refund", args, caps, accept, r.RequestState).rpcErr(t, http.StatusBadRequest, -32021)
		assert.Contains(t, e.Message, "sampling")
	})
	t.Run("legacy_cannot_ask", func(t *testing.T) {
		t.Parallel()
		// A 2025-11-25 client that declared no capability in the request:
		// it is not asked on the stream, and the tool goes on without.
		noCaps := obj{"io.modelcontextprotocol/clientCapabilities": obj{}}
		a := post(t, url, request(3, "tools/call", callParams("Shop_Proceed", args, noCaps)), nil)
		assert.JSONEq(t, `{"result":"proceeded without asking"}`, string(decodeCall(t, a.result(t)).StructuredContent))
	})
}

// TestInputRequiredOnlyForCalls checks that no other request answers
// input_required, whatever it carries.
func TestInputRequiredOnlyForCalls(t *testing.T) {
	t.Parallel()
	url := serve(t, askingRegistry(t), nil)
	for _, method := range []string{"tools/list", "prompts/list", "resources/list", "server/discover"} {
		p := obj{"_meta": modernMeta(obj{"io.modelcontextprotocol/clientCapabilities": allCaps}), "inputResponses": obj{"q1": obj{"action": "accept"}}}
		raw := post(t, url, request(2, method, p), modernHeaders(method, "")).result(t)
		assert.Equal(t, "complete", object(t, raw)["resultType"], "%s: %s", method, raw)
	}
}

// TestInputRequiredWithCallID: a call id names the call across its rounds;
// the idempotency store records only the outcome of the last one.
func TestInputRequiredWithCallID(t *testing.T) {
	t.Parallel()
	reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler), Idempotency: idempotency.NewMemoryStore(nil)})
	runs := 0
	addTool(t, reg, "Shop.Once", func(ctx context.Context, in refundInput) (string, error) {
		runs++
		var ans refundForm
		if _, err := otc.Elicit(ctx, "Refund "+in.Order+"?", &ans); err != nil {
			return "", err
		}
		return fmt.Sprintf("run %d: %t", runs, ans.Confirm), nil
	})
	url := serve(t, reg, nil)
	call := func(responses obj, state string) answer {
		p := callParams("Shop_Once", obj{"order": "A"}, modernMeta(obj{"io.modelcontextprotocol/clientCapabilities": allCaps, mcp.MetaCallID: "call-1"}))
		if responses != nil {
			p["inputResponses"], p["requestState"] = responses, state
		}
		return post(t, url, request(1, "tools/call", p), modernHeaders("tools/call", "Shop_Once"))
	}
	r := decodeInputRequired(t, call(nil, ""))
	accept := obj{"q1": obj{"action": "accept", "content": obj{"confirm": true}}}
	raw := call(accept, r.RequestState).result(t)
	assert.JSONEq(t, `{"result":"run 2: true"}`, string(decodeCall(t, raw).StructuredContent), "the first round was not recorded")
	raw = call(accept, r.RequestState).result(t)
	assert.JSONEq(t, `{"result":"run 2: true"}`, string(decodeCall(t, raw).StructuredContent), "the last round's outcome is replayed")
	assert.Equal(t, 2, runs)
}

// TestInputRequiredOverStdio: a 2026-07-28 request on the pipe goes round
// the same way.
func TestInputRequiredOverStdio(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := startStdio(t, ctx, askingRegistry(t), nil)
	p := callParams("Shop_Proceed", obj{"order": "A-1"}, modernMeta(obj{"io.modelcontextprotocol/clientCapabilities": allCaps}))
	c.send(request(1, "tools/call", p))
	var r inputRequired
	resp := c.recvResponse()
	require.Nil(t, resp.Error)
	require.NoError(t, json.Unmarshal(resp.Result, &r))
	require.Equal(t, "input_required", r.ResultType, "%s", resp.Result)
	assert.Equal(t, otc.MethodElicit, r.InputRequests["q1"].Method)

	p["inputResponses"] = obj{"q1": obj{"action": "cancel"}}
	p["requestState"] = r.RequestState
	c.send(request(2, "tools/call", p))
	resp = c.recvResponse()
	require.Nil(t, resp.Error)
	assert.JSONEq(t, `{"result":"asked"}`, string(decodeCall(t, resp.Result).StructuredContent))
}
