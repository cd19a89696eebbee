package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/mcp"
	"github.com/otcgo/otc/prompt"
)

// registerTestPrompts registers a prompt with an argument, one that asks
// the user, and one that fails.
func registerTestPrompts(t testing.TB, reg *otc.Registry) {
	t.Helper()
	type who struct {
		Who string `json:"who" jsonschema:"required,description=Whom to greet."`
	}
	_, err := prompt.Register(reg, prompt.Prompt[who]{Name: "greet", Title: "Greet", Description: "Greets someone."},
		func(_ context.Context, in who) (prompt.Result, error) {
			return prompt.Result{Description: "A greeting", Messages: []prompt.Message{
				{Role: prompt.User, Content: otc.TextContent("Say hello to " + in.Who)},
			}}, nil
		})
	require.NoError(t, err)
	_, err = prompt.Register(reg, prompt.Prompt[struct{}]{Name: "ask"}, func(ctx context.Context, _ struct{}) (string, error) {
		var ans struct {
			Topic string `json:"topic" jsonschema:"required"`
		}
		if _, err := otc.Elicit(ctx, "Which topic?", &ans); err != nil {
			return "", err
		}
		return "Explain " + ans.Topic, nil
	})
	require.NoError(t, err)
	_, err = prompt.Register(reg, prompt.Prompt[struct{}]{Name: "broken"}, func(context.Context, struct{}) ([]prompt.Message, error) {
		return nil, errors.New("the template store is down")
	})
	require.NoError(t, err)
	_, err = prompt.Register(reg, prompt.Prompt[struct{}]{Name: "system"}, func(context.Context, struct{}) (prompt.Message, error) {
		return prompt.Message{Role: "system", Content: otc.TextContent("Be brief.")}, nil
	})
	require.NoError(t, err)
}

func TestPrompts(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t)
	registerTestPrompts(t, reg)
	url := serve(t, reg, nil)
	modern := func(method string, params obj) answer {
		params["_meta"] = modernMeta(obj{"io.modelcontextprotocol/clientCapabilities": allCaps})
		return post(t, url, request(1, method, params), modernHeaders(method, ""))
	}
	t.Run("initialize_declares_prompts", func(t *testing.T) {
		t.Parallel()
		raw := post(t, url, request(1, "initialize", obj{"protocolVersion": mcp.Version20251125, "capabilities": obj{}, "clientInfo": obj{"name": "c", "version": "1"}}), nil).result(t)
		assert.Contains(t, object(t, raw)["capabilities"], "prompts")
	})
	t.Run("list", func(t *testing.T) {
		t.Parallel()
		want := `[{"name":"ask"},{"name":"broken"},{"name":"greet","title":"Greet","description":"Greets someone.","arguments":[{"name":"who","description":"Whom to greet.","required":true}]},{"name":"system"}]`
		raw := post(t, url, request(1, "prompts/list", nil), nil).result(t)
		assert.JSONEq(t, `{"prompts":`+want+`}`, string(raw))
		m := object(t, modern("prompts/list", obj{}).result(t))
		assert.Equal(t, "complete", m["resultType"])
		assert.Contains(t, m, "ttlMs")
		assert.Contains(t, m, "cacheScope")
	})
	t.Run("get", func(t *testing.T) {
		t.Parallel()
		raw := post(t, url, request(1, "prompts/get", obj{"name": "greet", "arguments": obj{"who": "Ada"}}), nil).result(t)
		assert.JSONEq(t, `{"description":"A greeting","messages":[{"role":"user","content":{"type":"text","text":"Say hello to Ada"}}]}`, string(raw))
		m := object(t, modern("prompts/get", obj{"name": "greet", "arguments": obj{"who": "Ada"}}).result(t))
		assert.Equal(t, "complete", m["resultType"])
		assert.Contains(t, m, "_meta")
	})
	for name, tc := range map[string]struct {
		params obj
		code   int
		want   string
	}{
		"unknown":          {obj{"name": "nope"}, -32602, `no prompt is named "nope"`},
		"missing_argument": {obj{"name": "greet"}, -32602, `(who: Is required)`},
		"argument_number":  {obj{"name": "greet", "arguments": obj{"who": 1}}, -32602, `the arguments are strings`},
		"failing":          {obj{"name": "broken"}, -32603, "The prompt could not be rendered: the template store is down"},
		"wrong_role":       {obj{"name": "system"}, -32603, `The prompt could not be rendered: message 0 has role "system": it is "user" or "assistant"`},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e, _ := post(t, url, request(1, "prompts/get", tc.params), nil).rpcErr(t, http.StatusOK, tc.code)
			assert.Contains(t, e.Message, tc.want)
		})
	}
	t.Run("asks_in_2026", func(t *testing.T) {
		t.Parallel()
		a := modern("prompts/get", obj{"name": "ask"})
		r := decodeInputRequired(t, a)
		require.Contains(t, r.InputRequests, "q1")
		assert.Equal(t, otc.MethodElicit, r.InputRequests["q1"].Method)
		raw := modern("prompts/get", obj{"name": "ask", "requestState": r.RequestState,
			"inputResponses": obj{"q1": obj{"action": "accept", "content": obj{"topic": "tides"}}}}).result(t)
		assert.JSONEq(t, `[{"role":"user","content":{"type":"text","text":"Explain tides"}}]`, mustJSON(t, object(t, raw)["messages"]))
		// The state of a prompt is not a tool call's.
		e, _ := round(t, url, "ask", nil, allCaps, obj{"q1": obj{"action": "decline"}}, r.RequestState).rpcErr(t, http.StatusBadRequest, -32602)
		assert.Contains(t, e.Message, "requestState belongs to another request")
	})
	t.Run("cannot_ask_without_capability", func(t *testing.T) {
		t.Parallel()
		p := obj{"name": "ask", "_meta": modernMeta(obj{"io.modelcontextprotocol/clientCapabilities": obj{}})}
		e, _ := post(t, url, request(1, "prompts/get", p), modernHeaders("prompts/get", "ask")).rpcErr(t, http.StatusBadRequest, -32021)
		assert.Contains(t, e.Message, "elicitation")
	})
	t.Run("legacy_cannot_ask", func(t *testing.T) {
		t.Parallel()
		e, _ := post(t, url, request(1, "prompts/get", obj{"name": "ask"}), nil).rpcErr(t, http.StatusOK, -32603)
		assert.Contains(t, e.Message, "cannot answer")
	})
	t.Run("no_prompts_empty_list", func(t *testing.T) {
		t.Parallel()
		url := serve(t, newRegistry(t), nil)
		raw := post(t, url, request(1, "prompts/list", nil), nil).result(t)
		assert.JSONEq(t, `{"prompts":[]}`, string(raw))
	})
}

// mustJSON encodes v.
func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}
