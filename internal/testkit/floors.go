package testkit

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/xeipuuv/gojsonschema"
)

// The floors are the hand-written net/http handlers that the benchmarks
// put beside the library's handlers: each answers the benchmark's call
// with the least work a careful server would do, so that the ratio shows
// what the library costs. Each floor stays beside the benchmark that
// times it, since the floors of different benchmarks do different work
// (how they read the body, which tool ids they accept, which headers they
// set) and the ratios stay comparable only while each keeps doing exactly
// what it does. What is here is what they share to the letter.

// FloorCall is the OTC call envelope as a hand-written server that
// validates the input declares it: the input is kept raw for the
// validator.
type FloorCall struct {
	Schema  string `json:"$schema"`
	Request struct {
		CallID string          `json:"call_id"`
		ToolID string          `json:"tool_id"`
		Input  json.RawMessage `json:"input"`
	} `json:"request"`
}

// FloorResult is the answer of a successful Calculator.Add call as a
// hand-written server declares it.
type FloorResult struct {
	Schema string `json:"$schema"`
	Result struct {
		CallID   string  `json:"call_id"`
		Duration float64 `json:"duration"`
		Success  bool    `json:"success"`
		Value    float64 `json:"value"`
	} `json:"result"`
}

// WriteFloorError answers with status and an OTC error body carrying msg.
func WriteFloorError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = fmt.Fprintf(w, `{"$schema":"otc://1.0","message":%q}`, msg)
}

// FloorInput is the input check of the validating floors: it validates
// input against schema (compiled once from Calculator.Add's input schema)
// and decodes it with encoding/json. On failure it answers 422 itself and
// returns false.
func FloorInput(w http.ResponseWriter, schema *gojsonschema.Schema, input json.RawMessage) (AddInput, bool) {
	res, err := schema.Validate(gojsonschema.NewBytesLoader(input))
	if err != nil || !res.Valid() {
		WriteFloorError(w, http.StatusUnprocessableEntity, "Some input parameters are invalid")
		return AddInput{}, false
	}
	var in AddInput
	if err := json.Unmarshal(input, &in); err != nil {
		WriteFloorError(w, http.StatusUnprocessableEntity, "Some input parameters are invalid")
		return in, false
	}
	return in, true
}

// FloorMCPRequest is a tools/call request as a hand-written MCP server
// declares it, its arguments read as an A.
type FloorMCPRequest[A any] struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name      string `json:"name"`
		Arguments A      `json:"arguments"`
	} `json:"params"`
}

// FloorMCPResponse is the answer of a successful Calculator_Add call over
// MCP as a hand-written server declares it: the sum as text and as
// structured content and, at protocol version 2026-07-28, the serverInfo
// _meta its servers should send and the resultType.
type FloorMCPResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  struct {
		Content           []FloorMCPText     `json:"content"`
		StructuredContent map[string]float64 `json:"structuredContent"`
		Meta              *FloorMCPMeta      `json:"_meta,omitempty"`
		ResultType        string             `json:"resultType,omitempty"`
	} `json:"result"`
}

// FloorMCPText is a text content block.
type FloorMCPText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// FloorMCPMeta is the _meta of a 2026-07-28 result.
type FloorMCPMeta struct {
	ServerInfo struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"io.modelcontextprotocol/serverInfo"`
}

// WriteFloorMCPResult answers request id with sum, as FloorMCPResponse
// has it (modern: at 2026-07-28).
func WriteFloorMCPResult(w http.ResponseWriter, id json.RawMessage, sum float64, modern bool) {
	res := FloorMCPResponse{JSONRPC: "2.0", ID: id}
	res.Result.Content = []FloorMCPText{{Type: "text", Text: strconv.FormatFloat(sum, 'g', -1, 64)}}
	res.Result.StructuredContent = map[string]float64{"result": sum}
	if modern {
		res.Result.Meta = &FloorMCPMeta{}
		res.Result.Meta.ServerInfo.Name, res.Result.Meta.ServerInfo.Version = "floor", "1.0.0"
		res.Result.ResultType = "complete"
	}
	WriteFloorJSON(w, res)
}

// WriteFloorJSON answers 200 with v as JSON, its length declared.
func WriteFloorJSON(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		WriteFloorError(w, http.StatusInternalServerError, "The result could not be encoded")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	_, _ = w.Write(b)
}
