package otc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/otcgo/otc/internal/validate"
)

// This file is the typed API a tool function asks its caller with:
// [Elicit], [Sample], [ListRoots], and [AskAll] for several questions at
// once. Each builds the MCP request of its question, puts it through
// [Ask], and checks and decodes the answer.

// ElicitAction is what the user did with an elicitation.
type ElicitAction string

// The actions of an elicitation's answer, as MCP names them.
const (
	// ElicitAccept: the user answered; the answer is decoded.
	ElicitAccept ElicitAction = "accept"
	// ElicitDecline: the user explicitly refused to answer.
	ElicitDecline ElicitAction = "decline"
	// ElicitCancel: the user dismissed the question without choosing.
	ElicitCancel ElicitAction = "cancel"
)

// A Question is one of the questions [AskAll] puts to the caller at once:
// an [*Elicitation], a [*Sampling] or a [*RootsQuery]. Other packages
// cannot implement it.
type Question interface {
	inputRequest() (InputRequest, error)
	settle(answer json.RawMessage) error
}

// Elicitation asks the user to fill in a form (MCP's elicitation/create).
// The form is reflected from the type Answer points to, a struct of
// fields MCP can ask for: strings (with a format of date, date-time,
// email or uri, an enum, a minimum and maximum length), numbers and
// integers (with a minimum and maximum), booleans, and slices of strings
// with an enum (a multiple choice). The jsonschema struct tags are those
// of a tool's input: title, description, default, enum, required and the
// bounds. Nested objects, maps, patterns and nullable fields are refused
// with an error naming the field, since MCP cannot ask for them.
type Elicitation struct {
	// Key names the question where answers come back by name; empty lets
	// the wire format name it (see [InputRequest.Key]).
	Key string
	// Message is the question shown to the user. Required.
	Message string
	// Answer points to the struct the answer is decoded into when the user
	// accepts. Required.
	Answer any

	// Action is what the user did, set by AskAll.
	Action ElicitAction
}

func (e *Elicitation) inputRequest() (InputRequest, error) {
	if strings.TrimSpace(e.Message) == "" {
		return InputRequest{}, errors.New("otc: elicit: the message is empty; say what the user is asked")
	}
	f, err := elicitFormOf(e.Answer)
	if err != nil {
		return InputRequest{}, err
	}
	params, err := json.Marshal(struct {
		Message         string          `json:"message"`
		RequestedSchema json.RawMessage `json:"requestedSchema"`
	}{e.Message, f.schema})
	if err != nil {
		return InputRequest{}, fmt.Errorf("otc: elicit: %w", err)
	}
	return InputRequest{Method: MethodElicit, Params: params, Key: e.Key}, nil
}

