package otc_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otcgo/otc"
)

// scriptedAsker records the questions it is asked and answers them from
// a script, by method.
type scriptedAsker struct {
	asked   []otc.InputRequest
	answers map[string]string // method → answer
	err     error
}

func (a *scriptedAsker) Ask(_ context.Context, reqs []otc.InputRequest) ([]json.RawMessage, error) {
	a.asked = append(a.asked, reqs...)
	if a.err != nil {
		return nil, a.err
	}
	out := make([]json.RawMessage, len(reqs))
	for i, r := range reqs {
		out[i] = json.RawMessage(a.answers[r.Method])
	}
	return out, nil
}

type contactForm struct {
	Email   string    `json:"email" jsonschema:"required,format=email,title=Email,description=Where to write."`
	Plan    string    `json:"plan,omitempty" jsonschema:"enum=free,enum=pro,default=free"`
	Seats   int       `json:"seats,omitempty" jsonschema:"minimum=1,maximum=50"`
	Ratio   float64   `json:"ratio,omitempty"`
	News    bool      `json:"news,omitempty" jsonschema:"default=true"`
	Tags    []string  `json:"tags,omitempty" jsonschema:"enum=a,enum=b"`
	Since   time.Time `json:"since,omitzero"`
	Initial string    `json:"initial,omitempty" jsonschema:"minLength=1,maxLength=1"`
}

func TestElicitForm(t *testing.T) {
	t.Parallel()
	a := &scriptedAsker{answers: map[string]string{otc.MethodElicit: `{"action":"decline"}`}}
	ctx := otc.WithAsker(context.Background(), a)
	var ans contactForm
	action, err := otc.Elicit(ctx, "How do we reach you?", &ans)
	require.NoError(t, err)
	assert.Equal(t, otc.ElicitDecline, action)
	require.Len(t, a.asked, 1)
	assert.Equal(t, otc.MethodElicit, a.asked[0].Method)
	assert.Empty(t, a.asked[0].Key)
	assert.JSONEq(t, `{"message":"How do we reach you?","requestedSchema":{"type":"object","properties":{
		"email":{"type":"string","format":"email","title":"Email","description":"Where to write."},
		"plan":{"type":"string","enum":["free","pro"],"default":"free"},
		"seats":{"type":"integer","minimum":1,"maximum":50},
		"ratio":{"type":"number"},
		"news":{"type":"boolean","default":true},
		"tags":{"type":"array","items":{"type":"string","enum":["a","b"]}},
		"since":{"type":"string","format":"date-time"},
		"initial":{"type":"string","minLength":1,"maxLength":1}},"required":["email"]}}`, string(a.asked[0].Params))

	refused := []struct {
		name   string
		answer any
		want   string
	}{
		{"nested", &struct {
			Addr struct {
				Zip string `json:"zip"`
			} `json:"addr"`
		}{}, `field Addr: its JSON type "object" cannot be asked for`},
		{"map", &struct {
			M map[string]string `json:"m"`
		}{}, `field M: its JSON type "object" cannot be asked for`},
		{"pattern", &struct {
			Code string `json:"code" jsonschema:"pattern=^[A-Z]+$"`
		}{}, `field Code: the keyword "pattern" is not one MCP forms have for a string`},
		{"nullable", &struct {
			N string `json:"n" jsonschema:"nullable"`
		}{}, "field N: a nullable or composite field cannot be asked for"},
		{"format", &struct {
			IP string `json:"ip" jsonschema:"format=ipv4"`
		}{}, `field IP: the format "ipv4" is not one MCP forms have (date, date-time, email, uri)`},
		{"free_list", &struct {
			L []string `json:"l"`
		}{}, "field L: a list is asked for only as a multiple choice"},
		{"empty", &struct{}{}, "it has no exported fields to ask for"},
		{"not_a_pointer", contactForm{}, "pass a non-nil pointer to a struct"},
		{"nil_pointer", (*contactForm)(nil), "pass a non-nil pointer to a struct"},
		{"pointer_to_int", new(int), "pass a non-nil pointer to a struct"},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a := &scriptedAsker{}
			_, err := otc.Elicit(otc.WithAsker(context.Background(), a), "Question?", tc.answer)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.True(t, strings.HasPrefix(err.Error(), "otc: elicit: "), err.Error())
			assert.Empty(t, a.asked, "nothing is asked with a form MCP cannot show")
		})
	}
	t.Run("empty_message", func(t *testing.T) {
		t.Parallel()
		_, err := otc.Elicit(otc.WithAsker(context.Background(), &scriptedAsker{}), " ", &contactForm{})
		assert.EqualError(t, err, "otc: elicit: the message is empty; say what the user is asked")
	})
}

