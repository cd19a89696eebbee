package a2a

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/a2awire"
)

// agentCard is an AgentCard, with the fields this package fills in.
type agentCard struct {
	Name                string           `json:"name"`
	Description         string           `json:"description"`
	SupportedInterfaces []agentInterface `json:"supportedInterfaces"`
	Version             string           `json:"version"`
	Capabilities        struct {
		Streaming         bool             `json:"streaming"`
		PushNotifications bool             `json:"pushNotifications"`
		ExtendedAgentCard bool             `json:"extendedAgentCard"`
		Extensions        []agentExtension `json:"extensions,omitempty"`
	} `json:"capabilities"`
	SecuritySchemes      map[string]json.RawMessage `json:"securitySchemes,omitempty"`
	SecurityRequirements []securityRequirement      `json:"securityRequirements,omitempty"`
	DefaultInputModes    []string                   `json:"defaultInputModes"`
	DefaultOutputModes   []string                   `json:"defaultOutputModes"`
	Skills               []skill                    `json:"skills"`
}

// securityRequirement is a SecurityRequirement: the schemes it needs, each
// with the scopes it needs. The scopes are written as a JSON array, the
// form a2a-go (v2.3.1) reads and writes; @a2a-js/sdk reads it too (its
// StringList reader takes any value, keeping what it finds under "list",
// and the lists here are empty), while the proto's {"list": [...]} makes
// a2a-go refuse the whole card.
type securityRequirement struct {
	Schemes map[string][]string `json:"schemes"`
}

// ExtensionSkillSchemas is the URI of this package's A2A extension that
// gives each skill its tool's JSON Schemas, which A2A's AgentSkill has no
// field for. The card lists it in capabilities.extensions, its params
// {"skills": {SKILL_ID: {"inputSchema": {...}, "outputSchema": {...}}}},
// the schemas as the tool publishes them over OTC ("outputSchema" only
// for a tool that has one). A client that knows the extension builds a
// call's data part from the input schema; one that does not is unaffected.
// The extension is never required.
const ExtensionSkillSchemas = a2awire.ExtensionSkillSchemas

// agentExtension is an AgentExtension.
type agentExtension struct {
	URI         string `json:"uri"`
	Description string `json:"description"`
	Required    bool   `json:"required"`
	Params      any    `json:"params,omitempty"`
}

// skillSchemas are the params of ExtensionSkillSchemas.
type skillSchemas struct {
	Skills map[string]skillSchema `json:"skills"`
}

// skillSchema is one skill's schemas.
type skillSchema struct {
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
}

// agentInterface is an AgentInterface: where a binding is served.
type agentInterface struct {
	URL             string `json:"url"`
	ProtocolBinding string `json:"protocolBinding"`
	ProtocolVersion string `json:"protocolVersion"`
}

// skill is an AgentSkill: one tool version.
type skill struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Tags        []string `json:"tags"`
	Examples    []string `json:"examples"`
	InputModes  []string `json:"inputModes"`
	OutputModes []string `json:"outputModes"`
}

// The modes of the messages this agent reads and writes.
var (
	inputModes  = []string{"application/json", "text/plain"}
	outputModes = []string{"application/json", "text/plain"}
)

// Card returns a handler that serves the Agent Card at another place than
// below the handler: at the host's root, where RFC 8615 puts well-known
// URIs and clients look first. endpoint is where the handler itself is
// reached: an absolute URL, or a path ("/a2a") on the host the card was
// asked for.
//
//	mux.Handle("/.well-known/agent-card.json", h.Card("/a2a"))
func (h *Handler) Card(endpoint string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			writeRESTError(w, http.StatusMethodNotAllowed, "METHOD_NOT_FOUND", "The Agent Card is read with GET")
			return
		}
		base, fromHost := endpoint, false
		if strings.HasPrefix(endpoint, "/") {
			base, fromHost = requestOrigin(r)+endpoint, h.opts.URL == ""
		}
		h.writeCard(w, r, base, fromHost)
	})
}

// serveCard answers the Agent Card: the tools an anonymous caller may call
// over A2A, as skills.
func (h *Handler) serveCard(w http.ResponseWriter, r *http.Request) {
	h.writeCard(w, r, h.baseURL(r), h.opts.URL == "")
}

// writeCard writes the public Agent Card, naming base for both bindings.
// A card whose URLs come from the request's Host (fromHost: no
// Options.URL) says so to caches: one that a shared cache kept could
// send every client to a host another request named, and the clients'
// credentials with them.
func (h *Handler) writeCard(w http.ResponseWriter, r *http.Request, base string, fromHost bool) {
	b, err := json.Marshal(h.card(base, nil))
	if err != nil {
		h.logger.ErrorContext(r.Context(), "a2a: encoding the Agent Card failed", "error", err.Error())
		writeRESTError(w, http.StatusInternalServerError, "INTERNAL", "The Agent Card could not be written")
		return
	}
	hdr := w.Header()
	hdr.Set("Content-Type", "application/json")
	if fromHost {
		hdr.Set("Cache-Control", "private")
		hdr.Add("Vary", "Host")
	}
	_, _ = w.Write(b)
}

