package a2a

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/otcgo/otc"
	"github.com/otcgo/otc/search"
)

// SearchSkill is the id and name of the skill that searches the agent's
// other skills, when Options.Search is set.
const SearchSkill = "search_tools"

// defaultSearchLimit is how many skills the search skill answers when the
// call gives no limit.
const defaultSearchLimit = 5

// The search skill's schemas, as the card's schema extension gives them.
var (
	searchInputSchema = json.RawMessage(`{"type":"object","properties":{` +
		`"query":{"type":"string","description":"What you want done, in a few words, such as \"read a file\"."},` +
		`"limit":{"type":"integer","minimum":1,"maximum":` + fmt.Sprint(search.MaxLimit) + `,"description":"How many skills to answer at most; ` + fmt.Sprint(defaultSearchLimit) + ` when left out."}},` +
		`"required":["query"],"additionalProperties":false}`)
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
	var args struct {
		Query *string `json:"query"`
		Limit *int    `json:"limit"`
	}
	invalid := func(param, problem string) (*message, *rpcError, int) {
		return h.reply(d, messageID, contextID, otc.CallResult{}, &otc.Error{Code: otc.CodeInvalidInput,
			Message: "The search's input is invalid", ParameterErrors: map[string]string{param: problem}})
	}
	dec := json.NewDecoder(bytes.NewReader(input))
	dec.DisallowUnknownFields()
	if len(input) > 0 {
		if err := dec.Decode(&args); err != nil {
			return invalid("input", "must be {\"query\": WORDS, \"limit\": N}: "+err.Error())
		}
	}
	if args.Query == nil {
		return invalid("query", "is required: say what you want done, in a few words")
	}
	limit := defaultSearchLimit
	if args.Limit != nil {
		if limit = *args.Limit; limit < 1 || limit > search.MaxLimit {
			return invalid("limit", fmt.Sprintf("must be from 1 to %d", search.MaxLimit))
		}
	}
	ctx := r.Context()
	if err := search.Admit(ctx, h.reg, r); err != nil {
		return h.reply(d, messageID, contextID, otc.CallResult{}, err)
	}
	found, err := search.Tools(ctx, h.reg, *args.Query, &search.Options{Limit: limit, Protocol: otc.ProtocolA2A})
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
