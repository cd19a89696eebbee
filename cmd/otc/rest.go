package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/client"
)

// restServer talks to the REST view of a tool registry: GET /tools, GET
// /tools/{name}, POST /tools/{name}:invoke.
type restServer struct {
	base   string // without a trailing slash
	apiKey string
	bearer string
	http   *http.Client
}

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
	} `json:"details"`
}

// do sends a request and decodes a JSON answer into out; a REST error
// answer is returned as *restError.
func (s *restServer) do(ctx context.Context, method, path string, body any, requestID string, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.base+path, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if requestID != "" {
		req.Header.Set("X-Request-Id", requestID)
	}
	setCredentials(req.Header, s.apiKey, s.bearer)
	resp, err := s.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxMCPAnswer))
	if err != nil {
		return err
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		return fmt.Errorf("%s %s: not a REST tool API answer: status %d, Content-Type %q", method, s.base+path, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var failed struct {
		OK    *bool      `json:"ok"`
		Error *restError `json:"error"`
	}
	if json.Unmarshal(raw, &failed) == nil && failed.OK != nil && !*failed.OK && failed.Error != nil {
		return failed.Error
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: status %d without a REST error", method, s.base+path, resp.StatusCode)
	}
	return json.Unmarshal(raw, out)
}

func (e *restError) Error() string { return e.Message + " (" + e.Code + ")" }

// asCallError turns a REST error into what the other protocols give: a
// tool error, or an *otc.Error with the right class.
func (e *restError) asCallError() (*otc.ToolError, error) {
	switch e.Code {
	case "tool.execution_error", "tool.handler_error":
		return &otc.ToolError{Message: e.Message, DeveloperMessage: e.Details.DeveloperMessage, CanRetry: e.Retryable,
			AdditionalPromptContent: e.Details.AdditionalPromptContent, RetryAfter: time.Duration(e.Details.RetryAfterMS) * time.Millisecond}, nil
	case "tool.invalid_args":
		return nil, &otc.Error{Code: otc.CodeInvalidInput, Message: e.Message, ParameterErrors: e.Details.ParameterErrors}
	case "request.unauthenticated":
		return nil, &otc.Error{Code: otc.CodeUnauthenticated, Message: e.Message}
	}
	return nil, &otc.Error{Code: otc.CodeServerError, Message: e.Message, DeveloperMessage: e.Details.DeveloperMessage, MissingRequirements: e.Details.MissingRequirements}
}

// restFailure maps an error of do for commands that do not call.
func restFailure(err error) error {
	var re *restError
	if errors.As(err, &re) {
		_, cerr := re.asCallError()
		return cerr
	}
	return err
}

func (s *restServer) list(ctx context.Context) ([]otc.ToolDefinition, error) {
	var entries []struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	}
	if err := s.do(ctx, http.MethodGet, "/tools", nil, "", &entries); err != nil {
		return nil, restFailure(err)
	}
	defs := make([]otc.ToolDefinition, len(entries))
	for i, en := range entries {
		defs[i] = otc.ToolDefinition{ID: en.Name, Name: en.Name, Description: en.Description}
	}
	return defs, nil
}

func (s *restServer) describe(ctx context.Context, tool string) (otc.ToolDefinition, bool, error) {
	var d struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Version     string          `json:"version"`
		Parameters  json.RawMessage `json:"parameters"`
	}
	err := s.do(ctx, http.MethodGet, "/tools/"+url.PathEscape(tool), nil, "", &d)
	var re *restError
	switch {
	case errors.As(err, &re) && re.Code == "tool.not_found":
		return otc.ToolDefinition{}, false, nil
	case err != nil:
		return otc.ToolDefinition{}, false, restFailure(err)
	}
	id := d.Name
	if d.Version != "" {
		id += "@" + d.Version
	}
	return otc.ToolDefinition{ID: id, Name: d.Name, Description: d.Description, Version: d.Version,
		InputSchema: otc.InputSchema{Parameters: d.Parameters}}, true, nil
}

func (s *restServer) call(ctx context.Context, tool string, input json.RawMessage, opts *client.CallOptions) (json.RawMessage, string, *otc.ToolError, error) {
	callID := opts.CallID
	if callID == "" {
		callID = otc.NewCallID()
	}
	body := map[string]any{"schema_version": "0.1.0", "args": input}
	if len(opts.Secrets) > 0 || opts.UserID != "" {
		body["context"] = otc.CallContext{Secrets: opts.Secrets, UserID: opts.UserID}
	}
	var res struct {
		Result json.RawMessage `json:"result"`
	}
	err := s.do(ctx, http.MethodPost, "/tools/"+url.PathEscape(tool)+":invoke", body, callID, &res)
	var re *restError
	switch {
	case errors.As(err, &re):
		te, cerr := re.asCallError()
		return nil, callID, te, cerr
	case err != nil:
		return nil, callID, nil, err
	}
	return res.Result, callID, nil, nil
}
