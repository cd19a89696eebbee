package a2a

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/internal/searchargs"
	"github.com/otcgo/otc/search"
)

// SearchSkill is the id and name of the skill that searches the agent's
// other skills, when Options.Search is set.
const SearchSkill = "search_tools"

// The search skill's schemas, as the card's schema extension gives them.
var (
	searchInputSchema  = searchargs.SearchSchema("skills", search.MaxLimit)
	searchOutputSchema = json.RawMessage(`{"type":"object","properties":{"skills":{"type":"array","items":{"type":"object","properties":{` +
		`"id":{"type":"string"},"name":{"type":"string"},"description":{"type":"string"},"inputSchema":{"type":"object"},"outputSchema":{}},` +
		`"required":["id","name","description","inputSchema"]}}},"required":["skills"]}`)
)

// searchSkill is the card's entry of the search skill.
func searchSkill() skill {
	return skill{
		ID: SearchSkill, Name: SearchSkill, Tags: []string{"search"},
		Description: "Finds the skills of this agent that can do what you describe, best first, each with its id, name, description and JSON Schemas; call one with a data part {\"tool\": NAME, \"input\": {...}}.",
		Examples:    []string{`{"tool":"` + SearchSkill + `","input":{"query":"read a file"}}`},
		InputModes:  []string{"application/json"}, OutputModes: outputModes,
	}
}

// foundSkill is a skill the search skill answers.
type foundSkill struct {
	ID           string          `json:"id"`
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
}

// searchReply answers a call of the search skill with input (raw JSON,
// nil for none), as any call that ends within its message is answered:
// {"skills": [...]}, the skills the query finds among those the caller may
// call over A2A.
func (h *Handler) searchReply(r *http.Request, d dialect, messageID, contextID string, input []byte) (*message, *rpcError, int) {
	invalid := func(param, problem string) (*message, *rpcError, int) {
		return h.reply(d, messageID, contextID, otc.CallResult{}, &otc.Error{Code: otc.CodeInvalidInput,
			Message: "The search's input is invalid", ParameterErrors: map[string]string{param: problem}})
	}
	query, limit, p := searchargs.Search(input, search.MaxLimit)
	if p != nil {
		return invalid(p.Param, p.Text)
	}
	ctx := r.Context()
	if err := search.Admit(ctx, h.reg, r); err != nil {
		return h.reply(d, messageID, contextID, otc.CallResult{}, err)
	}
	found, err := search.Tools(ctx, h.reg, query, &search.Options{Limit: limit, Protocol: otc.ProtocolA2A, Request: r})
	if err != nil {
		if e, ok := errors.AsType[*otc.Error](err); ok && e.ParameterErrors["q"] != "" {
			return invalid("query", e.ParameterErrors["q"])
		}
		return h.reply(d, messageID, contextID, otc.CallResult{}, err)
	}
	out := struct {
		Skills []foundSkill `json:"skills"`
	}{Skills: make([]foundSkill, 0, len(found))}
	for _, f := range found {
		t := f.Tool
		out.Skills = append(out.Skills, foundSkill{ID: t.ID, Name: t.Name, Description: t.Description,
			InputSchema: t.InputSchema.Parameters, OutputSchema: t.OutputSchema})
	}
	v, err := json.Marshal(out)
	if err != nil {
		return h.reply(d, messageID, contextID, otc.CallResult{}, err)
	}
	return h.reply(d, messageID, contextID, otc.CallResult{Value: v}, nil)
}
