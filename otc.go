// Package otc serves ordinary typed Go functions as tools over the Open Tool
// Calling protocol 1.0 (OTC, renamed OXP in 2025 with the same wire format),
// so that LLM agents can list and call them over HTTP.
//
// Register functions on a [Registry], then mount a [Handler] on any mux:
//
//	type AddInput struct {
//		A float64 `json:"a" jsonschema:"description=The first number to add."`
//		B float64 `json:"b" jsonschema:"description=The second number to add."`
//	}
//
//	reg := otc.NewRegistry(nil)
//	err := otc.Register(reg, otc.Tool{
//		ID:          "Calculator.Add",
//		Version:     "1.0.0",
//		Description: "Adds two numbers together.",
//	}, func(ctx context.Context, in AddInput) (float64, error) {
//		return in.A + in.B, nil
//	})
//	if err != nil {
//		log.Fatal(err)
//	}
//	mux := http.NewServeMux()
//	mux.Handle("/otc/", http.StripPrefix("/otc", otc.NewHandler(reg, nil)))
//
// The handler then answers GET /otc/tools (the catalog), POST /otc/tools/call
// and its alias POST /otc/call (calls), and GET /otc/health.
//
// # Schemas
//
// [Register] reflects the input and output JSON Schemas from the function's
// types once, when the tool is registered, and compiles the input validator
// at the same time; a call only validates and decodes. Struct tags shape the
// schema: `json` names a parameter and `omitempty` makes it optional, and
// `jsonschema` adds descriptions, enums, bounds, patterns, defaults and
// formats. Every top-level parameter must carry a description, because the
// model reading the catalog has nothing else to go on. The schema is the
// contract the model reads, so Register refuses a tag the reflector would
// drop or misread, and the call path keeps the schema's promises: an
// optional parameter sent as null is "not given" (unless
// [RegistryOptions].StrictNulls), a default reaches the function for a
// parameter left out, at any depth, and a value the schema accepts but the
// Go type cannot decode is refused under its path. [Tool.InputSchema]
// replaces the reflected input schema with a hand-written one, which may
// share definitions through "$defs" and local "$ref"s as JSON Schema
// 2020-12 does. The catalog carries schemas inline, so the registry
// replaces each reference by what it points to, and keeps the original in
// [ToolDefinition.FullInputSchema] for wire formats that carry 2020-12 in
// full.
//
// # Versions
//
// A tool is identified by Toolkit.Tool plus an x.y.z version, and several
// versions of one tool may be registered side by side. A call names
// Toolkit.Tool (the highest version), Toolkit.Tool@x (exactly x.0.0) or
// Toolkit.Tool@x.y.z (exactly that one).
//
// # Errors
//
// A tool function reports a failure the model can act on by returning a
// [*ToolError]; any other error becomes a tool error whose message is the
// error's text, and a panic becomes a tool error with a fixed message while
// the stack goes to the logger. Failures before the function runs (unknown
// tool, invalid input, missing secrets) are [*Error] values whose [Code]
// selects the HTTP status.
//
// # Call context
//
// The context.Context a tool function receives carries the call's metadata,
// read with [CallID], [TraceID], [UserID], [Secret] and [AuthorizationToken].
// A tool sees only the secrets and authorization tokens it declared in
// [Tool.Requirements]. The context is cancelled when the client goes away.
//
// # Asking the caller
//
// A tool function can ask something in the middle of a call: the user, with
// a form reflected from a struct ([Elicit]), the client's model ([Sample]),
// the client's roots ([ListRoots]), or several at once ([AskAll]). Over MCP
// the question goes to the client; over OTC and the REST view, which have
// no round trip, the call ends with a tool error naming the questions, and
// the caller calls again with the answers in the call context's
// input_responses ([CallContext.InputResponses]). Either way the function
// may run more than once for one call, so it asks before it acts. A caller
// that cannot answer makes these functions return an error wrapping
// [ErrInputUnsupported], and the tool may go on without the answer.
//
// # Authentication
//
// [HandlerOptions.Authenticator] makes the server require credentials:
// package auth has [github.com/otcgo/otc/auth.NewAPIKeyAuth] for the OXP-API-Key
// header, [github.com/otcgo/otc/auth.NewJWTAuth] for HS256 bearer tokens,
// [github.com/otcgo/otc/auth.NewCapabilityAuth] for capability tokens and
// [github.com/otcgo/otc/auth.AnyOf] to accept several; package oauth makes the server
// an OAuth resource server; an [AuthenticatorFunc] plugs in your own. A tool reads who called with [CallerIdentity]. A tool's
// [Policy] says who may call it (with which OAuth scopes, or which
// capability token), and each caller's catalogs list only the tools it may
// call ([Registry.Visibility], [RegistryOptions.ListEveryTool]).
//
// # Shutting down
//
// mount.Serve (package github.com/otcgo/otc/mount) runs an http.Server until a context ends (a signal, with
// signal.NotifyContext), then marks the handlers not ready so that GET
// /health answers 503, closes the listener and lets the calls in flight
// finish within a grace period.
//
// # Other wire formats
//
// [Registry.Call] is the protocol-neutral call path: resolve the tool, check
// its requirements, validate the input, run the function and time it. The
// OTC [Handler] is one adapter over it. The sibling packages are others,
// built on this package's exported API: github.com/otcgo/otc/rest serves
// the same tools as a plain REST API, github.com/otcgo/otc/mcp over the
// Model Context Protocol, and github.com/otcgo/otc/registryview lists
// them as a tool registry does.
package otc

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"time"
)