// card is the Agent Card naming base, listing the skills id may call (nil:
// an anonymous caller's, for the public card).
func (h *Handler) card(base string, id *otc.Identity) agentCard {
	card := agentCard{
		Name:               orDefault(h.opts.Name, "otc tool server"),
		Description:        orDefault(h.opts.Description, "A tool server: each skill is a tool, called with a message holding a data part {\"tool\": NAME, \"input\": {...}}."),
		Version:            orDefault(h.opts.Version, "1.0.0"),
		DefaultInputModes:  inputModes,
		DefaultOutputModes: outputModes,
	}
	card.Skills, card.Capabilities.Extensions = h.skills(id)
	card.Capabilities.Streaming = true
	card.Capabilities.PushNotifications = h.push != nil
	card.Capabilities.ExtendedAgentCard = h.auth != nil
	card.SecuritySchemes = h.schemes
	for _, name := range slices.Sorted(maps.Keys(h.schemes)) { // any one of them will do
		card.SecurityRequirements = append(card.SecurityRequirements, securityRequirement{Schemes: map[string][]string{name: {}}})
	}
	if h.opts.URL != "" {
		base = strings.TrimSuffix(h.opts.URL, "/")
	}
	card.SupportedInterfaces = []agentInterface{
		{URL: base, ProtocolBinding: "JSONRPC", ProtocolVersion: Version10},
		{URL: base, ProtocolBinding: "HTTP+JSON", ProtocolVersion: Version10},
	}
	return card
}

