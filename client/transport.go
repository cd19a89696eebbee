package client

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/otcgo/otc"
)

// Format is a wire format a tool server speaks.
type Format string

// The formats a [Client] speaks.
const (
	// FormatOTC is the Open Tool Calling protocol 1.0 (OXP): GET /tools,
	// POST /tools/call and GET /health below a base URL.
	FormatOTC Format = "otc"
	// FormatMCP is the Model Context Protocol over Streamable HTTP, or
	// over stdio with [NewStdio].
	FormatMCP Format = "mcp"
	// FormatREST is the REST view of a tool registry: GET /tools,
	// GET /tools/{name} and POST /tools/{name}:invoke.
	FormatREST Format = "rest"
	// FormatA2A is an Agent2Agent agent (A2A 1.0 or 0.3 over JSON-RPC),
	// whose skills are its tools.
	FormatA2A Format = "a2a"
)

// Check reports whether f is a format the client speaks (or empty, which
// New takes for FormatOTC and Dial finds): an error naming the formats
// otherwise.
func (f Format) Check() error {
	switch f {
	case "", FormatOTC, FormatMCP, FormatREST, FormatA2A:
		return nil
	}
	return fmt.Errorf("%q is not one of otc, mcp, rest and a2a", string(f))
}

// Path is where an otc server (mount.All, otc gateway) serves f below its
// root: "/otc", "/mcp", "/v1" or "/a2a"; "" for a format the client does
// not speak.
func (f Format) Path() string {
	switch f {
	case FormatOTC:
		return pathOTC
	case FormatMCP:
		return pathMCP
	case FormatREST:
		return pathREST
	case FormatA2A:
		return pathA2A
	}
	return ""
}

// Title names f as people write it in a sentence, with its article: "an
// OTC", "an MCP", "a REST", "an A2A".
func (f Format) Title() string {
	switch f {
	case FormatOTC:
		return "an OTC"
	case FormatMCP:
		return "an MCP"
	case FormatREST:
		return "a REST"
	case FormatA2A:
		return "an A2A"
	}
	return "a " + string(f)
}

// transport is one wire format's way of doing what a Client does.
type transport interface {
	list(ctx context.Context) ([]otc.ToolDefinition, error)
	// call makes one attempt of a call. A tool error comes back as an
	// *otc.ToolError with the Result; errors are not yet prefixed with
	// "otc client: call X".
	call(ctx context.Context, k *call) (*Result, error)
	health(ctx context.Context) error
	close() error
}

// Handlers answer what a server asks while a call runs: an MCP server's
// elicitation/create, sampling/createMessage and roots/list requests (on
// the call's stream, on the stdio pipe, or in a 2026-07-28 input_required
// round), and an A2A agent's questions (a task in state INPUT_REQUIRED,
// answered through Elicit). Each nil handler leaves its capability
// undeclared, and a server that asks anyway is told the client cannot.
type Handlers struct {
	// Elicit answers a question for the user: a form to fill in
	// (RequestedSchema), or a URL to visit (Mode "url").
	Elicit func(ctx context.Context, req *ElicitRequest) (*ElicitResult, error)
	// Sample answers a request for a completion from the caller's model.
	// params and the result are MCP's CreateMessageRequest params and
	// CreateMessageResult.
	Sample func(ctx context.Context, params json.RawMessage) (json.RawMessage, error)
	// Roots lists the client's roots (MCP's roots/list).
	Roots func(ctx context.Context) ([]otc.Root, error)
}

// ElicitRequest is a question a server puts to the user.
type ElicitRequest struct {
	// Message is the question.
	Message string `json:"message"`
	// Mode is "form" (or empty) for a form, "url" for a URL to visit.
	Mode string `json:"mode,omitempty"`
	// RequestedSchema is the form: a JSON Schema object of flat
	// properties. Empty in URL mode, and for an A2A agent's question,
	// which is free text.
	RequestedSchema json.RawMessage `json:"requestedSchema,omitempty"`
	// URL is the URL to visit, in URL mode.
	URL string `json:"url,omitempty"`
	// ElicitationID names a URL-mode request.
	ElicitationID string `json:"elicitationId,omitempty"`
}

// ElicitResult is the user's answer to an [ElicitRequest].
type ElicitResult struct {
	// Action is otc.ElicitAccept, otc.ElicitDecline or otc.ElicitCancel.
	Action otc.ElicitAction `json:"action"`
	// Content holds the form's values, when accepted. For an A2A agent's
	// question, the "text" member is sent as the reply's text and the
	// rest as its data.
	Content map[string]any `json:"content,omitempty"`
}

// Progress is a report of a call's progress: an MCP progress
// notification, or an A2A task's status update.
type Progress struct {
	// Progress is how far the call has come, and Total the end, when the
	// server knows it (zero otherwise).
	Progress, Total float64
	// Message says what the call is doing.
	Message string
	// TaskID names the server's task, when the call runs as one, and
	// State is its state ("working", "input_required", …).
	TaskID, State string
}