func TestElicitAnswers(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		answer string
		action otc.ElicitAction
		want   string // error, or "" for none
	}{
		{"accept", `{"action":"accept","content":{"email":"a@example.com","seats":3,"tags":["a"],"extra":1}}`, otc.ElicitAccept, ""},
		{"cancel", `{"action":"cancel"}`, otc.ElicitCancel, ""},
		{"missing_required", `{"action":"accept","content":{"seats":3}}`, "", "does not fit the form: email"},
		{"wrong_type", `{"action":"accept","content":{"email":"a@example.com","seats":"3"}}`, "", "does not fit the form: seats"},
		{"out_of_range", `{"action":"accept","content":{"email":"a@example.com","seats":99}}`, "", "seats"},
		{"not_in_enum", `{"action":"accept","content":{"email":"a@example.com","plan":"gold"}}`, "", "plan"},
		{"content_not_object", `{"action":"accept","content":[1]}`, "", "its content is not a JSON object"},
		{"no_action", `{"content":{}}`, "", `its action "" is not accept, decline or cancel`},
		{"not_an_object", `12`, "", "it is not an ElicitResult object"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := otc.WithAsker(context.Background(), &scriptedAsker{answers: map[string]string{otc.MethodElicit: tc.answer}})
			var ans contactForm
			action, err := otc.Elicit(ctx, "How do we reach you?", &ans)
			if tc.want != "" {
				var iae *otc.InvalidAnswerError
				require.ErrorAs(t, err, &iae)
				assert.Contains(t, err.Error(), tc.want)
				assert.Equal(t, otc.MethodElicit, iae.Method)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.action, action)
			if action == otc.ElicitAccept {
				assert.Equal(t, contactForm{Email: "a@example.com", Seats: 3, Tags: []string{"a"}}, ans)
			}
		})
	}
}