// Tool describes a tool to [Register]. ID, Version and Description are
// required; the other fields have useful zero values.
type Tool struct {
	// ID is "Toolkit.Tool": two parts of letters, digits and underscores
	// joined by a dot, without a version.
	ID string

	// Version is "x.y.z" with non-negative integers and no leading zeros,
	// no "v" prefix, no pre-release and no build metadata.
	Version string

	// Name is the name a model sees, matching ^[A-Za-z0-9_-]{1,64}$. Empty
	// means ID with the dot replaced by an underscore ("Toolkit_Tool").
	// All versions of a tool share one name, and no two tools may share one.
	Name string

	// Description tells a model when and how to use the tool. Required.
	Description string

	// Title is the tool's name for people ("Refund an order"), which
	// clients show in their lists and confirmation prompts; a model goes
	// by Name and Description. Empty means none, and clients show Name.
	// When set it must be one line of text, not blank.
	Title string

	// Annotations are hints about what the tool does to the world
	// (read-only, destructive, idempotent, open world), which MCP clients
	// act on: see [ToolAnnotations]. Nil means none, and clients assume
	// the worst of each.
	Annotations *ToolAnnotations

	// Icons are images a client may show beside the tool (see [Icon]).
	// Nil means none.
	Icons []Icon

	// Meta is free metadata that MCP lists as the tool's "_meta", for
	// clients and gateways that look for it. Each key follows MCP's
	// rules: an optional prefix of dot-separated labels and a slash, in
	// reverse DNS ("com.example/owner"), then a name of letters, digits,
	// hyphens, underscores and dots. Prefixes MCP reserves (those naming
	// modelcontextprotocol or mcp, such as "io.modelcontextprotocol/") and
	// this library's io.github.otcgo/ are refused, as is a value
	// encoding/json cannot encode. Nil means none. Register encodes it
	// once: changing the map later changes nothing.
	Meta map[string]any

	// OutputDescription, when set, becomes the description of the
	// reflected output schema ("The sum of the two numbers."). It is
	// ignored when OutputSchema is set or the tool returns [NoOutput].
	OutputDescription string

	// InputSchema, when set, replaces the schema reflected from the input
	// type. It must be a JSON Schema of an object whose top-level
	// properties all carry a description; Register checks it and compiles
	// it. The function's input type must still be able to decode every
	// document the schema accepts: a struct, a map, json.RawMessage or any.
	//
	// The schema may share definitions as JSON Schema 2020-12 does:
	// "$defs" (or "definitions"), "$anchor", and local "$ref"s of the forms
	// "#", "#/$defs/name" (a JSON Pointer to any subschema) and "#anchor";
	// "$schema", if present, must name 2020-12. Because the OTC catalog
	// carries inline schemas only, Register replaces each reference by the
	// schema it points to and leaves those keywords out; the catalog, the
	// parameter checks and the validator use that inlined copy, and
	// [ToolDefinition.FullInputSchema] keeps the original. What has no
	// inline form is refused: a recursive reference, a remote one, "$id",
	// and dynamic or recursive references.
	InputSchema json.RawMessage

	// OutputSchema, when set, replaces the schema reflected from the output
	// type. The JSON literal null declares that the tool returns nothing.
	// It may use definitions and local references as InputSchema does;
	// the catalog carries the inlined copy and
	// [ToolDefinition.FullOutputSchema] the original.
	OutputSchema json.RawMessage

	// Requirements lists the secrets, authorization tokens and user id the
	// tool needs from the caller. Nil means none.
	Requirements *Requirements

	// Policy restricts who may call the tool: through which protocols,
	// with which OAuth scopes, and with which capability token. Nil means
	// anyone the handler lets in, through any protocol.
	Policy *Policy

	// Timeout bounds each run of the function. Its context gets the
	// deadline, and a call still running at the deadline is answered at
	// once with a tool error whose can_retry is true; a function that
	// ignores its context runs on, unanswered, holding its place in
	// MaxConcurrent until it returns. Zero means the registry's
	// DefaultTimeout; a negative value means no limit. Neither travels in
	// the tool definition.
	Timeout time.Duration

	// MaxConcurrent caps the calls of this tool version running at once.
	// A call over the cap is answered at once, without running, with a
	// tool error whose can_retry is true and whose retry_after_ms is the
	// registry's BusyRetryAfter, so that clients back off. Zero means the
	// registry's DefaultMaxConcurrent; a negative value means no limit.
	MaxConcurrent int

	// Tasks says whether a call of the tool may run as a task, which the
	// client polls for its result instead of waiting on the connection
	// (MCP's tasks extension): see [TaskSupport]. The zero value,
	// TasksForbidden, keeps every call synchronous. Timeout still bounds
	// a call that runs as a task.
	Tasks TaskSupport

	// AskBeforeTask, for a tool whose calls may run as tasks, lets its
	// function ask its first questions before the call becomes a task,
	// where the wire format can: over MCP 2026-07-28 the function runs for
	// up to this long as a plain call, and a question it asks then is
	// answered through input_required rounds of tools/call, as for any
	// call; the task is created when the window ends with the function
	// still running, or when the function returns without a question
	// open, and the questions it asks after that go through the task.
	// Zero creates the task before the function runs, and every question
	// goes through the task. A function may run once per round, so it
	// should ask before it acts.
	AskBeforeTask time.Duration
}

