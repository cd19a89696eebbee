package mcpwire

import (
	"encoding/base64"
	"encoding/json"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/wire"
)

// MCP's objects beside tools, as the server writes them and the client
// reads them: resources and templates, prompts and their messages,
// contents, completion. Nothing else of the module spells their members.

// Resource is MCP's Resource object, or, with URITemplate set in place of
// URI, its ResourceTemplate.
type Resource struct {
	URI         string `json:"uri,omitempty"`
	URITemplate string `json:"uriTemplate,omitempty"`
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MIMEType    string `json:"mimeType,omitempty"`
	// Size is the size of the contents in bytes; zero when unknown.
	Size int64 `json:"size,omitempty"`
	// Annotations are the server's hints (audience, priority,
	// lastModified); nil for none.
	Annotations json.RawMessage `json:"annotations,omitempty"`
}

// ResourceAnnotations are a resource's annotations as they travel.
type ResourceAnnotations struct {
	Audience     []string `json:"audience,omitempty"`
	Priority     *float64 `json:"priority,omitempty"`
	LastModified string   `json:"lastModified,omitempty"` // RFC 3339
}

// Prompt is MCP's Prompt object.
type Prompt struct {
	Name        string           `json:"name"`
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description,omitempty"`
	Arguments   []PromptArgument `json:"arguments,omitempty"`
}

// PromptArgument is an argument of a [Prompt].
type PromptArgument struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// Role is who a prompt's message is from: "user" or "assistant".
type Role string

// The roles of a prompt's messages.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// PromptMessage is one message of a rendered prompt.
type PromptMessage struct {
	Role    Role             `json:"role"`
	Content otc.ContentBlock `json:"content"`
}

// PromptResult is a rendered prompt (GetPromptResult, without _meta).
type PromptResult struct {
	Description string          `json:"description,omitempty"`
	Messages    []PromptMessage `json:"messages"`
}

// TextContents and BlobContents are the two kinds of resource contents
// as the server writes them: text is written even when empty.
type (
	TextContents struct {
		URI      string `json:"uri"`
		MIMEType string `json:"mimeType,omitempty"`
		Text     string `json:"text"`
	}
	BlobContents struct {
		URI      string `json:"uri"`
		MIMEType string `json:"mimeType,omitempty"`
		Blob     []byte `json:"blob"`
	}
)

// ReadResult is what resources/read answers.
type ReadResult struct {
	Contents []otc.EmbeddedResource `json:"contents"`
}

// AppendOneContents appends the contents array of one text (member
// "text") or binary (member "blob", base64) contents, without reflection.
func AppendOneContents(b []byte, uri, mime string, text string, blob []byte, isBlob bool) []byte {
	b = wire.AppendString(append(b, `[{"uri":`...), uri)
	b = wire.AppendString(append(b, `,"mimeType":`...), mime)
	if isBlob {
		b = append(b, `,"blob":"`...)
		b = append(base64.StdEncoding.AppendEncode(b, blob), '"')
	} else {
		b = wire.AppendString(append(b, `,"text":`...), text)
	}
	return append(b, `}]`...)
}

// The kinds of a completion's reference.
const (
	RefPrompt   = "ref/prompt"
	RefResource = "ref/resource"
)

// CompletionRef is what completion/complete completes: a prompt by name
// (Type RefPrompt) or a resource template by its URI template (Type
// RefResource).
type CompletionRef struct {
	Type string `json:"type"`
	Name string `json:"name,omitempty"`
	URI  string `json:"uri,omitempty"`
}

// CompleteParams are completion/complete's params.
type CompleteParams struct {
	Ref      CompletionRef `json:"ref"`
	Argument struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	} `json:"argument"`
	Context *CompleteContext `json:"context,omitempty"`
}

// CompleteContext is what a completion is given of the arguments chosen.
type CompleteContext struct {
	Arguments map[string]string `json:"arguments,omitempty"`
}

// CompleteResult is completion/complete's result (without _meta).
type CompleteResult struct {
	Completion Completion `json:"completion"`
}

// Completion is the values a completion found.
type Completion struct {
	Values  []string `json:"values"`
	Total   int      `json:"total"`
	HasMore bool     `json:"hasMore"`
}

// Members of the list methods' results.
const (
	MemberTools             = "tools"
	MemberResources         = "resources"
	MemberResourceTemplates = "resourceTemplates"
	MemberPrompts           = "prompts"
	MemberSkills            = "skills"
	MemberNextCursor        = "nextCursor"
)

// ListResult reads a page of a list method: its entries (under member)
// and the next page's cursor.
func ListResult(raw []byte, member string) (entries json.RawMessage, next string, err error) {
	var page map[string]json.RawMessage
	if err := json.Unmarshal(raw, &page); err != nil {
		return nil, "", err
	}
	if c := page[MemberNextCursor]; c != nil {
		_ = json.Unmarshal(c, &next)
	}
	return page[member], next, nil
}

// AppendNextCursor appends a result's nextCursor member (with its leading
// comma).
func AppendNextCursor(b []byte, cursor string) []byte {
	return wire.AppendString(append(b, `,"`+MemberNextCursor+`":`...), cursor)
}

