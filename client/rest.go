package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/otcgo/otc"
)

// restMaxTools bounds how many tools a REST view's catalog may list: the
// client reads each one's schema with a request of its own.
const restMaxTools = 1000

// restWire is the transport of a tool registry's REST view: GET /tools,
// GET /tools/{name} and POST /tools/{name}:invoke below the base URL.
type restWire struct{ c *Client }

// restError is the error object of a REST answer.
type restError struct {
	Code      string `json:"code"`
	Message   string `json:"message"`
	Retryable bool   `json:"retryable"`
	Details   struct {
		DeveloperMessage        string                   `json:"developer_message"`
		AdditionalPromptContent string                   `json:"additional_prompt_content"`
		RetryAfterMS            int64                    `json:"retry_after_ms"`
		ParameterErrors         map[string]string        `json:"parameter_errors"`
		MissingRequirements     *otc.MissingRequirements `json:"missing_requirements"`
		Reason                  string                   `json:"reason"`
		RequiredScopes          []string                 `json:"required_scopes"`
	} `json:"details"`
}

// The REST view's error codes the client maps, as the rest package
// names them.
var restCodes = map[string]otc.Code{
	"tool.invalid_args":        otc.CodeInvalidInput,
	"request.unauthenticated":  otc.CodeUnauthenticated,
	"request.forbidden":        otc.CodeForbidden,
	"request.too_large":        otc.CodeTooLarge,
	"request.unavailable":      otc.CodeUnavailable,
	"request.rate_limited":     otc.CodeRateLimited,
	"request.timeout":          otc.CodeRequestTimeout,
	"tool.not_found":           otc.CodeServerError,
	"tool.missing_requirement": otc.CodeServerError,
}

// asError turns a REST error into what the other formats give: a tool
// error, or an *otc.Error of its class.
func (e *restError) asError(r *response) error {
	after := retryMS(e.Details.RetryAfterMS)
	if e.Message == "" {
		e.Message = "the server gave no message (" + truncate(e.Code, 64) + ")"
	}
	switch e.Code {
	case "tool.execution_error", "tool.handler_error":
		return &otc.ToolError{Message: e.Message, DeveloperMessage: e.Details.DeveloperMessage, CanRetry: e.Retryable,
			AdditionalPromptContent: e.Details.AdditionalPromptContent, RetryAfter: after}
	}
	code, ok := restCodes[e.Code]
	if !ok {
		code = otc.CodeServerError
	}
	oe := &otc.Error{Code: code, Message: e.Message, DeveloperMessage: e.Details.DeveloperMessage, ParameterErrors: e.Details.ParameterErrors,
		MissingRequirements: e.Details.MissingRequirements, Reason: e.Details.Reason, RequiredScopes: e.Details.RequiredScopes}
	if retryable(code) {
		oe.RetryAfter = max(after, r.retryAfter)
	}
	if e.Code == "tool.not_found" {
		return notFound{r.withStatus(oe)}
	}
	return r.withStatus(oe)
}

// notFound is a REST view's answer that it has no such tool.
type notFound struct{ error }

func (e notFound) Unwrap() error { return e.error }

// do sends a request and decodes a JSON answer into out.
func (w *restWire) do(ctx context.Context, k *call, method, path string, body any, requestID string, out any) error {
	var b []byte
	if body != nil {
		var err error
		if b, err = json.Marshal(body); err != nil {
			return err
		}
	}
	r, err := w.c.sendWith(ctx, method, w.c.base+path, b, k.header(), func(h http.Header) {
		if requestID != "" {
			h.Set("X-Request-Id", requestID)
		}
	})
	if err != nil {
		return err
	}
	var failed struct {
		OK    *bool      `json:"ok"`
		Error *restError `json:"error"`
	}
	if strings.HasPrefix(r.contentType, "application/json") && json.Unmarshal(r.body, &failed) == nil && failed.OK != nil && !*failed.OK && failed.Error != nil {
		return failed.Error.asError(r)
	}
	if r.status != http.StatusOK {
		return r.failure()
	}
	if err := json.Unmarshal(r.body, out); err != nil {
		return r.unexpected(fmt.Errorf("not a REST tool API answer: %w", err))
	}
	return nil
}

// list reads the catalog, then each tool's definition for its schema.
func (w *restWire) list(ctx context.Context) ([]otc.ToolDefinition, error) {
	var entries []struct {
		Name string `json:"name"`
	}
	if err := w.do(ctx, nil, http.MethodGet, "/tools", nil, "", &entries); err != nil {
		return nil, fmt.Errorf("otc client: list tools: %w", err)
	}
	if len(entries) > restMaxTools {
		return nil, fmt.Errorf("otc client: list tools: the REST view lists %d tools, over the client's bound of %d", len(entries), restMaxTools)
	}
	defs := make([]otc.ToolDefinition, 0, len(entries))
	for _, en := range entries {
		var d struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Version     string          `json:"version"`
			Parameters  json.RawMessage `json:"parameters"`
		}
		err := w.do(ctx, nil, http.MethodGet, "/tools/"+url.PathEscape(en.Name), nil, "", &d)
		if _, ok := errors.AsType[notFound](err); ok {
			continue // removed since the catalog was read
		}
		if err != nil {
			return nil, fmt.Errorf("otc client: list tools: %w", err)
		}
		defs = append(defs, otc.ToolDefinition{ID: d.Name, Name: d.Name, Description: d.Description, Version: d.Version,
			InputSchema: otc.InputSchema{Parameters: d.Parameters}})
	}
	return defs, nil
}

func (w *restWire) health(ctx context.Context) error {
	var entries []json.RawMessage
	if err := w.do(ctx, nil, http.MethodGet, "/tools", nil, "", &entries); err != nil {
		return fmt.Errorf("otc client: health: %w", err)
	}
	return nil
}

func (w *restWire) close() error { return nil }

// call invokes the tool, with the call id as the request id.
func (w *restWire) call(ctx context.Context, k *call) (*Result, error) {
	args := k.input
	if args == nil {
		args = json.RawMessage(`{}`)
	}
	body := map[string]any{"schema_version": "0.1.0", "args": args}
	if o := k.opts; o.UserID != "" || len(o.Secrets) > 0 || len(o.Authorization) > 0 {
		body["context"] = otc.CallContext{UserID: o.UserID, Secrets: o.Secrets, Authorization: o.Authorization}
	}
	var res struct {
		Result json.RawMessage `json:"result"`
	}
	err := w.do(ctx, k, http.MethodPost, "/tools/"+url.PathEscape(k.toolID)+":invoke", body, k.opts.CallID, &res)
	out := &Result{CallID: k.opts.CallID}
	if te, ok := errors.AsType[*otc.ToolError](err); ok {
		return out, te
	}
	if err != nil {
		return nil, err
	}
	if len(res.Result) > 0 && string(res.Result) != "null" {
		out.Value = res.Result
	}
	return out, nil
}