// NoOutput is the output type of a tool that returns nothing: its
// output_schema is null and successful results carry no value. It is an
// alias of struct{}, so a function returning struct{} means the same.
type NoOutput = struct{}

// ToolDefinition is one entry of the tool catalog, as served by GET /tools.
type ToolDefinition struct {
	// ID is "Toolkit.Tool@x.y.z".
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Version     string `json:"version"`
	// InputSchema wraps the JSON Schema of the input object.
	InputSchema InputSchema `json:"input_schema"`
	// OutputSchema is a JSON Schema, {} for any value, or null (a nil
	// RawMessage encodes as null) when the tool returns nothing.
	OutputSchema json.RawMessage `json:"output_schema"`
	// Requirements is nil when the tool needs nothing from the caller.
	Requirements *Requirements `json:"requirements,omitempty"`
	// Policy is the tool's [Policy], nil when it has none. It is not part
	// of the OTC catalog entry; the registry view serves it.
	Policy *Policy `json:"-"`
	// Content is true when the tool returns [Content]: its value is then
	// content blocks for a model, which a wire format that has them (MCP)
	// sends as they are. It is not part of the OTC catalog entry.
	Content bool `json:"-"`
	// FullInputSchema is the hand-written input schema as given
	// (compacted), with its $schema, $defs and references, for wire
	// formats that carry JSON Schema 2020-12 in full (MCP lists it). It is
	// nil when the schema was reflected or had nothing to inline, in which
	// case it equals InputSchema.Parameters. It is not part of the OTC
	// catalog entry.
	FullInputSchema json.RawMessage `json:"-"`
	// FullOutputSchema is to OutputSchema what FullInputSchema is to
	// InputSchema.Parameters: the hand-written output schema as given,
	// or nil when OutputSchema is all there is.
	FullOutputSchema json.RawMessage `json:"-"`
	// Title, Annotations and Icons are the tool's ([Tool.Title],
	// [Tool.Annotations], [Tool.Icons]): empty, nil (also for annotations
	// that state no hint) and nil when it has none. MCP lists them; the
	// REST view's definition and the registry view's entries carry them
	// too. They are not part of the OTC catalog entry, whose schema allows
	// no other members.
	Title       string           `json:"-"`
	Annotations *ToolAnnotations `json:"-"`
	Icons       []Icon           `json:"-"`
	// Meta is [Tool.Meta] encoded as a JSON object (keys sorted), or nil.
	// Only MCP lists it, as the tool's "_meta". It is not part of the OTC
	// catalog entry.
	Meta json.RawMessage `json:"-"`
	// Tasks is [Tool.Tasks]: whether a call may, or must, run as a task.
	// It is not part of the OTC catalog entry.
	Tasks TaskSupport `json:"-"`
	// AskBeforeTask is [Tool.AskBeforeTask]. It is not part of the OTC
	// catalog entry.
	AskBeforeTask time.Duration `json:"-"`
}

// InputSchema is the input_schema object of a [ToolDefinition].
type InputSchema struct {
	// Parameters is the inline JSON Schema of the input object.
	Parameters json.RawMessage `json:"parameters"`
}

// Requirements is what a tool needs from its caller before it can run: the
// "requirements" of the protocol's tool definition. The server checks them
// before validating the input.
type Requirements struct {
	// Authorization lists the providers whose token the caller must send.
	Authorization []AuthorizationRequirement `json:"authorization,omitempty"`
	// Secrets lists the secrets the caller must send.
	Secrets []SecretRequirement `json:"secrets,omitempty"`
	// UserID, when true, requires the caller to say which user it acts for.
	UserID bool `json:"user_id,omitempty"`
}

