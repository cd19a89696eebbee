package benchmarks

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tiktoken-go/tokenizer"

	"github.com/otcgo/otc/internal/testkit"
	"github.com/otcgo/otc/mcp"
)

// TestSearchModeTokens counts, with the tokenizers of OpenAI's models
// (o200k_base and cl100k_base), what a model is shown of the catalog of
// real servers' tools (search/testdata/wild-catalog.json.gz, 1,406 tools)
// over MCP: the tools/list of search mode (the search and call tools),
// against the whole catalog's tools/list, and what one search answers (5
// definitions) for each labelled request. Search mode must show at least
// 85% fewer tokens than the catalog.
func TestSearchModeTokens(t *testing.T) {
	reg := testkit.RealRegistry(t, testkit.RealCatalog(t), 1)
	h := mcp.NewHandler(reg, &mcp.Options{PageSize: -1, Search: &mcp.SearchMode{Threshold: 50}})
	calls := 0
	result := func(body string) json.RawMessage {
		req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", mcp.Version20251125)
		// Each request from a caller of its own: one caller's searches
		// are bounded (search.Admit), and these are many.
		calls++
		req.RemoteAddr = fmt.Sprintf("10.1.%d.%d:1234", calls/256, calls%256)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		var out struct {
			Result json.RawMessage `json:"result"`
		}
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out))
		require.NotEmpty(t, out.Result, "%s", body)
		return out.Result
	}
	tools := func(r json.RawMessage, key string) string {
		var m map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(r, &m))
		require.Contains(t, m, key)
		return string(m[key])
	}
	short := tools(result(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), "tools")
	full := tools(result(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"`+mcp.MetaFullCatalog+`":true}}}`), "tools")

	f, err := os.Open("../search/testdata/queries.txt")
	require.NoError(t, err)
	defer f.Close()
	var answers []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		q, _, _ := strings.Cut(strings.TrimPrefix(line, "!"), "|") // "!" marks a hard request
		args, _ := json.Marshal(map[string]any{"name": mcp.SearchToolName, "arguments": map[string]string{"query": strings.TrimSpace(q)}})
		answers = append(answers, tools(result(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":`+string(args)+`}`), "structuredContent"))
	}
	require.NotEmpty(t, answers)

	for _, enc := range []tokenizer.Encoding{tokenizer.O200kBase, tokenizer.Cl100kBase} {
		codec, err := tokenizer.Get(enc)
		require.NoError(t, err)
		count := func(s string) int {
			n, err := codec.Count(s)
			require.NoError(t, err)
			return n
		}
		s, c := count(short), count(full)
		var sum int
		for _, a := range answers {
			sum += count(a)
		}
		saved := 1 - float64(s)/float64(c)
		t.Logf("%s: tools/list in search mode %d tokens, the whole catalog %d (%.1f%% fewer); one search's answer %d on average over %d requests",
			enc, s, c, 100*saved, sum/len(answers), len(answers))
		require.GreaterOrEqual(t, saved, 0.85, string(enc))
	}
}