// Error codes of MCP beside JSON-RPC's (internal/jsonrpc).
const (
	// CodeResourceNotFound answers a read of a URI nothing is at, before
	// 2026-07-28 (which answers CodeInvalidParams with the URI in data).
	CodeResourceNotFound = -32002
	// CodeUnauthorized and CodeForbidden refuse a caller (otc's own, as
	// the HTTP statuses 401 and 403 would); CodeForbiddenModern is
	// CodeForbidden in 2026-07-28.
	CodeUnauthorized    = -32001
	CodeForbidden       = -32002
	CodeForbiddenModern = -32003
	// CodeServerBusy answers a request the server has no room for.
	CodeServerBusy = -32000
)

// ErrorData is what the data of an error about a resource or a prompt
// may hold: the URI nothing is at (SEP-2164), the parameters that are
// wrong.
type ErrorData struct {
	URI             string            `json:"uri,omitempty"`
	ParameterErrors map[string]string `json:"parameter_errors,omitempty"`
}

// AppendTextPrompt appends the members of a GetPromptResult of one user
// message of text, without reflection: the usual prompt.
func AppendTextPrompt(b []byte, text string) []byte {
	b = append(b, `{"messages":[{"role":"user","content":{"type":"text","text":`...)
	return append(wire.AppendString(b, text), `}}]}`...)
}

// Map is p as the map the client's requests are made of (to which it
// adds _meta).
func (p CompleteParams) Map() map[string]any {
	m := map[string]any{"ref": p.Ref, "argument": p.Argument}
	if p.Context != nil {
		m["context"] = p.Context
	}
	return m
}

// RefusalData is the data member of a refusal that carries a reason: the
// names are OAuth's (RFC 6750 §3), as MCP clients that sign in read them;
// RequiredScopes is the scope of the WWW-Authenticate challenge, as an
// array.
type RefusalData struct {
	Error          string   `json:"error"`
	Description    string   `json:"error_description,omitempty"`
	RequiredScopes []string `json:"required_scopes,omitempty"`
}

// URIParams are the params of resources/read, resources/subscribe and
// resources/unsubscribe, and of notifications/resources/updated.
type URIParams struct {
	URI string `json:"uri"`
}

// Map is p as the map the client's requests are made of.
func (p URIParams) Map() map[string]any { return map[string]any{"uri": p.URI} }

// AppendURIMember appends the member of URIParams (without braces), as a
// notification's params are written.
func AppendURIMember(b []byte, uri string) []byte {
	return wire.AppendString(append(b, `"uri":`...), uri)
}

// GetPromptParams are the params of prompts/get.
type GetPromptParams struct {
	Name      string            `json:"name"`
	Arguments map[string]string `json:"arguments,omitempty"`
}

// Map is p as the map the client's requests are made of (to which a
// 2026-07-28 round adds its answers).
func (p GetPromptParams) Map() map[string]any {
	m := map[string]any{"name": p.Name}
	if p.Arguments != nil {
		m["arguments"] = p.Arguments
	}
	return m
}

// AppendReadResult appends a resources/read result's members, without
// its closing brace: the contents array, encoded already.
func AppendReadResult(b []byte, contents []byte) []byte {
	return append(append(b, `{"contents":`...), contents...)
}

// MissingCapabilityData is the data of a refusal for a capability the
// client lacks: the capabilities, as the client declares them.
type MissingCapabilityData struct {
	RequiredCapabilities map[string]any `json:"requiredCapabilities"`
}

// UnsupportedVersionData is the data of a refusal of a protocol version.
type UnsupportedVersionData struct {
	Supported []string `json:"supported"`
	Requested string   `json:"requested"`
}

// BusyData is the data of a refusal of a caller who must wait.
type BusyData struct {
	RetryAfterMS int64 `json:"retry_after_ms"`
}

// ListenFilter is what a subscriptions/listen stream (2026-07-28) asks
// to be told, and, in notifications/subscriptions/acknowledged, what the
// server agreed to.
type ListenFilter struct {
	ToolsListChanged      bool     `json:"toolsListChanged,omitempty"`
	ResourcesListChanged  bool     `json:"resourcesListChanged,omitempty"`
	PromptsListChanged    bool     `json:"promptsListChanged,omitempty"`
	ResourceSubscriptions []string `json:"resourceSubscriptions,omitempty"`
}

// ListenParams are the params of subscriptions/listen, and of
// notifications/subscriptions/acknowledged.
type ListenParams struct {
	Notifications *ListenFilter `json:"notifications"`
}

// Map is p as the map the client's requests are made of.
func (p ListenParams) Map() map[string]any { return map[string]any{"notifications": p.Notifications} }

// Methods of subscriptions/listen.
const (
	MethodListen         = "subscriptions/listen"
	MethodListenAcked    = "notifications/subscriptions/acknowledged"
	MethodResourceUpdate = "notifications/resources/updated"
	// MetaSubscriptionID names, in a message's _meta, the listen stream
	// it belongs to (the listen request's id).
	MetaSubscriptionID = "io.modelcontextprotocol/subscriptionId"
)