// securitySchemes are the card's security schemes: Options.SecuritySchemes,
// or those of the authenticator's methods (see methodsOf): an API key
// header for a method that takes API keys, an HTTP bearer scheme for one
// whose challenge asks for a bearer token (JWTs, capability tokens, the
// OAuth resource server, whose metadata URL the scheme's description
// names). They are found once, when the handler is made.
func securitySchemes(opts *Options, a otc.Authenticator) map[string]json.RawMessage {
	if opts.SecuritySchemes != nil {
		return opts.SecuritySchemes
	}
	out := map[string]json.RawMessage{}
	for _, m := range methodsOf(a) {
		if k, ok := m.(interface{ APIKeyHeader() string }); ok {
			out["apiKey"], _ = json.Marshal(map[string]any{"apiKeySecurityScheme": map[string]string{"location": "header", "name": k.APIKeyHeader()}})
			continue
		}
		c := otc.Challenge(m, &otc.Error{Code: otc.CodeUnauthenticated})
		scheme, params, _ := strings.Cut(c, " ")
		if !strings.EqualFold(scheme, "Bearer") {
			continue
		}
		s := map[string]string{"scheme": "Bearer", "bearerFormat": "JWT"}
		if _, meta, ok := strings.Cut(params, `resource_metadata="`); ok {
			if u, _, ok := strings.Cut(meta, `"`); ok {
				s["description"] = "An OAuth 2.0 access token; the protected resource's metadata (RFC 9728) is at " + u
			}
		}
		if _, seen := out["bearer"]; !seen || s["description"] != "" {
			out["bearer"], _ = json.Marshal(map[string]any{"httpAuthSecurityScheme": s})
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// methodsOf lists the methods an authenticator accepts credentials by:
// the methods of an auth.AnyOf (its Methods), the authenticator a wrapper
// guards (its Unwrap, as ratelimit.Guard's), or a itself.
func methodsOf(a otc.Authenticator) []otc.Authenticator {
	switch x := a.(type) {
	case nil:
		return nil
	case interface{ Methods() []otc.Authenticator }:
		var out []otc.Authenticator
		for _, m := range x.Methods() {
			out = append(out, methodsOf(m)...)
		}
		return out
	case interface{ Unwrap() otc.Authenticator }:
		return methodsOf(x.Unwrap())
	}
	return []otc.Authenticator{a}
}

// baseURL is the URL the handler is reached at: Options.URL, or the URL
// the card was asked for less its own path.
func (h *Handler) baseURL(r *http.Request) string {
	if h.opts.URL != "" {
		return strings.TrimSuffix(h.opts.URL, "/")
	}
	path := r.URL.Path
	if r.RequestURI != "" {
		path, _, _ = strings.Cut(r.RequestURI, "?")
	}
	return requestOrigin(r) + strings.TrimSuffix(path, cardPath)
}

// endpointURL is the URL of the handler, for a request whose path below
// the handler is suffix: Options.URL, or the request's URL less suffix.
func (h *Handler) endpointURL(r *http.Request, suffix string) string {
	if h.opts.URL != "" {
		return strings.TrimSuffix(h.opts.URL, "/")
	}
	path := r.URL.Path
	if r.RequestURI != "" {
		path, _, _ = strings.Cut(r.RequestURI, "?")
	}
	return requestOrigin(r) + strings.TrimSuffix(strings.TrimSuffix(path, suffix), "/")
}

// requestOrigin is the scheme and host a request was sent to.
func requestOrigin(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// skills returns the tools id may call over A2A, as skills, and the
// extension that gives their schemas (none without skills).
func (h *Handler) skills(id *otc.Identity) ([]skill, []agentExtension) {
	vis := h.reg.Visibility(id, otc.ProtocolA2A)
	out := []skill{}
	schemas := skillSchemas{Skills: map[string]skillSchema{}}
	for _, d := range h.reg.Tools() {
		if !vis.Sees(d.ID) {
			continue
		}
		toolkit, _, _ := strings.Cut(d.ID, ".")
		example, _ := json.Marshal(map[string]any{"tool": d.Name, "input": exampleInput(d.InputSchema.Parameters)})
		in := []string{"application/json"}
		if h.opts.TextTool != "" && (h.opts.TextTool == d.Name || h.opts.TextTool == d.ID || strings.HasPrefix(d.ID, h.opts.TextTool+"@")) {
			in = inputModes // a message of text calls it
		}
		out = append(out, skill{
			ID: d.ID, Name: d.Name, Description: d.Description, Tags: []string{toolkit},
			Examples: []string{string(example)}, InputModes: in, OutputModes: outputModes,
		})
		schemas.Skills[d.ID] = skillSchema{InputSchema: d.InputSchema.Parameters, OutputSchema: d.OutputSchema}
	}
	if len(out) == 0 {
		return out, nil
	}
	if h.opts.Search {
		out = append([]skill{searchSkill()}, out...)
		schemas.Skills[SearchSkill] = skillSchema{InputSchema: searchInputSchema, OutputSchema: searchOutputSchema}
	}
	return out, []agentExtension{{URI: ExtensionSkillSchemas, Params: schemas,
		Description: "Each skill's JSON Schemas, by skill id: the input a call's data part {\"tool\": NAME, \"input\": {...}} takes, and the value its result holds."}}
}

// onlySkill returns the name of the one tool the caller may call, when
// there is exactly one.
func (h *Handler) onlySkill(r *http.Request) (string, bool) {
	names := map[string]bool{}
	skills, _ := h.skills(otc.CallerIdentity(r.Context()))
	for _, s := range skills {
		if s.ID != SearchSkill || !h.opts.Search {
			names[s.Name] = true
		}
	}
	if len(names) != 1 {
		return "", false
	}
	for n := range names {
		return n, true
	}
	return "", false
}

// guide is the answer to message messageID, which calls no tool: a
// message naming the skills and the form of a call.
func (h *Handler) guide(r *http.Request, d dialect, messageID, contextID string) *message {
	var names []string
	example := ""
	skills, _ := h.skills(otc.CallerIdentity(r.Context()))
	for _, s := range skills {
		if !slices.Contains(names, s.Name) {
			names = append(names, s.Name)
		}
		if example == "" {
			example = s.Examples[0]
		}
	}
	text := "This agent runs tools. To call one, send a message with a data part {\"tool\": NAME, \"input\": {...}}, the input as the tool's skill describes it."
	if len(names) > 0 {
		text += " Its tools: " + strings.Join(names, ", ") + ". For example: " + example
	} else {
		text += " It has no tool you may call."
	}
	return d.message(&message{ReplyTo: messageID, ContextID: contextID, Role: d.roleAgent(), Parts: []part{d.textPart(text)}})
}

// exampleInput builds an input for a skill's example from a tool's
// schema: each required parameter with a value it takes (see
// exampleValue).
func exampleInput(schema json.RawMessage) map[string]any {
	var s struct {
		Properties map[string]map[string]any `json:"properties"`
		Required   []string                  `json:"required"`
	}
	_ = json.Unmarshal(schema, &s)
	out := map[string]any{}
	for _, name := range s.Required {
		out[name] = exampleValue(name, s.Properties[name])
	}
	return out
}

// exampleValue is a value parameter name, of schema p, takes: its first
// example, its default, its first allowed value, a bound, a value of its
// format; else its name for a string, the zero of another type.
func exampleValue(name string, p map[string]any) any {
	if e, ok := p["examples"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	if v, ok := p["default"]; ok {
		return v
	}
	if e, ok := p["enum"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	if v, ok := p["const"]; ok {
		return v
	}
	switch p["type"] {
	case "string":
		if f, ok := formatExamples[fmt.Sprint(p["format"])]; ok {
			return f
		}
		return name
	case "integer", "number":
		for _, bound := range []string{"minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"} {
			if m, ok := p[bound].(float64); ok {
				switch {
				case bound == "exclusiveMinimum" && p["type"] == "integer":
					return m + 1
				case bound == "exclusiveMaximum" && p["type"] == "integer":
					return m - 1
				}
				return m
			}
		}
		return 0
	case "boolean":
		return false
	case "array":
		return []any{}
	case "object":
		b, _ := json.Marshal(p)
		return exampleInput(b)
	}
	return nil
}

// formatExamples are values of the string formats tools use.
var formatExamples = map[string]string{
	"date-time": "2026-01-01T12:00:00Z", "date": "2026-01-01", "time": "12:00:00",
	"email": "ada@example.com", "uri": "https://example.com/", "uuid": "123e4567-e89b-42d3-a456-426614174000",
	"duration": "PT1H", "hostname": "example.com", "ipv4": "192.0.2.1", "ipv6": "2001:db8::1",
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
