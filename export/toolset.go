package export

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/mcpwire"
	"golang.org/x/mod/semver"
)

// Toolset prepares a catalog for a model: it declares the tools in the
// function-calling shapes of the model APIs, and maps the name a model
// chose back to the tool to call.
//
// A model sees one declaration per tool name. When a catalog lists several
// versions of a tool, which share its name, the Toolset keeps the highest,
// the one a call without a version would reach anyway.
type Toolset struct {
	defs   []otc.ToolDefinition // one per name, in catalog order
	byName map[string]int
}

// New builds a Toolset from the definitions [github.com/otcgo/otc/client.Client.ListTools]
// returned, checking what a remote server chose before a model reads it.
// Definitions without a name are named from their id
// ("Toolkit.Tool@1.0.0" becomes "Toolkit_Tool"), as servers do by default.
// It returns a [*CatalogError] naming the tool for:
//
//   - a name a model's function names cannot take (1 to 64 letters,
//     digits, underscores and hyphens): no line breaks, no spaces, nothing
//     that reads as an instruction;
//   - two tools of one name with different ids, unless
//     [Options].Prefer chooses one (two versions of one tool keep
//     the highest);
//   - an input schema larger or deeper than the options' bounds, or with a
//     $ref that leaves it, names nothing in it, or leads back to itself.
//
// A description longer than the options' bound is cut. opts may be nil.
//
// An agent that runs in the same process as its tools builds its Toolset
// from the registry's own catalog, New(reg.Tools(), nil), and runs
// the tool the model chose with [otc.Registry.Call] on the ID that
// [Toolset.Lookup] returns: the same declarations, no HTTP in between.
func New(defs []otc.ToolDefinition, opts *Options) (*Toolset, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.MaxDescriptionBytes <= 0 {
		o.MaxDescriptionBytes = DefaultMaxDescriptionBytes
	}
	if o.MaxSchemaBytes <= 0 {
		o.MaxSchemaBytes = DefaultMaxSchemaBytes
	}
	if o.MaxSchemaDepth <= 0 {
		o.MaxSchemaDepth = DefaultMaxSchemaDepth
	}
	ts := &Toolset{byName: make(map[string]int, len(defs))}
	for _, d := range defs {
		if d.Name == "" {
			key, _, _ := strings.Cut(d.ID, "@")
			d.Name = strings.ReplaceAll(key, ".", "_")
		}
		if e := checkName(d); e != nil {
			return nil, e
		}
		if e := checkSchema(d, o.MaxSchemaBytes, o.MaxSchemaDepth); e != nil {
			return nil, e
		}
		d.Description = cutDescription(d.Description, o.MaxDescriptionBytes)
		i, seen := ts.byName[d.Name]
		if !seen {
			ts.byName[d.Name] = len(ts.defs)
			ts.defs = append(ts.defs, d)
			continue
		}
		kept := ts.defs[i]
		switch {
		case toolKey(kept.ID) == toolKey(d.ID):
			if newer(d.Version, kept.Version) {
				ts.defs[i] = d
			}
		case o.Prefer != nil:
			ts.defs[i] = o.Prefer(kept, d)
		default:
			return nil, &CatalogError{ID: d.ID, Name: d.Name, Other: kept.ID,
				Problem: fmt.Sprintf("its name is also tool %q's, and a model could not tell the two apart; choose one with Options.Prefer, or have the server rename one", kept.ID)}
		}
	}
	return ts, nil
}

// toolKey is a tool id without its version: the tool, whatever version.
func toolKey(id string) string {
	key, _, _ := strings.Cut(id, "@")
	return key
}

// newer reports whether version a is higher than b. Versions that are not
// x.y.z compare as lower than those that are.
func newer(a, b string) bool {
	return semver.Compare("v"+a, "v"+b) > 0
}

// Definitions returns the definitions the Toolset declares, one per name.
func (ts *Toolset) Definitions() []otc.ToolDefinition { return slices.Clone(ts.defs) }

// Lookup returns the definition of the tool a model chose by name. Its ID,
// "Toolkit.Tool@x.y.z", is what [github.com/otcgo/otc/client.Client.Call] takes.
func (ts *Toolset) Lookup(name string) (otc.ToolDefinition, bool) {
	i, ok := ts.byName[name]
	if !ok {
		return otc.ToolDefinition{}, false
	}
	return ts.defs[i], true
}

// OpenAITool is a tool declaration of OpenAI's Chat Completions API:
// {"type": "function", "function": {"name", "description", "parameters"}}.
type OpenAITool struct {
	Type     string         `json:"type"`
	Function OpenAIFunction `json:"function"`
}

// OpenAIFunction is the function of an [OpenAITool].
type OpenAIFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	// Strict is true in the declarations of [Toolset.OpenAIStrict] whose
	// parameters were rewritten for OpenAI's strict mode.
	Strict bool `json:"strict,omitempty"`
}

// OpenAI returns the tools as OpenAI function declarations, ready to be
// encoded into a request's "tools" array.
func (ts *Toolset) OpenAI() []OpenAITool {
	out := make([]OpenAITool, len(ts.defs))
	for i, d := range ts.defs {
		out[i] = OpenAITool{
			Type: "function",
			Function: OpenAIFunction{
				Name:        d.Name,
				Description: d.Description,
				Parameters:  parameters(d),
			},
		}
	}
	return out
}

