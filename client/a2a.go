package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/a2awire"
	"github.com/otcgo/otc/internal/modeltext"
)

// Bounds of an A2A call.
const (
	// a2aMaxRounds bounds the questions one call's task may ask.
	a2aMaxRounds = 16
	// a2aFirstPoll and a2aMaxPoll are the first and the longest wait
	// between two reads of a task that is still working.
	a2aFirstPoll, a2aMaxPoll = 50 * time.Millisecond, 2 * time.Second
)

// a2aWire is the transport of an A2A agent: its card lists the skills,
// each a tool, and its JSON-RPC binding calls them.
type a2aWire struct {
	c *Client

	mu   sync.Mutex
	card *a2aAgent // the card read last
}

// a2aAgent is what the client reads of an Agent Card, for either version.
type a2aAgent struct {
	endpoint string // the JSON-RPC URL, on the client's origin
	// elsewhere, when endpoint is "", says why: the card names its
	// interface on another origin. The skills are still listed.
	elsewhere error
	ver       *a2awire.Version // the version the agent speaks
	tools     []otc.ToolDefinition
	typed     map[string]bool // the skills called with a data part {"tool", "input"}
	dataOnly  map[string]bool // the skills whose input modes hold no text: called with their input as a data part
	streams   bool            // the card says the agent streams (SendStreamingMessage)
}

// a2aCard is an Agent Card, 1.0 and 0.3 fields together.
type a2aCard struct {
	SupportedInterfaces []struct {
		URL             string `json:"url"`
		ProtocolBinding string `json:"protocolBinding"`
	} `json:"supportedInterfaces"`
	URL                  string `json:"url"`                // 0.3
	PreferredTransport   string `json:"preferredTransport"` // 0.3
	ProtocolVersion      string `json:"protocolVersion"`    // 0.3
	AdditionalInterfaces []struct {
		URL       string `json:"url"`
		Transport string `json:"transport"`
	} `json:"additionalInterfaces"` // 0.3
	DefaultInputModes []string `json:"defaultInputModes"`
	Skills            []struct {
		ID          string   `json:"id"`
		Name        string   `json:"name"`
		Description string   `json:"description"`
		Examples    []string `json:"examples"`
		InputModes  []string `json:"inputModes"`
	} `json:"skills"`
	Capabilities struct {
		Streaming  bool `json:"streaming"`
		Extensions []struct {
			URI    string `json:"uri"`
			Params struct {
				Skills map[string]struct {
					InputSchema  json.RawMessage `json:"inputSchema"`
					OutputSchema json.RawMessage `json:"outputSchema"`
				} `json:"skills"`
			} `json:"params"`
		} `json:"extensions"`
	} `json:"capabilities"`
}

// textSkillSchema is the input of a skill the agent publishes no schema
// for: the text to send, and data to send beside it. (An object without
// "text" is sent whole, as the message's data part.)
var textSkillSchema = json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","description":"The message to send to the agent."},"data":{"type":"object","description":"Structured data sent beside the text."}},"required":["text"]}`)

// dataSkillSchema is the input of a skill that takes no text (its input
// modes hold none) and whose agent publishes no schema: any object, sent
// as the message's data part.
var dataSkillSchema = json.RawMessage(`{"type":"object","description":"The data to send to the agent, as its message's data part: the agent's card says it takes no text and gives no schema, so follow the skill's description.","additionalProperties":true}`)

// takesText reports whether input modes (MIME types; none means the
// agent's default, text) let a skill take text.
func takesText(modes []string) bool {
	if len(modes) == 0 {
		return true
	}
	for _, m := range modes {
		if m = strings.ToLower(strings.TrimSpace(m)); m == "text" || strings.HasPrefix(m, "text/") || m == "*/*" {
			return true
		}
	}
	return false
}