func (e *Elicitation) settle(raw json.RawMessage) error {
	var res struct {
		Action  ElicitAction    `json:"action"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return answerError(MethodElicit, e.Key, "it is not an ElicitResult object: "+err.Error())
	}
	switch res.Action {
	case ElicitAccept:
	case ElicitDecline, ElicitCancel:
		e.Action = res.Action
		return nil
	default:
		return answerError(MethodElicit, e.Key, fmt.Sprintf("its action %q is not accept, decline or cancel", res.Action))
	}
	f, _ := elicitFormOf(e.Answer) // inputRequest reflected it already
	if reason := f.decode(res.Content, e.Answer); reason != "" {
		return answerError(MethodElicit, e.Key, reason)
	}
	e.Action = ElicitAccept
	return nil
}

// Elicit asks the user to fill in the form reflected from answer, a
// pointer to a struct (see [Elicitation] for the fields it may have), with
// message as the question. It returns what the user did; on
// [ElicitAccept], answer holds the answer, checked against the form.
//
// Over MCP 2026-07-28 the call ends with an input_required result, and
// the function runs again when the answer comes: Elicit then returns an
// error wrapping [*InputRequiredError], which the function must return.
// When the caller cannot answer (it declared no elicitation capability,
// or the call is not served by a wire format that can ask) the error
// wraps [ErrInputUnsupported], and the function may go on without the
// answer. An answer that does not fit the form is an [*InvalidAnswerError].
func Elicit(ctx context.Context, message string, answer any) (ElicitAction, error) {
	q := &Elicitation{Message: message, Answer: answer}
	if err := AskAll(ctx, q); err != nil {
		return "", err
	}
	return q.Action, nil
}

// SampleRequest is what a tool asks of the client's model (MCP's
// sampling/createMessage). The JSON names are MCP's.
type SampleRequest struct {
	// Key names the question where answers come back by name; empty lets
	// the wire format name it (see [InputRequest.Key]).
	Key string `json:"-"`
	// Messages is the conversation to continue. Required.
	Messages []SamplingMessage `json:"messages"`
	// SystemPrompt is the system prompt the server would like used; the
	// client may change or ignore it.
	SystemPrompt string `json:"systemPrompt,omitempty"`
	// MaxTokens bounds the completion. Required: more than zero.
	MaxTokens int `json:"maxTokens"`
	// ModelPreferences says which model the server would like; nil for
	// no preference.
	ModelPreferences *ModelPreferences `json:"modelPreferences,omitempty"`
	// Temperature is the sampling temperature; nil leaves it to the client.
	Temperature *float64 `json:"temperature,omitempty"`
	// StopSequences end the completion where they appear.
	StopSequences []string `json:"stopSequences,omitempty"`
	// IncludeContext is "none" or empty; MCP deprecates the other values.
	IncludeContext string `json:"includeContext,omitempty"`
	// Metadata is passed to the model's provider as it is.
	Metadata map[string]any `json:"metadata,omitempty"`
}

// SamplingMessage is one message of a sampling conversation.
type SamplingMessage struct {
	Role    string          `json:"role"` // "user" or "assistant"
	Content SamplingContent `json:"content"`
}

// SamplingContent is the content of a sampling message: text, or an image
// or audio clip as base64 data with its MIME type.
type SamplingContent struct {
	Type     string `json:"type"` // "text", "image" or "audio"
	Text     string `json:"text,omitempty"`
	Data     string `json:"data,omitempty"`
	MimeType string `json:"mimeType,omitempty"`
}

// ModelPreferences are the server's wishes for the model the client picks.
// The priorities run from 0 to 1; nil says nothing.
type ModelPreferences struct {
	Hints                []ModelHint `json:"hints,omitempty"`
	CostPriority         *float64    `json:"costPriority,omitempty"`
	SpeedPriority        *float64    `json:"speedPriority,omitempty"`
	IntelligencePriority *float64    `json:"intelligencePriority,omitempty"`
}

// ModelHint names a model, or part of a name ("sonnet"), the server would
// like.
type ModelHint struct {
	Name string `json:"name,omitempty"`
}

// SampleResult is the client model's answer to a [SampleRequest].
type SampleResult struct {
	Role       string          `json:"role"`
	Content    SamplingContent `json:"content"`
	Model      string          `json:"model"`
	StopReason string          `json:"stopReason,omitempty"` // "endTurn", "stopSequence", "maxTokens", or another
}

// Sampling is a [SampleRequest] as one of the questions of [AskAll].
type Sampling struct {
	Request SampleRequest
	// Result is the answer, set by AskAll.
	Result *SampleResult
}

func (s *Sampling) inputRequest() (InputRequest, error) {
	r := &s.Request
	switch {
	case len(r.Messages) == 0:
		return InputRequest{}, errors.New("otc: sample: the request has no messages; give the conversation to continue")
	case r.MaxTokens <= 0:
		return InputRequest{}, fmt.Errorf("otc: sample: MaxTokens is %d; set the most tokens the completion may take", r.MaxTokens)
	}
	for i, m := range r.Messages {
		if m.Role != "user" && m.Role != "assistant" {
			return InputRequest{}, fmt.Errorf("otc: sample: message %d has role %q; use \"user\" or \"assistant\"", i, m.Role)
		}
		if err := checkSamplingContent(m.Content); err != nil {
			return InputRequest{}, fmt.Errorf("otc: sample: message %d: %w", i, err)
		}
	}
	params, err := json.Marshal(r)
	if err != nil {
		return InputRequest{}, fmt.Errorf("otc: sample: %w", err)
	}
	return InputRequest{Method: MethodSample, Params: params, Key: r.Key}, nil
}

func (s *Sampling) settle(raw json.RawMessage) error {
	var res struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		Model      *string         `json:"model"`
		StopReason string          `json:"stopReason"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return answerError(MethodSample, s.Request.Key, "it is not a CreateMessageResult object: "+err.Error())
	}
	out := &SampleResult{Role: res.Role, StopReason: res.StopReason}
	switch {
	case res.Role != "assistant" && res.Role != "user":
		return answerError(MethodSample, s.Request.Key, fmt.Sprintf("its role %q is not assistant or user", res.Role))
	case res.Model == nil:
		return answerError(MethodSample, s.Request.Key, "it names no model")
	case len(res.Content) == 0:
		return answerError(MethodSample, s.Request.Key, "it has no content")
	}
	out.Model = *res.Model
	content := res.Content
	if content[0] == '[' { // 2025-11-25 allows a list of blocks; the first is the answer
		var blocks []json.RawMessage
		if err := json.Unmarshal(content, &blocks); err != nil || len(blocks) == 0 {
			return answerError(MethodSample, s.Request.Key, "its content is an empty or malformed list")
		}
		content = blocks[0]
	}
	if err := json.Unmarshal(content, &out.Content); err != nil {
		return answerError(MethodSample, s.Request.Key, "its content is not a content block: "+err.Error())
	}
	if err := checkSamplingContent(out.Content); err != nil {
		return answerError(MethodSample, s.Request.Key, err.Error())
	}
	s.Result = out
	return nil
}