func TestSampleAndRoots(t *testing.T) {
	t.Parallel()
	req := otc.SampleRequest{MaxTokens: 10, SystemPrompt: "Be brief.", Temperature: new(0.5),
		ModelPreferences: &otc.ModelPreferences{Hints: []otc.ModelHint{{Name: "sonnet"}}, SpeedPriority: new(0.8)},
		Messages:         []otc.SamplingMessage{{Role: "user", Content: otc.SamplingContent{Type: "text", Text: "Hi"}}}}
	t.Run("sample", func(t *testing.T) {
		t.Parallel()
		a := &scriptedAsker{answers: map[string]string{otc.MethodSample: `{"role":"assistant","content":{"type":"text","text":"Hello"},"model":"m","stopReason":"endTurn"}`}}
		res, err := otc.Sample(otc.WithAsker(context.Background(), a), req)
		require.NoError(t, err)
		assert.Equal(t, &otc.SampleResult{Role: "assistant", Content: otc.SamplingContent{Type: "text", Text: "Hello"}, Model: "m", StopReason: "endTurn"}, res)
		assert.JSONEq(t, `{"messages":[{"role":"user","content":{"type":"text","text":"Hi"}}],"systemPrompt":"Be brief.","maxTokens":10,
			"modelPreferences":{"hints":[{"name":"sonnet"}],"speedPriority":0.8},"temperature":0.5}`, string(a.asked[0].Params))
	})
	t.Run("sample_content_list", func(t *testing.T) {
		t.Parallel()
		a := &scriptedAsker{answers: map[string]string{otc.MethodSample: `{"role":"assistant","content":[{"type":"text","text":"A"},{"type":"text","text":"B"}],"model":"m"}`}}
		res, err := otc.Sample(otc.WithAsker(context.Background(), a), req)
		require.NoError(t, err)
		assert.Equal(t, "A", res.Content.Text)
	})
	for _, tc := range []struct{ name, answer, want string }{
		{"no_model", `{"role":"assistant","content":{"type":"text","text":"x"}}`, "it names no model"},
		{"bad_role", `{"role":"system","content":{"type":"text","text":"x"},"model":"m"}`, `its role "system" is not assistant or user`},
		{"bad_content", `{"role":"assistant","content":{"type":"video"},"model":"m"}`, `content type "video" is not text, image or audio`},
		{"image_without_data", `{"role":"assistant","content":{"type":"image"},"model":"m"}`, "image content needs its data and mimeType"},
	} {
		t.Run("sample_"+tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := otc.Sample(otc.WithAsker(context.Background(), &scriptedAsker{answers: map[string]string{otc.MethodSample: tc.answer}}), req)
			var iae *otc.InvalidAnswerError
			require.ErrorAs(t, err, &iae)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	for _, tc := range []struct {
		name string
		req  otc.SampleRequest
		want string
	}{
		{"no_messages", otc.SampleRequest{MaxTokens: 1}, "otc: sample: the request has no messages"},
		{"no_max_tokens", otc.SampleRequest{Messages: req.Messages}, "otc: sample: MaxTokens is 0"},
		{"bad_role", otc.SampleRequest{MaxTokens: 1, Messages: []otc.SamplingMessage{{Role: "system", Content: otc.SamplingContent{Type: "text"}}}}, `message 0 has role "system"`},
	} {
		t.Run("request_"+tc.name, func(t *testing.T) {
			t.Parallel()
			a := &scriptedAsker{}
			_, err := otc.Sample(otc.WithAsker(context.Background(), a), tc.req)
			assert.ErrorContains(t, err, tc.want)
			assert.Empty(t, a.asked)
		})
	}
	t.Run("roots", func(t *testing.T) {
		t.Parallel()
		a := &scriptedAsker{answers: map[string]string{otc.MethodListRoots: `{"roots":[{"uri":"file:///src","name":"Source"}]}`}}
		roots, err := otc.ListRoots(otc.WithAsker(context.Background(), a))
		require.NoError(t, err)
		assert.Equal(t, []otc.Root{{URI: "file:///src", Name: "Source"}}, roots)
		assert.JSONEq(t, `{}`, string(a.asked[0].Params))
	})
	t.Run("roots_invalid", func(t *testing.T) {
		t.Parallel()
		for answer, want := range map[string]string{`{}`: "it has no roots list", `{"roots":[{"name":"x"}]}`: "root 0 has no uri"} {
			_, err := otc.ListRoots(otc.WithAsker(context.Background(), &scriptedAsker{answers: map[string]string{otc.MethodListRoots: answer}}))
			assert.ErrorContains(t, err, want)
		}
	})
	t.Run("all_at_once", func(t *testing.T) {
		t.Parallel()
		a := &scriptedAsker{answers: map[string]string{
			otc.MethodElicit:    `{"action":"accept","content":{"email":"a@example.com"}}`,
			otc.MethodSample:    `{"role":"assistant","content":{"type":"text","text":"Hello"},"model":"m"}`,
			otc.MethodListRoots: `{"roots":[]}`,
		}}
		var ans contactForm
		e := &otc.Elicitation{Key: "contact", Message: "Contact?", Answer: &ans}
		s := &otc.Sampling{Request: req}
		r := &otc.RootsQuery{Key: "roots"}
		require.NoError(t, otc.AskAll(otc.WithAsker(context.Background(), a), e, s, r))
		require.Len(t, a.asked, 3, "one batch")
		assert.Equal(t, []string{"contact", "", "roots"}, []string{a.asked[0].Key, a.asked[1].Key, a.asked[2].Key})
		assert.Equal(t, otc.ElicitAccept, e.Action)
		assert.Equal(t, "a@example.com", ans.Email)
		assert.Equal(t, "Hello", s.Result.Content.Text)
		assert.Equal(t, []otc.Root{}, r.Roots)
	})
	t.Run("asker_error_passes_through", func(t *testing.T) {
		t.Parallel()
		want := &otc.InputRequiredError{Requests: map[string]otc.InputRequest{"q1": {Method: otc.MethodListRoots}}}
		_, err := otc.ListRoots(otc.WithAsker(context.Background(), &scriptedAsker{err: want}))
		assert.Same(t, want, err)
	})
}

func TestAskWithoutWireFormat(t *testing.T) {
	t.Parallel()
	_, err := otc.ListRoots(context.Background())
	assert.ErrorIs(t, err, otc.ErrInputUnsupported)
	// A direct call names no wire format that can ask.
	reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Files.Roots", Version: "1.0.0", Description: "Lists roots."},
		func(ctx context.Context, _ struct{}) (bool, error) {
			_, err := otc.ListRoots(ctx)
			return errors.Is(err, otc.ErrInputUnsupported), nil
		}))
	res, err := reg.Call(context.Background(), &otc.CallRequest{ToolID: "Files.Roots"})
	require.NoError(t, err)
	assert.JSONEq(t, `true`, string(res.Value))
}