// OpenAIStrict returns the tools as OpenAI function declarations with
// "strict": true, their parameters rewritten by
// [OpenAIStrictParameters] so that the model's arguments always match
// them: every parameter listed in required, optional ones nullable (a
// server of this library takes null as "not given"), additionalProperties
// false throughout, and the keywords strict mode refuses removed (their
// constraints restated in the descriptions; the server still checks them).
// A tool whose schema strict mode cannot express (a map parameter, say)
// is declared as [Toolset.OpenAI] declares it, without strict.
func (ts *Toolset) OpenAIStrict() []OpenAITool {
	out := ts.OpenAI()
	for i := range out {
		if p, err := OpenAIStrictParameters(out[i].Function.Parameters); err == nil {
			out[i].Function.Parameters, out[i].Function.Strict = p, true
		}
	}
	return out
}

// GeminiFunction is a function declaration of Google's Gemini API:
// {"name", "description", "parameters"}, the parameters in Gemini's
// OpenAPI-based Schema.
type GeminiFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// Gemini returns the tools as Gemini function declarations, ready to be
// encoded into a request's tools[].functionDeclarations, their parameters
// rewritten by [GeminiParameters].
func (ts *Toolset) Gemini() []GeminiFunction {
	out := make([]GeminiFunction, len(ts.defs))
	for i, d := range ts.defs {
		p, err := GeminiParameters(parameters(d))
		if err != nil {
			p = parameters(d) // not an object schema: sent as it is
		}
		out[i] = GeminiFunction{Name: d.Name, Description: d.Description, Parameters: p}
	}
	return out
}

// MCP returns the tools as MCP Tool objects ({"name", "description",
// "inputSchema", "outputSchema"?}), as an MCP server of this library lists
// them, for an agent that hands tools to an MCP client library. A
// definition's title, annotations, icons and _meta are listed too when it
// has them, as those of [otc.Registry.Tools] may; an OTC catalog carries
// none.
func (ts *Toolset) MCP() []json.RawMessage {
	out := make([]json.RawMessage, len(ts.defs))
	for i, d := range ts.defs {
		out[i] = mcpwire.EncodeTool(d, true)
	}
	return out
}

// AnthropicTool is a tool declaration of Anthropic's Messages API:
// {"name", "description", "input_schema"}.
type AnthropicTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
	// DeferLoading keeps the tool out of the model's context until its
	// tool search finds it (see [Toolset.AnthropicDeferred]).
	DeferLoading bool `json:"defer_loading,omitempty"`
}

// AnthropicToolSearch is the tool search tool of Anthropic's Messages
// API, a tool the API runs itself: {"type", "name"}.
type AnthropicToolSearch struct {
	Type string `json:"type"`
	Name string `json:"name"`
}

// AnthropicBM25Search is Anthropic's tool search in natural language
// (BM25), which [Toolset.AnthropicDeferred] declares.
var AnthropicBM25Search = AnthropicToolSearch{Type: "tool_search_tool_bm25_20251119", Name: "tool_search_tool_bm25"}

// AnthropicDeferred returns the tools as a request's "tools" array for
// Anthropic's tool search, so that a large catalog stays out of the
// model's context: the tool search tool first, then every tool of the set
// with defer_loading, but those named in keep, which stay loaded (the
// few a conversation always needs). The model searches the catalog, and
// the tools it finds are loaded for it; a call of one is mapped back with
// [Toolset.Lookup] as any other. A name in keep that is no tool of the
// set is an error naming it.
func (ts *Toolset) AnthropicDeferred(keep ...string) ([]any, error) {
	kept := map[string]bool{}
	for _, name := range keep {
		if _, ok := ts.byName[name]; !ok {
			return nil, fmt.Errorf("export: %q is no tool of the set: it cannot be kept loaded", truncateName(name))
		}
		kept[name] = true
	}
	out := make([]any, 0, len(ts.defs)+1)
	out = append(out, AnthropicBM25Search)
	for _, t := range ts.Anthropic() {
		t.DeferLoading = !kept[t.Name]
		out = append(out, t)
	}
	return out, nil
}

// truncateName bounds a name echoed in an error.
func truncateName(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

// Anthropic returns the tools as Anthropic tool declarations, ready to be
// encoded into a request's "tools" array.
func (ts *Toolset) Anthropic() []AnthropicTool {
	out := make([]AnthropicTool, len(ts.defs))
	for i, d := range ts.defs {
		out[i] = AnthropicTool{
			Name:        d.Name,
			Description: d.Description,
			InputSchema: parameters(d),
		}
	}
	return out
}

// parameters is the input schema of d, never empty: both model APIs
// require an object schema even for a tool without input.
func parameters(d otc.ToolDefinition) json.RawMessage {
	if isJSONNull(d.InputSchema.Parameters) {
		return emptyParameters
	}
	return d.InputSchema.Parameters
}

// emptyParameters stands for a tool without input.
var emptyParameters = json.RawMessage(`{"type":"object","properties":{}}`)

// isJSONNull reports whether raw is absent or JSON null.
func isJSONNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || string(t) == "null"
}