// agent reads the Agent Card, below the agent's URL.
func (w *a2aWire) agent(ctx context.Context, k *call) (*a2aAgent, error) {
	u := w.c.base + a2awire.CardPath
	if strings.HasSuffix(w.c.base, a2awire.CardPath) {
		u = w.c.base
	}
	resp, err := w.c.sendWith(ctx, http.MethodGet, u, nil, k.header(), nil)
	if err != nil {
		return nil, err
	}
	var card a2aCard
	if resp.status != http.StatusOK {
		return nil, resp.rpcFailure()
	}
	if err := json.Unmarshal(resp.body, &card); err != nil || card.Skills == nil {
		if err == nil {
			err = errors.New(`not an A2A Agent Card: no "skills"`)
		}
		return nil, resp.unexpected(err)
	}
	a := &a2aAgent{typed: map[string]bool{}, dataOnly: map[string]bool{}, ver: a2awire.Version10, streams: card.Capabilities.Streaming}
	base := strings.TrimSuffix(w.c.base, a2awire.CardPath)
	// The JSON-RPC interface the card names, on the origin the client was
	// given: credentials go nowhere else.
	var named []string
	for _, i := range card.SupportedInterfaces {
		if strings.EqualFold(i.ProtocolBinding, "JSONRPC") && i.URL != "" {
			named = append(named, i.URL)
		}
	}
	if len(card.SupportedInterfaces) == 0 && card.URL != "" {
		a.ver = a2awire.Version03
		if card.PreferredTransport == "" || strings.EqualFold(card.PreferredTransport, "JSONRPC") {
			named = append(named, card.URL)
		}
		for _, i := range card.AdditionalInterfaces {
			if strings.EqualFold(i.Transport, "JSONRPC") && i.URL != "" {
				named = append(named, i.URL)
			}
		}
	}
	var elsewhere error
	for _, n := range named {
		ep, err := CheckOrigin(base, n, "the JSON-RPC interface its Agent Card names")
		if err == nil {
			a.endpoint = ep
			break
		}
		if elsewhere == nil {
			elsewhere = err
		}
	}
	if a.endpoint == "" {
		if elsewhere == nil {
			a.endpoint = base
		}
		a.elsewhere = elsewhere
	}
	for _, sk := range card.Skills {
		name := sk.Name
		if !modeltext.IsFunctionName(name) && sk.ID != "" {
			name = sk.ID
		}
		d := otc.ToolDefinition{ID: name, Name: name, Description: sk.Description}
		if sk.ID != "" && sk.ID != name {
			// The card's id of the skill, for a person reading the
			// catalog beside the agent's own documents.
			d.Meta, _ = json.Marshal(map[string]string{a2awire.MetaSkillID: sk.ID})
		}
		for _, ext := range card.Capabilities.Extensions {
			if sch, ok := ext.Params.Skills[sk.ID]; ok && ext.URI == a2awire.ExtensionSkillSchemas && len(sch.InputSchema) > 0 {
				d.InputSchema.Parameters, d.OutputSchema = sch.InputSchema, sch.OutputSchema
			}
		}
		if d.InputSchema.Parameters == nil && len(sk.Examples) > 0 {
			d.InputSchema.Parameters = exampleSchema(sk.Examples[0])
		}
		modes := sk.InputModes
		if len(modes) == 0 {
			modes = card.DefaultInputModes
		}
		switch {
		case d.InputSchema.Parameters != nil:
			a.typed[name] = true
		case takesText(modes):
			d.InputSchema.Parameters = textSkillSchema
		default:
			a.dataOnly[name] = true
			d.InputSchema.Parameters = dataSkillSchema
		}
		a.tools = append(a.tools, d)
	}
	w.mu.Lock()
	w.card = a
	w.mu.Unlock()
	return a, nil
}

// current is the card read last, or a fresh one.
func (w *a2aWire) current(ctx context.Context, k *call) (*a2aAgent, error) {
	w.mu.Lock()
	a := w.card
	w.mu.Unlock()
	if a != nil {
		return a, nil
	}
	return w.agent(ctx, k)
}

// exampleSchema is a schema whose properties are those of a skill's
// example call {"tool", "input"}, typed as the example's values are; nil
// when the example is not one.
func exampleSchema(example string) json.RawMessage {
	var ex struct {
		Tool  string         `json:"tool"`
		Input map[string]any `json:"input"`
	}
	if json.Unmarshal([]byte(example), &ex) != nil || ex.Input == nil {
		return nil
	}
	props := map[string]any{}
	for k, v := range ex.Input {
		t := "string"
		switch v.(type) {
		case float64:
			t = "number"
		case bool:
			t = "boolean"
		case map[string]any:
			t = "object"
		case []any:
			t = "array"
		}
		props[k] = map[string]any{"type": t}
	}
	b, _ := json.Marshal(map[string]any{"type": "object", "properties": props})
	return b
}

func (w *a2aWire) list(ctx context.Context) ([]otc.ToolDefinition, error) {
	a, err := w.agent(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("otc client: list tools: %w", err)
	}
	return a.tools, nil
}

func (w *a2aWire) health(ctx context.Context) error {
	a, err := w.agent(ctx, nil)
	if err != nil {
		return fmt.Errorf("otc client: health: %w", err)
	}
	if a.elsewhere != nil {
		return fmt.Errorf("otc client: health: the agent cannot be called: %w", a.elsewhere)
	}
	return nil
}

func (w *a2aWire) close() error { return nil }