// AuthorizationRequirement names an authorization provider whose token a
// tool needs, read in the function with [AuthorizationToken].
type AuthorizationRequirement struct {
	// ID names the provider ("google").
	ID string `json:"id"`
	// OAuth2 optionally lists the OAuth 2.0 scopes the token must carry.
	OAuth2 *OAuth2Requirement `json:"oauth2,omitempty"`
}

// OAuth2Requirement is the OAuth 2.0 detail of an [AuthorizationRequirement].
type OAuth2Requirement struct {
	Scopes []string `json:"scopes,omitempty"`
}

// SecretRequirement names a secret a tool needs, read in the function with
// [Secret].
type SecretRequirement struct {
	ID string `json:"id"`
}

// AuthorizationChallenge tells the caller where a user goes to grant a
// missing authorization. See [RegistryOptions.AuthorizationChallenge].
type AuthorizationChallenge struct {
	ID       string `json:"id"`
	URL      string `json:"url"`
	CheckURL string `json:"check_url,omitempty"`
}

// MissingRequirements is the missing_requirements object of a server error:
// what the caller must add to its call context before the tool can run. It
// names secrets and providers by id and never carries a value.
type MissingRequirements struct {
	// Authorization holds a challenge for each missing authorization for
	// which [RegistryOptions.AuthorizationChallenge] returned one.
	Authorization []AuthorizationChallenge `json:"authorization,omitempty"`
	// Secrets lists the missing secrets. The OXP OpenAPI file does not name
	// this field; it is an addition that lets a client act without parsing
	// the message.
	Secrets []SecretRequirement `json:"secrets,omitempty"`
	// UserID is true when the tool needs a user id and none was sent.
	UserID bool `json:"user_id,omitempty"`
}

// ToolSecret is a secret a caller sends in the call context. Its String,
// GoString and LogValue methods hide the value, so printing or logging one
// does not leak it.
type ToolSecret struct {
	ID    string `json:"id"`
	Value string `json:"value"`
}

// String hides the value.
func (s ToolSecret) String() string { return fmt.Sprintf("{%s [redacted]}", s.ID) }

// GoString hides the value.
func (s ToolSecret) GoString() string {
	return fmt.Sprintf("otc.ToolSecret{ID:%q, Value:\"[redacted]\"}", s.ID)
}

// LogValue hides the value.
func (s ToolSecret) LogValue() slog.Value {
	return slog.GroupValue(slog.String("id", s.ID), slog.String("value", "[redacted]"))
}

// ToolAuthorization is an authorization token a caller sends in the call
// context for one provider. Like [ToolSecret], it hides its token when
// printed or logged.
type ToolAuthorization struct {
	ID    string `json:"id"`
	Token string `json:"token"`
}

// String hides the token.
func (a ToolAuthorization) String() string { return fmt.Sprintf("{%s [redacted]}", a.ID) }

// GoString hides the token.
func (a ToolAuthorization) GoString() string {
	return fmt.Sprintf("otc.ToolAuthorization{ID:%q, Token:\"[redacted]\"}", a.ID)
}

// LogValue hides the token.
func (a ToolAuthorization) LogValue() slog.Value {
	return slog.GroupValue(slog.String("id", a.ID), slog.String("token", "[redacted]"))
}

// CallContext is the context object of a call: what the caller knows about
// the user and what it holds on the user's behalf.
type CallContext struct {
	Authorization []ToolAuthorization `json:"authorization,omitempty"`
	Secrets       []ToolSecret        `json:"secrets,omitempty"`
	UserID        string              `json:"user_id,omitempty"`
	// InputResponses are the caller's answers to the questions a tool
	// asked in an earlier try of the call, by the keys the tool error of
	// that try named (see [Ask]): over OTC and the REST view, which have
	// no round trip, a tool that asks ends with a tool error naming its
	// questions, and the caller calls again with every answer here. Each
	// value is the result MCP defines for the question's method, such as
	// {"action": "accept", "content": {...}} for an elicitation.
	InputResponses map[string]json.RawMessage `json:"input_responses,omitempty"`
}

// LogValue logs the call context with the ids of its secrets and tokens
// and never their values, which slog's JSON handler would otherwise
// encode.
func (c CallContext) LogValue() slog.Value {
	ids := func(n int, id func(int) string) string {
		var b strings.Builder
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(id(i))
		}
		return b.String()
	}
	return slog.GroupValue(
		slog.String("user_id", c.UserID),
		slog.String("secrets", ids(len(c.Secrets), func(i int) string { return c.Secrets[i].ID })),
		slog.String("authorization", ids(len(c.Authorization), func(i int) string { return c.Authorization[i].ID })))
}