// TestAskOverOTC asks over OTC's real wire: the call ends with a tool
// error naming the question, and the retry carries the answer in
// request.context.input_responses.
func TestAskOverOTC(t *testing.T) {
	t.Parallel()
	reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Shop.Refund", Version: "1.0.0", Description: "Refunds an order."},
		func(ctx context.Context, in struct {
			Order string `json:"order" jsonschema:"description=The order."`
		}) (string, error) {
			var ans struct {
				Confirm bool `json:"confirm" jsonschema:"required"`
			}
			if _, err := otc.Elicit(ctx, "Refund "+in.Order+"?", &ans); err != nil {
				return "", err
			}
			roots, err := otc.ListRoots(ctx)
			if err != nil {
				return "", err
			}
			if !ans.Confirm {
				return "kept", nil
			}
			return "refunded to " + roots[0].URI, nil
		}))
	srv := httptest.NewServer(otc.NewHandler(reg, nil))
	t.Cleanup(srv.Close)
	call := func(t *testing.T, context string) (int, map[string]any) {
		t.Helper()
		body := `{"request":{"tool_id":"Shop.Refund","input":{"order":"A-1"}` + context + `}}`
		resp, err := http.Post(srv.URL+"/call", "application/json", strings.NewReader(body))
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		var m map[string]any
		require.NoError(t, json.Unmarshal(b, &m), "%s", b)
		return resp.StatusCode, m
	}
	toolError := func(t *testing.T, m map[string]any) map[string]any {
		t.Helper()
		r := m["result"].(map[string]any)
		require.Equal(t, false, r["success"], "%v", m)
		return r["error"].(map[string]any)
	}

	status, m := call(t, "")
	require.Equal(t, http.StatusOK, status)
	e := toolError(t, m)
	assert.Equal(t, "Tool 'Shop_Refund' needs answers before it can go on:\n- q1: Refund A-1?", e["message"])
	assert.Equal(t, true, e["can_retry"])
	assert.Contains(t, e["developer_message"], "q1 (elicitation/create)")
	prompt := e["additional_prompt_content"].(string)
	assert.Contains(t, prompt, "call the tool again with the same input and every answer in the call context's input_responses")
	assert.Contains(t, prompt, `"q1":{"method":"elicitation/create","params":{"message":"Refund A-1?","requestedSchema":{"properties":{"confirm":{"type":"boolean"}},"type":"object","required":["confirm"]}}`)

	// The first answer brings the second question.
	accept := `"q1":{"action":"accept","content":{"confirm":true}}`
	status, m = call(t, `,"context":{"input_responses":{`+accept+`}}`)
	require.Equal(t, http.StatusOK, status)
	e = toolError(t, m)
	assert.Equal(t, "Tool 'Shop_Refund' needs answers before it can go on:\n- q2: the client's roots (roots/list)", e["message"])

	status, m = call(t, `,"context":{"input_responses":{`+accept+`,"q2":{"roots":[{"uri":"file:///a"}]}}}`)
	require.Equal(t, http.StatusOK, status)
	r := m["result"].(map[string]any)
	assert.Equal(t, true, r["success"], "%v", m)
	assert.Equal(t, "refunded to file:///a", r["value"])

	t.Run("answer_that_does_not_fit", func(t *testing.T) {
		t.Parallel()
		status, m := call(t, `,"context":{"input_responses":{"q1":{"action":"accept","content":{}}}}`)
		require.Equal(t, http.StatusOK, status)
		e := toolError(t, m)
		assert.Equal(t, `Tool 'Shop_Refund' could not use an answer it asked for: the answer to elicitation/create is invalid: its content does not fit the form: confirm: Is required`, e["message"])
		assert.Equal(t, true, e["can_retry"])
	})
	for name, context := range map[string]string{
		"responses_not_object": `,"context":{"input_responses":[1]}`,
		"response_not_object":  `,"context":{"input_responses":{"q1":true}}`,
		"response_repeated":    `,"context":{"input_responses":{"q1":{},"q1":{}}}`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			status, m := call(t, context)
			assert.Equal(t, http.StatusBadRequest, status, "%v", m)
			assert.Contains(t, m["message"], "input_responses")
		})
	}
}

// TestAskOverOTCTooManyAnswers: the answers a call carries are bounded.
func TestAskOverOTCTooManyAnswers(t *testing.T) {
	t.Parallel()
	reg := otc.NewRegistry(&otc.RegistryOptions{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, otc.Register(reg, otc.Tool{ID: "Shop.Noop", Version: "1.0.0", Description: "Does nothing."},
		func(context.Context, struct{}) (bool, error) { return true, nil }))
	srv := httptest.NewServer(otc.NewHandler(reg, nil))
	t.Cleanup(srv.Close)
	var answers []string
	for i := range 65 {
		answers = append(answers, fmt.Sprintf(`"k%d":{}`, i))
	}
	body := `{"request":{"tool_id":"Shop.Noop","context":{"input_responses":{` + strings.Join(answers, ",") + `}}}}`
	resp, err := http.Post(srv.URL+"/call", "application/json", strings.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Contains(t, string(b), "request.context.input_responses holds 65 answers, more than the 64 a call may carry")
}