func checkSamplingContent(c SamplingContent) error {
	switch c.Type {
	case "text":
		return nil
	case "image", "audio":
		if c.Data == "" || c.MimeType == "" {
			return fmt.Errorf("%s content needs its data and mimeType", c.Type)
		}
		return nil
	}
	return fmt.Errorf("content type %q is not text, image or audio", c.Type)
}

// Sample asks the client's model for a completion of req.Messages and
// returns its answer. The errors are those of [Elicit]: an
// [*InputRequiredError] to return, [ErrInputUnsupported] when the caller
// has no model to offer, an [*InvalidAnswerError] for a malformed answer.
func Sample(ctx context.Context, req SampleRequest) (*SampleResult, error) {
	q := &Sampling{Request: req}
	if err := AskAll(ctx, q); err != nil {
		return nil, err
	}
	return q.Result, nil
}

// Root is a directory or file the client lets the server work on.
type Root struct {
	URI  string `json:"uri"` // a file:// URI
	Name string `json:"name,omitempty"`
}

// RootsQuery asks for the client's roots (MCP's roots/list) as one of the
// questions of [AskAll].
type RootsQuery struct {
	// Key names the question where answers come back by name; empty lets
	// the wire format name it (see [InputRequest.Key]).
	Key string
	// Roots is the answer, set by AskAll.
	Roots []Root
}

func (q *RootsQuery) inputRequest() (InputRequest, error) {
	return InputRequest{Method: MethodListRoots, Params: json.RawMessage(`{}`), Key: q.Key}, nil
}

func (q *RootsQuery) settle(raw json.RawMessage) error {
	var res struct {
		Roots *[]Root `json:"roots"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return answerError(MethodListRoots, q.Key, "it is not a ListRootsResult object: "+err.Error())
	}
	if res.Roots == nil {
		return answerError(MethodListRoots, q.Key, "it has no roots list")
	}
	for i, r := range *res.Roots {
		if r.URI == "" {
			return answerError(MethodListRoots, q.Key, fmt.Sprintf("root %d has no uri", i))
		}
	}
	q.Roots = *res.Roots
	return nil
}

// ListRoots asks the client for its roots, the directories and files the
// server may work on. The errors are those of [Elicit].
func ListRoots(ctx context.Context) ([]Root, error) {
	q := &RootsQuery{}
	if err := AskAll(ctx, q); err != nil {
		return nil, err
	}
	return q.Roots, nil
}

// AskAll puts several questions to the caller at once, so that a wire
// format that goes back and forth (MCP 2026-07-28, OTC) needs a single
// round for all of them, and fills in each question's answer. The errors
// are those of [Elicit]; the questions are then left unanswered.
func AskAll(ctx context.Context, qs ...Question) error {
	if len(qs) == 0 {
		return nil
	}
	reqs := make([]InputRequest, len(qs))
	for i, q := range qs {
		if q == nil || reflect.ValueOf(q).IsNil() {
			return fmt.Errorf("otc: ask: question %d is nil", i)
		}
		r, err := q.inputRequest()
		if err != nil {
			return err
		}
		reqs[i] = r
	}
	answers, err := Ask(ctx, reqs...)
	if err != nil {
		return err
	}
	if len(answers) != len(qs) {
		return fmt.Errorf("otc: ask: the wire format answered %d of %d questions", len(answers), len(qs))
	}
	for i, q := range qs {
		if err := q.settle(answers[i]); err != nil {
			return err
		}
	}
	return nil
}

// InvalidAnswerError reports an answer of the caller that is not what its
// question asked for: an elicitation's content that does not fit the
// form, a sampling result without a model. Adapters refuse the answer with
// it (MCP: a JSON-RPC invalid-params error).
type InvalidAnswerError struct {
	Method string // the question's method
	Key    string // the question's key, when it was given one
	Reason string // what is wrong with the answer
}

func (e *InvalidAnswerError) Error() string {
	q := e.Method
	if e.Key != "" {
		q = fmt.Sprintf("%q (%s)", e.Key, e.Method)
	}
	return "the answer to " + q + " is invalid: " + e.Reason
}

func answerError(method, key, reason string) error {
	return &InvalidAnswerError{Method: method, Key: key, Reason: reason}
}

// checkAnswer checks an answer against its question as it travels (its
// method and params), for an adapter that takes the answer where the Go
// question is not at hand (a task's answer may reach any replica): the
// checks of [Elicitation], [Sampling] and [RootsQuery], the form of an
// elicitation read from its requestedSchema. It returns what is wrong
// with the answer, or "".
func checkAnswer(method string, params, raw json.RawMessage) string {
	var err error
	switch method {
	case MethodSample:
		err = (&Sampling{}).settle(raw)
	case MethodListRoots:
		err = (&RootsQuery{}).settle(raw)
	case MethodElicit:
		var res struct {
			Action  ElicitAction    `json:"action"`
			Content json.RawMessage `json:"content"`
		}
		if err := json.Unmarshal(raw, &res); err != nil {
			return "it is not an ElicitResult object: " + err.Error()
		}
		switch res.Action {
		case ElicitDecline, ElicitCancel:
			return ""
		case ElicitAccept:
		default:
			return fmt.Sprintf("its action %q is not accept, decline or cancel", res.Action)
		}
		var q struct {
			Schema json.RawMessage `json:"requestedSchema"`
		}
		if json.Unmarshal(params, &q) != nil || len(q.Schema) == 0 {
			return "" // a URL elicitation: nothing to fill in
		}
		v, err := validate.Compile(q.Schema)
		if err != nil {
			return "" // the server's own question; its form cannot be checked here
		}
		content := res.Content
		if len(content) == 0 || string(content) == "null" {
			content = json.RawMessage(`{}`)
		}
		return formProblem(v, content)
	default:
		return ""
	}
	if iae, ok := errors.AsType[*InvalidAnswerError](err); ok {
		return iae.Reason
	}
	return ""
}
